package store

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFindingWebhookEvents: each finding event is written with the change
// that causes it, queued for exactly the webhooks subscribed to its type,
// and shows the finding after the change; an organization without a
// subscribed webhook gets no events at all.
func TestFindingWebhookEvents(t *testing.T) {
	u := newUnit(t)
	all := u.hook("finding.created", "finding.updated", "finding.commented")
	comments := u.hook("finding.commented")
	ids := u.findings("https://git.example.com/acme/app", "a", "b")
	_, err := u.s.Apply(u.ctx, u.org, ids[0], Update{State: ptr("resolved"), StateReason: "fixed"}, apiActor)
	require.NoError(t, err)
	_, err = u.s.AddComment(u.ctx, u.org, ids[1], "next sprint", apiActor)
	require.NoError(t, err)

	evs := u.hookEvents()
	type seen struct {
		typ, finding string
		hooks        int
	}
	var got []seen
	for _, e := range evs {
		require.EqualValues(t, 1, e.Payload["version"])
		data := e.Payload["data"].(map[string]any)
		got = append(got, seen{e.Type, data["finding"].(map[string]any)["id"].(string), len(e.Webhooks)})
		for _, h := range e.Webhooks {
			if e.Type != "finding.commented" {
				require.Equal(t, all, h)
			}
		}
	}
	require.ElementsMatch(t, []seen{{"finding.created", ids[0], 1}, {"finding.created", ids[1], 1},
		{"finding.updated", ids[0], 1}, {"finding.commented", ids[1], 2}}, got)
	for _, e := range evs {
		data := e.Payload["data"].(map[string]any)
		switch e.Type {
		case "finding.updated":
			require.Equal(t, "resolved", data["finding"].(map[string]any)["state"], "the finding after the change")
			require.Equal(t, "fixed", data["comment"])
			require.Equal(t, []any{map[string]any{"field": "state", "from": "open", "to": "resolved", "reason": "fixed"}}, data["changes"])
			require.Equal(t, "api", data["actor"].(map[string]any)["source"])
		case "finding.commented":
			require.Equal(t, "next sprint", data["comment"])
			require.ElementsMatch(t, []string{all, comments}, e.Webhooks)
		}
	}

	// A later scan that sees the resolved finding again reopens it: one
	// finding.updated by the agent.
	before := len(evs)
	u.findings("https://git.example.com/acme/app", "a")
	evs = u.hookEvents()[before:]
	require.Len(t, evs, 1)
	require.Equal(t, "finding.updated", evs[0].Type)
	data := evs[0].Payload["data"].(map[string]any)
	require.Equal(t, "open", data["finding"].(map[string]any)["state"])
	require.Equal(t, "agent", data["actor"].(map[string]any)["source"])

	quiet := &unit{t: t, ctx: u.ctx, s: u.s, org: "00000000-0000-4000-8000-000000000001"}
	id := quiet.findings("https://git.example.com/acme/app", "q")[0]
	_, err = u.s.Apply(u.ctx, quiet.org, id, Update{State: ptr("resolved")}, apiActor)
	require.NoError(t, err)
	require.Empty(t, quiet.hookEvents())
}
