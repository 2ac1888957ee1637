// Package archive unpacks uploaded source archives (zip, tar.gz) safely:
// entries with absolute paths, ".." components, links that leave the root,
// device files or other special files are rejected, and the number of files
// and the expanded size are bounded, so a hostile archive can neither write
// outside its directory nor exhaust the disk.
package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Content types accepted.
const (
	TypeZip  = "application/zip"
	TypeGzip = "application/gzip"
)

// ErrUnsafe wraps every rejection of an archive's content.
var ErrUnsafe = errors.New("unsafe archive")

// Limits bound an extraction.
type Limits struct {
	MaxFiles     int   // entries (files, directories, links)
	MaxTotalSize int64 // expanded bytes
}

// DefaultLimits are the limits of CONTRACT.md: 1 GiB expanded, 100,000 entries.
var DefaultLimits = Limits{MaxFiles: 100_000, MaxTotalSize: 1 << 30}

// Stats describes what was extracted.
type Stats struct {
	Files int
	Bytes int64
}

func unsafe(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsafe, fmt.Sprintf(format, args...))
}

// Extract unpacks the archive read from r, of contentType, into dst (which
// must exist and be empty). A zip archive is spooled to a temporary file
// because its directory is at the end.
func Extract(r io.Reader, contentType, dst string, lim Limits) (Stats, error) {
	x := &extractor{dst: dst, lim: lim}
	switch contentType {
	case TypeGzip, "application/x-gzip", "application/x-tar+gzip":
		return x.stats, x.tarGz(r)
	case TypeZip, "application/x-zip-compressed":
		f, err := os.CreateTemp("", "vulnscan-zip-")
		if err != nil {
			return x.stats, err
		}
		defer func() { _ = f.Close(); _ = os.Remove(f.Name()) }()
		n, err := io.Copy(f, r)
		if err != nil {
			return x.stats, fmt.Errorf("spool archive: %w", err)
		}
		zr, err := zip.NewReader(f, n)
		if err != nil {
			return x.stats, unsafe("not a valid zip archive")
		}
		return x.stats, x.zip(zr)
	default:
		return x.stats, fmt.Errorf("unsupported archive type %q", contentType)
	}
}

type extractor struct {
	dst   string
	lim   Limits
	stats Stats
}

// target validates an entry name and returns its path under dst.
func (x *extractor) target(name string) (string, error) {
	if name == "" || strings.ContainsRune(name, 0) {
		return "", unsafe("empty or invalid entry name")
	}
	if strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) || filepath.VolumeName(name) != "" || (len(name) > 1 && name[1] == ':') {
		return "", unsafe("absolute path %q", name)
	}
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return "", unsafe("path %q leaves the archive root", name)
		}
	}
	clean := path.Clean(strings.ReplaceAll(name, `\`, "/"))
	if clean == "." {
		return x.dst, nil
	}
	return filepath.Join(x.dst, filepath.FromSlash(clean)), nil
}

func (x *extractor) count() error {
	x.stats.Files++
	if x.stats.Files > x.lim.MaxFiles {
		return unsafe("more than %d entries", x.lim.MaxFiles)
	}
	return nil
}

// checkParents refuses to write through a symlink created earlier.
func (x *extractor) checkParents(p string) error {
	rel, err := filepath.Rel(x.dst, filepath.Dir(p))
	if err != nil {
		return unsafe("bad path")
	}
	cur := x.dst
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." || part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return unsafe("entry %q is written through a link", p)
		}
	}
	return nil
}

func (x *extractor) writeFile(p string, r io.Reader, mode os.FileMode) error {
	if err := x.checkParents(p); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode.Perm()&0o755|0o600)
	if err != nil {
		return err
	}
	remaining := x.lim.MaxTotalSize - x.stats.Bytes
	n, err := io.Copy(f, io.LimitReader(r, remaining+1))
	cerr := f.Close()
	x.stats.Bytes += n
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(p), err)
	}
	if x.stats.Bytes > x.lim.MaxTotalSize {
		return unsafe("expands past %d bytes", x.lim.MaxTotalSize)
	}
	return cerr
}

// link creates a symlink only when its target stays inside dst.
func (x *extractor) link(p, target string) error {
	if filepath.IsAbs(target) || strings.HasPrefix(target, "/") {
		return unsafe("link %q points to an absolute path", target)
	}
	resolved := filepath.Join(filepath.Dir(p), filepath.FromSlash(target))
	rel, err := filepath.Rel(x.dst, resolved)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return unsafe("link %q leaves the archive root", target)
	}
	if err := x.checkParents(p); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.Symlink(target, p)
}

func (x *extractor) tarGz(r io.Reader) error {
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
			return unsafe("corrupt tar archive")
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		if err := x.count(); err != nil {
			return err
		}
		p, err := x.target(h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := x.checkParents(p); err != nil {
				return err
			}
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := x.writeFile(p, tr, os.FileMode(h.Mode)); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := x.link(p, h.Linkname); err != nil {
				return err
			}
		case tar.TypeLink:
			return unsafe("hard link %q is not allowed", h.Name)
		default:
			return unsafe("special file %q (type %q) is not allowed", h.Name, string(h.Typeflag))
		}
	}
}

func (x *extractor) zip(zr *zip.Reader) error {
	if len(zr.File) > x.lim.MaxFiles {
		return unsafe("more than %d entries", x.lim.MaxFiles)
	}
	var declared uint64
	for _, f := range zr.File {
		declared += f.UncompressedSize64
	}
	if declared > uint64(x.lim.MaxTotalSize) {
		return unsafe("expands past %d bytes", x.lim.MaxTotalSize)
	}
	for _, f := range zr.File {
		if err := x.count(); err != nil {
			return err
		}
		p, err := x.target(f.Name)
		if err != nil {
			return err
		}
		mode := f.Mode()
		switch {
		case mode.IsDir():
			if err := x.checkParents(p); err != nil {
				return err
			}
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case mode&os.ModeSymlink != 0:
			rc, err := f.Open()
			if err != nil {
				return unsafe("corrupt zip entry %q", f.Name)
			}
			target, err := io.ReadAll(io.LimitReader(rc, 4096))
			_ = rc.Close()
			if err != nil {
				return unsafe("corrupt zip entry %q", f.Name)
			}
			if err := x.link(p, string(bytes.TrimSpace(target))); err != nil {
				return err
			}
		case mode.IsRegular():
			rc, err := f.Open()
			if err != nil {
				return unsafe("corrupt zip entry %q", f.Name)
			}
			err = x.writeFile(p, rc, mode)
			_ = rc.Close()
			if err != nil {
				if errors.Is(err, zip.ErrChecksum) || errors.Is(err, zip.ErrFormat) {
					return unsafe("corrupt zip entry %q", f.Name)
				}
				return err
			}
		default:
			return unsafe("special file %q is not allowed", f.Name)
		}
	}
	return nil
}
