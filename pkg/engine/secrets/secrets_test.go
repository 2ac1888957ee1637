package secrets

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScanRedacts(t *testing.T) {
	t.Parallel()
	s, err := New()
	require.NoError(t, err)
	key := "AKIA" + "QWERTYUIOPASDFGH"
	src := "package main\n\nconst awsKey = \"" + key + "\"\n"
	out := s.Scan("main.go", []byte(src))
	require.NotEmpty(t, out)
	for _, f := range out {
		require.Equal(t, "secrets", f.Category)
		require.Equal(t, 3, f.StartLine)
		require.NotContains(t, f.AffectedCode, key)
		require.NotContains(t, f.Description, key)
		require.True(t, strings.Contains(f.AffectedCode, "AKIA"), f.AffectedCode)
	}
}

func TestScanNoSecret(t *testing.T) {
	t.Parallel()
	s, err := New()
	require.NoError(t, err)
	require.Empty(t, s.Scan("a.py", []byte("password = os.environ['DB_PASSWORD']\n")))
}

func FuzzScan(f *testing.F) {
	f.Add([]byte("token = \"ghp_" + "0123456789abcdefghijklmnopqrstuvwxyz\"\n"))
	f.Add([]byte("\x00\x01\x02 binary"))
	f.Add([]byte(strings.Repeat("a", 5000)))
	f.Add([]byte(code(8) + "aws = '" + awsKey + "'\n" + privateKey))
	f.Add([]byte("password =\n\n  '" + genericVal + "'"))
	s, err := New()
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, data []byte) {
		// The keyword prefilter finds what the full scan finds.
		for _, fd := range requireSame(t, s, "f.txt", data) {
			require.GreaterOrEqual(t, fd.StartLine, 1)
		}
	})
}
