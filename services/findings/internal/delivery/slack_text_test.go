package delivery

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// TestChatTextIsEscaped: the chat gives "<", ">" and "&" a meaning
// ("<!channel>" notifies everyone, "<url|text>" shows a link under another
// name), so a file name or a comment carrying them is sent escaped, in a
// finding's message and in a batch's.
func TestChatTextIsEscaped(t *testing.T) {
	t.Parallel()
	d := store.Delivery{Integration: store.Integration{Kind: WebhookKind, URL: "https://chat.example.com/hook"}}
	ev := sendEvent
	ev.Finding.AffectedFile = "web/<!channel>&<https://evil.example|verify>.js"
	ev.Comment = "see <!here>"
	reqs, err := build(d, ev, "")
	require.NoError(t, err)
	text := reqs[0].body.(map[string]any)["text"].(string)
	require.Contains(t, text, "in `web/&lt;!channel&gt;&amp;&lt;https://evil.example|verify&gt;.js`")
	require.Contains(t, text, "see &lt;!here&gt;")
	require.NotContains(t, text, "<")

	reqs, err = buildBatch(d, store.BatchEvent{BatchID: "b1", Findings: []store.BatchFinding{{EventFinding: ev.Finding, Changes: ev.Changes}},
		Actor: ev.Actor, Comment: "bulk <!channel>"}, "")
	require.NoError(t, err)
	text = reqs[0].body.(map[string]any)["text"].(string)
	require.NotContains(t, text, "<")
	require.Contains(t, text, "&lt;!channel&gt;")

	require.Equal(t, "a &amp;lt; b &lt;c&gt;", slackText("a &lt; b <c>"), "already escaped text is escaped again, shown as written")
}

// TestPathsAreCode: a file path goes into every message as inline code, so
// that "@scope" in it notifies nobody and brackets make no link; a path
// holding backticks gets a longer fence.
func TestPathsAreCode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"packages/@scope/x.ts":   "`packages/@scope/x.ts`",
		"docs/[click](x)/*a*.md": "`docs/[click](x)/*a*.md`",
		"a`b.js":                 "``a`b.js``",
		"a``b.js":                "```a``b.js```",
		"`lead.js":               "`` `lead.js ``",
		"trail.js`":              "`` trail.js` ``",
	} {
		require.Equal(t, want, codeSpan(in), in)
	}
	ev := sendEvent
	ev.Finding.AffectedFile = "packages/@scope/x.ts"
	for _, kind := range []string{WebhookKind, "jira", "linear"} {
		reqs, err := build(store.Delivery{Integration: store.Integration{Kind: kind, URL: "https://x.example.com", Project: "P"}}, ev, "")
		require.NoError(t, err, kind)
		require.Contains(t, fmt.Sprint(reqs[0].body), "in `packages/@scope/x.ts`", kind)
	}
}
