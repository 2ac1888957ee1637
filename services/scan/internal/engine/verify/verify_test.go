package verify

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/services/scan/internal/engine/finding"
)

func TestRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.py"), []byte("x = 1\nos.system(cmd)\n"), 0o644))
	base := finding.Finding{RuleID: "r", Category: "injection", Severity: "high", RepoURL: "repo", AffectedFile: "a.py",
		AffectedCode: "x = 1\nos.system(cmd)", StartLine: 2, EndLine: 2, Fingerprint: "fp1"}
	moved := base
	moved.StartLine, moved.EndLine = 5, 5
	moved.Fingerprint = "fp2"
	dup := base
	dup.Severity = "critical"
	dup.Tags = []string{"extra"}
	test := base
	test.AffectedFile, test.Fingerprint = "tests/test_a.py", "fp3"
	dropped := test
	dropped.RuleID, dropped.Fingerprint = "weak-random", "fp4"
	reproduced := finding.Finding{RuleID: "live", Category: "misconfiguration", Severity: "low", Fingerprint: "fp5", Reproduce: func() bool { return true }}

	out, st := Run(context.Background(), []finding.Finding{base, moved, dup, test, dropped, reproduced},
		Options{Dirs: map[string]string{"repo": dir}, DropInTests: map[string]bool{"weak-random": true}})
	require.Len(t, out, 4)
	require.Equal(t, 1, st.Merged)
	require.Equal(t, 1, st.DroppedTests)
	got := map[string]finding.Finding{}
	for _, f := range out {
		got[f.Fingerprint] = f
	}
	require.True(t, got["fp1"].Confirmed)
	require.Equal(t, "critical", got["fp1"].Severity)
	require.Contains(t, got["fp1"].Tags, "extra")
	require.False(t, got["fp2"].Confirmed, "line 5 does not exist")
	require.Equal(t, "medium", got["fp3"].Severity)
	require.False(t, got["fp3"].Confirmed, "file missing")
	require.True(t, got["fp5"].Confirmed)
}

func TestIsTestPath(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"tests/a.py": true, "src/a_test.go": true, "web/x.spec.ts": true, "examples/demo.js": true,
		"src/app.py": false, "src/contest/app.py": false, "src/main/java/AppTest.java": true,
		"app/models/user_test.rb": true, "lib/user_spec.rb": true, "src/UserTest.php": true, "app/models/user.rb": false, "src/User.php": false,
	} {
		require.Equal(t, want, IsTestPath(p), p)
	}
}
