// Package archive checks and unpacks uploaded repository archives (zip and
// tar.gz) safely: entries with absolute paths or ".." components, links
// leaving the archive root, device files and pipes are refused, and the
// expanded size is bounded while reading, whatever the headers claim. Links
// are never recreated on disk.
//
// Every entry counts against one cap: regular files, directories, links,
// and the parent directories a path implies without listing them (a zip of
// 243,000 empty directories is as refused as one of 243,000 files). Each
// name's length and depth are checked before anything is allocated or
// created for it, so a 30,000-level path is refused from its header. A zip's
// central directory is counted in a streaming pass before the standard
// reader loads it, so memory stays bounded by the cap, not by the archive.
package archive

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/config"
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
	MaxBytes   int64 // total expanded size
	MaxEntries int   // files, directories (listed or implied) and links
	MaxPath    int   // bytes of one entry's name or link target
	MaxDepth   int   // path components of one entry's name
}

// DefaultLimits: 1 GiB expanded (the documented upload limit); 100,000 entries; names of at
// most 1,024 bytes and 64 levels, far past what source trees use (git's own
// checkouts fail beyond PATH_MAX) and small enough that no name can make a
// tree the operating system cannot remove by path.
var DefaultLimits = Limits{MaxBytes: 1 << 30, MaxEntries: 100_000, MaxPath: 1024, MaxDepth: 64}

// LimitsFromEnv reads VULNSCAN_ARCHIVE_MAX_ENTRIES, VULNSCAN_ARCHIVE_MAX_PATH
// and VULNSCAN_ARCHIVE_MAX_DEPTH (defaults: DefaultLimits). The expanded
// size is a documented product limit and not configurable.
func LimitsFromEnv(env *config.Env) (Limits, error) {
	l := DefaultLimits
	l.MaxEntries = env.Int("VULNSCAN_ARCHIVE_MAX_ENTRIES", l.MaxEntries)
	l.MaxPath = env.Int("VULNSCAN_ARCHIVE_MAX_PATH", l.MaxPath)
	l.MaxDepth = env.Int("VULNSCAN_ARCHIVE_MAX_DEPTH", l.MaxDepth)
	if l.MaxEntries < 1 || l.MaxPath < 1 || l.MaxDepth < 1 {
		return l, errors.New("VULNSCAN_ARCHIVE_MAX_ENTRIES, VULNSCAN_ARCHIVE_MAX_PATH and VULNSCAN_ARCHIVE_MAX_DEPTH must be positive")
	}
	return l, nil
}

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
// trailing slash; "" for the root itself. Length and depth are checked
// first, on the raw name.
func (w *writer) cleanName(name string) (string, error) {
	if len(name) > w.lim.MaxPath {
		return "", unsafe("an entry name is longer than %d bytes", w.lim.MaxPath)
	}
	if strings.Count(name, "/") > w.lim.MaxDepth {
		return "", unsafe("entry %q is nested deeper than %d levels", name, w.lim.MaxDepth)
	}
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
	if strings.Count(c, "/")+1 > w.lim.MaxDepth {
		return "", unsafe("entry %q is nested deeper than %d levels", name, w.lim.MaxDepth)
	}
	return c, nil
}

// entry counts one entry named name (cleaned, not the root) and every
// parent directory it implies that was not counted before. Directories
// are remembered by a keyed 64-bit hash, so the set costs a few bytes per
// directory whatever the names' length, and a hostile archive cannot
// choose names that collide.
func (w *writer) entry(name string, isDir bool) error {
	w.entries++
	if isDir {
		if _, seen := w.dirs[maphash.String(w.seed, name)]; seen {
			w.entries--
		} else {
			w.dirs[maphash.String(w.seed, name)] = struct{}{}
		}
	}
	for d := path.Dir(name); d != "."; d = path.Dir(d) {
		k := maphash.String(w.seed, d)
		if _, seen := w.dirs[k]; seen {
			break
		}
		w.dirs[k] = struct{}{}
		w.entries++
	}
	if w.entries > w.lim.MaxEntries {
		return unsafe("more than %d entries (files, directories and links)", w.lim.MaxEntries)
	}
	return nil
}

// checkLink refuses a link whose target leaves the root.
func checkLink(name, target string, hard bool, maxPath int) error {
	if len(target) > maxPath {
		return unsafe("link %q has a target longer than %d bytes", name, maxPath)
	}
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
	root    *os.Root
	lim     Limits
	sum     Summary
	hashes  map[string]string
	entries int
	seed    maphash.Seed
	dirs    map[uint64]struct{}
}

// mkdir creates a directory entry (already counted).
func (w *writer) mkdir(name, raw string) error {
	if name == "" || w.root == nil {
		return nil
	}
	if err := w.root.MkdirAll(name, 0o755); err != nil {
		return unsafe("entry %q cannot be created", raw)
	}
	return nil
}

func (w *writer) file(name string, r io.Reader) error {
	w.sum.Files++
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
	w := &writer{lim: lim, hashes: map[string]string{}, seed: maphash.MakeSeed(), dirs: map[uint64]struct{}{}}
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
	if err := countZipEntries(r, size, w.lim.MaxEntries); err != nil {
		return err
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return unsafe("not a valid zip archive")
	}
	if len(zr.File) > w.lim.MaxEntries {
		return unsafe("more than %d entries (files, directories and links)", w.lim.MaxEntries)
	}
	for _, f := range zr.File {
		name, err := w.cleanName(f.Name)
		if err != nil {
			return err
		}
		mode := f.Mode()
		isDir := mode.IsDir() || strings.HasSuffix(f.Name, "/")
		if name != "" {
			if err := w.entry(name, isDir && mode&fs.ModeSymlink == 0); err != nil {
				return err
			}
		}
		switch {
		case mode&fs.ModeSymlink != 0:
			rc, err := f.Open()
			if err != nil {
				return unsafe("entry %q cannot be read", f.Name)
			}
			target, err := io.ReadAll(io.LimitReader(rc, int64(w.lim.MaxPath)+1))
			_ = rc.Close()
			if err != nil {
				return unsafe("entry %q cannot be read", f.Name)
			}
			if err := checkLink(name, string(target), false, w.lim.MaxPath); err != nil {
				return err
			}
		case mode&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket|fs.ModeIrregular) != 0:
			return unsafe("entry %q is a special file", f.Name)
		case isDir:
			if err := w.mkdir(name, f.Name); err != nil {
				return err
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
		switch h.Typeflag {
		case tar.TypeXGlobalHeader, tar.TypeXHeader, tar.TypeGNULongName, tar.TypeGNULongLink:
			continue
		}
		name, err := w.cleanName(h.Name)
		if err != nil {
			return err
		}
		if name != "" {
			if err := w.entry(name, h.Typeflag == tar.TypeDir); err != nil {
				return err
			}
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
			if err := w.mkdir(name, h.Name); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := checkLink(name, h.Linkname, false, w.lim.MaxPath); err != nil {
				return err
			}
		case tar.TypeLink:
			if err := checkLink(name, h.Linkname, true, w.lim.MaxPath); err != nil {
				return err
			}
		case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
			return unsafe("entry %q is a special file", h.Name)
		default:
			return unsafe("entry %q has an unsupported type", h.Name)
		}
	}
}

// ContentIdentity is how findings name an upload's repository: by the
// content hash of its files, so the same code uploaded again (or scanned
// locally by the command-line client) gives the same fingerprints.
func ContentIdentity(contentHash string) string { return "upload-content:" + contentHash }
