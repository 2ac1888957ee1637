//go:build unix

package rmtree

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// deepTree makes depth nested directories "d" under dir, with a file at
// the bottom and every tenth level, using descriptors only (the full path
// is far longer than PATH_MAX).
func deepTree(t *testing.T, dir string, depth int) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	require.NoError(t, err)
	for i := 0; i < depth; i++ {
		require.NoError(t, unix.Mkdirat(fd, "d", 0o755))
		if i%10 == 0 {
			f, err := unix.Openat(fd, "f", unix.O_CREAT|unix.O_WRONLY, 0o644)
			require.NoError(t, err)
			require.NoError(t, unix.Close(f))
		}
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY, 0)
		require.NoError(t, err)
		require.NoError(t, unix.Close(fd))
		fd = next
	}
	f, err := unix.Openat(fd, "bottom", unix.O_CREAT|unix.O_WRONLY, 0o644)
	require.NoError(t, err)
	require.NoError(t, unix.Close(f))
	require.NoError(t, unix.Close(fd))
}

func TestRemoveAllDeep(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "tree")
	require.NoError(t, os.Mkdir(root, 0o755))
	// 30,000 levels: about 60,000 bytes of path.
	deepTree(t, root, 30_000)
	require.NoError(t, RemoveAll(root))
	_, err := os.Lstat(root)
	require.True(t, errors.Is(err, fs.ErrNotExist))
}

func TestRemoveAll(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		build func(t *testing.T, p string)
	}{
		{"missing", func(*testing.T, string) {}},
		{"file", func(t *testing.T, p string) { require.NoError(t, os.WriteFile(p, []byte("x"), 0o644)) }},
		{"wide and nested", func(t *testing.T, p string) {
			for _, d := range []string{"a/b/c", "a/e", "f", "g/h/i/j"} {
				require.NoError(t, os.MkdirAll(filepath.Join(p, d), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(p, d, "x"), []byte("x"), 0o644))
			}
			for i := 0; i < 3000; i++ {
				require.NoError(t, os.WriteFile(filepath.Join(p, "a", "file"+string(rune('a'+i%26))+filepath.Base(t.Name())+string(rune('0'+i%10))+string(rune('A'+i/260))), nil, 0o644))
			}
			require.NoError(t, os.MkdirAll(filepath.Join(p, "empty"), 0o755))
		}},
		{"symlink is removed, not followed", func(t *testing.T, p string) {
			outside := filepath.Join(filepath.Dir(p), "outside")
			require.NoError(t, os.MkdirAll(outside, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(outside, "keep"), []byte("x"), 0o644))
			require.NoError(t, os.MkdirAll(p, 0o755))
			require.NoError(t, os.Symlink(outside, filepath.Join(p, "link")))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "target")
			tt.build(t, p)
			require.NoError(t, RemoveAll(p))
			_, err := os.Lstat(p)
			require.True(t, errors.Is(err, fs.ErrNotExist))
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), "outside")); err == nil {
				_, err := os.Stat(filepath.Join(filepath.Dir(p), "outside", "keep"))
				require.NoError(t, err, "the link's target is untouched")
			}
		})
	}
}
