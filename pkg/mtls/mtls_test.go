package mtls

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGenerateAndLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, Generate(dir, Gateway, Operator))
	files := func(n string) Files {
		return Files{CA: filepath.Join(dir, "ca.crt"), Cert: filepath.Join(dir, n+".crt"), Key: filepath.Join(dir, n+".key")}
	}
	id, err := Load(files(Gateway), Gateway)
	require.NoError(t, err)
	require.Equal(t, Gateway, id.Name)
	_, err = Load(files(Gateway), Operator)
	require.ErrorContains(t, err, "not \"operator\"")

	// Running again keeps valid files: identities do not change under
	// running processes.
	before, err := os.ReadFile(filepath.Join(dir, "gateway.crt"))
	require.NoError(t, err)
	require.NoError(t, Generate(dir, Gateway, Operator))
	after, err := os.ReadFile(filepath.Join(dir, "gateway.crt"))
	require.NoError(t, err)
	require.Equal(t, before, after)
	info, err := os.Stat(filepath.Join(dir, "ca.key"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	// A certificate from another CA is re-issued by this one.
	other := t.TempDir()
	require.NoError(t, Generate(other, Gateway))
	b, err := os.ReadFile(filepath.Join(other, "gateway.crt"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gateway.crt"), b, 0o600))
	require.NoError(t, Generate(dir, Gateway))
	_, err = Load(files(Gateway), Gateway)
	require.NoError(t, err)
}
