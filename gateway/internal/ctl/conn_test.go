package ctl

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A command whose service cannot be reached (here: no operator identity)
// fails at its call with the reason and exit 1, prints nothing on stdout,
// and a mistake in its flags is still a usage error first.
func TestUnreachableServiceFailsTheCall(t *testing.T) {
	t.Setenv("VULNSCAN_PKI_DIR", t.TempDir())
	for _, args := range [][]string{
		{"org", "list"},
		{"credits", "show", "--org", "o"},
		{"finding", "approve", "--id", "f"},
		{"finding", "reject", "--id", "f"},
		{"integration", "list", "--org", "o"},
		{"webhook", "redeliver", "d"},
	} {
		code, out, errOut := run(args...)
		require.Equal(t, 1, code, "%v: %s", args, errOut)
		require.Empty(t, out, "%v", args)
		require.Contains(t, errOut, "operator identity", "%v", args)
	}
	code, _, errOut := run("finding", "reject")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--id is required")
}
