package topology

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the generated blocks of deploy/README.md")

const readme = "../../deploy/README.md"

// TestDiagramIsGenerated: deploy/README.md's architecture diagram and edge
// table are exactly what the table renders (go test -update rewrites them).
func TestDiagramIsGenerated(t *testing.T) {
	raw, err := os.ReadFile(readme)
	require.NoError(t, err)
	doc := string(raw)
	for _, block := range []struct{ name, body string }{
		{"diagram", "```mermaid\n" + Mermaid() + "```\n"},
		{"edges", Table()},
	} {
		begin, end := "<!-- topology:"+block.name+":begin -->\n", "<!-- topology:"+block.name+":end -->"
		i, j := strings.Index(doc, begin), strings.Index(doc, end)
		require.True(t, i >= 0 && j > i, "%s: markers %q and %q not found", readme, begin, end)
		got := doc[i+len(begin) : j]
		if *update {
			doc = doc[:i+len(begin)] + block.body + doc[j:]
			continue
		}
		require.Equal(t, block.body, got, "%s: the %s block is not generated from pkg/topology; run go test ./pkg/topology -update", readme, block.name)
	}
	if *update {
		require.NoError(t, os.WriteFile(readme, []byte(doc), 0o644))
	}
}

func TestEdgesWellFormed(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, e := range Edges {
		require.False(t, seen[e.String()], "duplicate edge %s", e)
		seen[e.String()] = true
		require.NotEqual(t, e.From, e.To, e.String())
		if IsProcess(e.To) {
			p := Listen[e.To]
			want := p.GRPC
			if e.Admin {
				want = p.Admin
			}
			require.Equal(t, want, e.Port, "%s: not the port %s listens on", e, e.To)
		}
		if port, ok := StorePorts[e.To]; ok {
			require.Equal(t, port, e.Port, e.String())
		}
	}
	for id, procs := range Identities {
		require.NotEmpty(t, procs, id)
	}
}

func TestAllows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		identity, service string
		want              bool
	}{
		{"gateway", "auth", true},
		{"gateway", "scan", true},
		{"findings", "auth", true}, // organization and user lookups
		{"scan", "findings", true},
		{"scan", "estimation", true},
		{"estimation", "auth", true},
		{"operator", "auth", true},
		{"operator", "findings", true},
		{"operator", "scan", false},
		{"estimation", "findings", true}, // webhook events
		{"estimation", "scan", false},
		{"findings", "scan", false},
		{"auth", "findings", false},
		{"gateway", "nosuch", false},
		{"nosuch", "auth", false},
	} {
		require.Equal(t, tc.want, Allows(tc.identity, tc.service), "%s -> %s", tc.identity, tc.service)
	}
}
