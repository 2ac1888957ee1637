package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// maxUpload is the API's upload limit (POST /uploads answers 413 above it).
const maxUpload = 100 << 20

// packed is a directory packed for upload.
type packed struct {
	data    []byte // tar.gz
	files   int
	ignored int // files and directories left out by .gitignore
	skipped int // symbolic links and special files, never packed
}

// pack writes the regular files under dir into a tar.gz archive, as
// `git add` would see them: the .git directory, whatever .gitignore files
// (in dir and below, each applying to its own directory, negations
// included) and .git/info/exclude ignore are left out. Symbolic links and
// special files are left out too: the server refuses links that leave the
// archive, and a link inside it would only repeat a file. Entries are in
// path order with fixed times and owners, so the same tree packs to the
// same bytes.
func pack(dir string) (packed, error) {
	var p packed
	info, err := os.Stat(dir)
	if err != nil {
		return p, err
	}
	if !info.IsDir() {
		return p, fmt.Errorf("%s is not a directory", dir)
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	patterns, err := ignoreFile(filepath.Join(dir, ".git", "info", "exclude"), nil)
	if err != nil {
		return p, err
	}
	var walk func(rel []string, patterns []gitignore.Pattern) error
	walk = func(rel []string, patterns []gitignore.Pattern) error {
		abs := filepath.Join(append([]string{dir}, rel...)...)
		own, err := ignoreFile(filepath.Join(abs, ".gitignore"), rel)
		if err != nil {
			return err
		}
		patterns = append(patterns[:len(patterns):len(patterns)], own...)
		m := gitignore.NewMatcher(patterns)
		entries, err := os.ReadDir(abs)
		if err != nil {
			return err
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, ent := range entries {
			name := ent.Name()
			path := append(rel[:len(rel):len(rel)], name)
			if ent.IsDir() && name == ".git" {
				continue
			}
			if m.Match(path, ent.IsDir()) {
				p.ignored++
				continue
			}
			switch {
			case ent.IsDir():
				if err := walk(path, patterns); err != nil {
					return err
				}
			case ent.Type().IsRegular():
				if err := addFile(tw, filepath.Join(abs, name), strings.Join(path, "/")); err != nil {
					return err
				}
				p.files++
				if buf.Len() > maxUpload {
					return fmt.Errorf("the directory packs to more than %d MiB, the upload limit: ignore build outputs and dependencies in .gitignore", maxUpload>>20)
				}
			default:
				p.skipped++
			}
		}
		return nil
	}
	if err := walk(nil, patterns); err != nil {
		return p, err
	}
	if err := tw.Close(); err != nil {
		return p, err
	}
	if err := gz.Close(); err != nil {
		return p, err
	}
	if p.files == 0 {
		return p, fmt.Errorf("%s has no files to scan (after .gitignore)", dir)
	}
	if buf.Len() > maxUpload {
		return p, fmt.Errorf("the directory packs to more than %d MiB, the upload limit: ignore build outputs and dependencies in .gitignore", maxUpload>>20)
	}
	p.data = buf.Bytes()
	return p, nil
}

// ignoreFile reads one ignore file's patterns; domain is its directory
// relative to the root. A missing file has none.
func ignoreFile(path string, domain []string) ([]gitignore.Pattern, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps, sc.Err()
}

func addFile(tw *tar.Writer, abs, name string) error {
	f, err := os.Open(abs)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	mode := int64(0o644)
	if st.Mode()&0o111 != 0 {
		mode = 0o755
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: st.Size(), Mode: mode, Format: tar.FormatPAX}); err != nil {
		return err
	}
	n, err := io.Copy(tw, f)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if n != st.Size() {
		return fmt.Errorf("%s changed while it was packed", name)
	}
	return nil
}
