// Package archive checks and unpacks uploaded repository archives (zip and
// tar.gz) safely: entries with absolute paths or ".." components, links
// leaving the archive root, device files and pipes are refused, and the
// expanded size and file count are bounded while reading, whatever the
// headers claim. Links are never recreated on disk.
package archive

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// Content types accepted for uploads.
const (
	TypeZip   = "application/zip"
	TypeTarGz = "application/gzip"
)

// ErrUnsafe wraps every refusal of an archive's content; its message is
// safe to show to the uploader.
var ErrUnsafe = errors.New("archive rejected")

// Limits bound what an archive may expand to.
type Limits struct {
	MaxBytes int64 // total expanded size
	MaxFiles int   // regular files
}

// DefaultLimits are the contract's: 1 GiB expanded, 100,000 files.
var DefaultLimits = Limits{MaxBytes: 1 << 30, MaxFiles: 100_000}

// Summary describes a checked archive.
type Summary struct {
	Files int
	Bytes int64
	// ContentHash is a stable 40-hex hash of the files (paths and contents),
	// independent of the archive format and entry order.
	ContentHash string
}

func unsafe(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsafe, fmt.Sprintf(format, args...))
}

// cleanName checks an entry name and returns it cleaned, without a
// trailing slash; "" for the root itself.
func cleanName(name string) (string, error) {
	if strings.ContainsAny(name, "\x00\\") {
		return "", unsafe("entry %q has an invalid name", name)
	}
	if strings.HasPrefix(name, "/") || (len(name) >= 2 && name[1] == ':') {
		return "", unsafe("entry %q has an absolute path", name)
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return "", unsafe("entry %q leaves the archive root", name)
		}
	}
	c := path.Clean(name)
	if c == "." {
		return "", nil
	}
	return c, nil
}

// checkLink refuses a link whose target leaves the root.
func checkLink(name, target string, hard bool) error {
	if target == "" || strings.HasPrefix(target, "/") || strings.ContainsAny(target, "\x00\\") || (len(target) >= 2 && target[1] == ':') {
		return unsafe("link %q points outside the archive", name)
	}
	base := path.Dir(name)
	if hard {
		base = "."
	}
	j := path.Join(base, target)
	if j == ".." || strings.HasPrefix(j, "../") {
		return unsafe("link %q points outside the archive", name)
	}
	return nil
}

type writer struct {
	root   *os.Root
	lim    Limits
	sum    Summary
	hashes map[string]string
}

func (w *writer) file(name string, r io.Reader) error {
	w.sum.Files++
	if w.sum.Files > w.lim.MaxFiles {
		return unsafe("more than %d files", w.lim.MaxFiles)
	}
	h := sha256.New()
	var dst io.Writer = h
	var f *os.File
	if w.root != nil {
		if d := path.Dir(name); d != "." {
			if err := w.root.MkdirAll(d, 0o755); err != nil {
				return unsafe("entry %q cannot be created", name)
			}
		}
		var err error
		f, err = w.root.OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
		if err != nil {
			return unsafe("entry %q cannot be created", name)
		}
		defer func() { _ = f.Close() }()
		dst = io.MultiWriter(h, f)
	}
	remaining := w.lim.MaxBytes - w.sum.Bytes
	n, err := io.Copy(dst, io.LimitReader(r, remaining+1))
	w.sum.Bytes += n
	if err != nil {
		return unsafe("entry %q cannot be read: %v", name, err)
	}
	if w.sum.Bytes > w.lim.MaxBytes {
		return unsafe("expands to more than %d bytes", w.lim.MaxBytes)
	}
	w.hashes[name] = hex.EncodeToString(h.Sum(nil))
	if f != nil {
		return f.Close()
	}
	return nil
}

func (w *writer) finish() Summary {
	names := make([]string, 0, len(w.hashes))
	for n := range w.hashes {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s\x00%s\n", n, w.hashes[n])
	}
	w.sum.ContentHash = hex.EncodeToString(h.Sum(nil))[:40]
	return w.sum
}

// Extract checks the archive in r (of size bytes) and, when dest is not
// empty, unpacks its directories and regular files under dest.
func Extract(r io.ReaderAt, size int64, contentType, dest string, lim Limits) (Summary, error) {
	w := &writer{lim: lim, hashes: map[string]string{}}
	if dest != "" {
		root, err := os.OpenRoot(dest)
		if err != nil {
			return Summary{}, err
		}
		defer func() { _ = root.Close() }()
		w.root = root
	}
	var err error
	switch contentType {
	case TypeZip:
		err = w.zip(r, size)
	case TypeTarGz:
		err = w.tarGz(io.NewSectionReader(r, 0, size))
	default:
		return Summary{}, unsafe("unsupported content type %q", contentType)
	}
	if err != nil {
		return Summary{}, err
	}
	return w.finish(), nil
}

func (w *writer) zip(r io.ReaderAt, size int64) error {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return unsafe("not a valid zip archive")
	}
	for _, f := range zr.File {
		name, err := cleanName(f.Name)
		if err != nil {
			return err
		}
		mode := f.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			rc, err := f.Open()
			if err != nil {
				return unsafe("entry %q cannot be read", f.Name)
			}
			target, err := io.ReadAll(io.LimitReader(rc, 4096))
			_ = rc.Close()
			if err != nil {
				return unsafe("entry %q cannot be read", f.Name)
			}
			if err := checkLink(name, string(target), false); err != nil {
				return err
			}
		case mode&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket|fs.ModeIrregular) != 0:
			return unsafe("entry %q is a special file", f.Name)
		case mode.IsDir() || strings.HasSuffix(f.Name, "/"):
			if name != "" && w.root != nil {
				if err := w.root.MkdirAll(name, 0o755); err != nil {
					return unsafe("entry %q cannot be created", f.Name)
				}
			}
		default:
			if name == "" {
				return unsafe("entry %q has an invalid name", f.Name)
			}
			rc, err := f.Open()
			if err != nil {
				return unsafe("entry %q cannot be read", f.Name)
			}
			err = w.file(name, rc)
			_ = rc.Close()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *writer) tarGz(r io.Reader) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return unsafe("not a valid gzip stream")
	}
	defer func() { _ = gz.Close() }()
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return unsafe("not a valid tar.gz archive")
		}
		name, err := cleanName(h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeReg, tar.TypeGNUSparse:
			if name == "" {
				return unsafe("entry %q has an invalid name", h.Name)
			}
			if err := w.file(name, tr); err != nil {
				return err
			}
		case tar.TypeDir:
			if name != "" && w.root != nil {
				if err := w.root.MkdirAll(name, 0o755); err != nil {
					return unsafe("entry %q cannot be created", h.Name)
				}
			}
		case tar.TypeSymlink:
			if err := checkLink(name, h.Linkname, false); err != nil {
				return err
			}
		case tar.TypeLink:
			if err := checkLink(name, h.Linkname, true); err != nil {
				return err
			}
		case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
			return unsafe("entry %q is a special file", h.Name)
		case tar.TypeXGlobalHeader, tar.TypeXHeader, tar.TypeGNULongName, tar.TypeGNULongLink:
		default:
			return unsafe("entry %q has an unsupported type", h.Name)
		}
	}
}
