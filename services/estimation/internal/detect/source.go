package detect

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// DirSource reads the regular files under a directory; links and special
// files are ignored.
type DirSource struct {
	Root  string
	files []File
}

// NewDirSource lists the regular files under root.
func NewDirSource(root string) (*DirSource, error) {
	s := &DirSource{Root: root}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		s.files = append(s.files, File{Path: filepath.ToSlash(rel), Size: info.Size()})
		return nil
	})
	return s, err
}

func (s *DirSource) Files() []File { return s.files }

func (s *DirSource) ReadFile(p string) ([]byte, error) {
	root, err := os.OpenRoot(s.Root)
	if err != nil {
		return nil, err
	}
	defer func() { _ = root.Close() }()
	f, err := root.Open(filepath.FromSlash(p))
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return io.ReadAll(io.LimitReader(f, MaxReadBytes))
}
