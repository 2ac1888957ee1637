//go:build unix

// Package rmtree removes a directory tree whatever its depth. os.RemoveAll
// recurses once per level and works on full paths, so a tree deeper than
// PATH_MAX (an archive holding a 30,000-level path, say) cannot be removed
// with it. RemoveAll here walks with one open directory at a time, names
// every entry relative to its parent's descriptor (openat, unlinkat) and
// keeps its own stack of the names still to visit, so neither the call
// stack, the path length nor the number of open descriptors grows with the
// depth. Each directory is listed once.
//
// The trees it removes are the service's own scratch directories (checkouts,
// unpacked archives), which nothing else modifies while they are removed;
// directories are opened with O_NOFOLLOW, so a symbolic link is removed,
// never followed.
package rmtree

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// level is one directory being emptied: its remaining subdirectories.
type level struct {
	name string   // in the parent
	dirs []string // subdirectories still to empty and remove
}

// RemoveAll removes path and everything under it. A missing path is not
// an error. The first failure stops the removal and is returned.
func RemoveAll(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	if !fi.IsDir() {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", path, err)
		}
		return nil
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	if err := empty(fd); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

// empty removes everything under the directory open as fd and closes fd.
func empty(fd int) (err error) {
	defer func() {
		if fd >= 0 {
			_ = unix.Close(fd)
		}
	}()
	first, err := list(fd)
	if err != nil {
		return err
	}
	stack := []level{{dirs: first}}
	depth := 0
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if len(top.dirs) == 0 {
			// This directory is empty now: go up and remove it there.
			done := top.name
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return nil
			}
			parent, err := unix.Openat(fd, "..", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("open parent at depth %d: %w", depth, err)
			}
			_ = unix.Close(fd)
			fd = parent
			depth--
			if err := unix.Unlinkat(fd, done, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
				return fmt.Errorf("remove directory %q at depth %d: %w", done, depth, err)
			}
			continue
		}
		name := top.dirs[len(top.dirs)-1]
		top.dirs = top.dirs[:len(top.dirs)-1]
		// An empty directory goes at once, without opening it.
		err := unix.Unlinkat(fd, name, unix.AT_REMOVEDIR)
		if err == nil || errors.Is(err, unix.ENOENT) {
			continue
		}
		if !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("remove directory %q at depth %d: %w", name, depth, err)
		}
		child, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open directory %q at depth %d: %w", name, depth, err)
		}
		_ = unix.Close(fd)
		fd = child
		depth++
		sub, err := list(fd)
		if err != nil {
			return fmt.Errorf("at depth %d: %w", depth, err)
		}
		stack = append(stack, level{name: name, dirs: sub})
	}
	return nil
}

// list removes every non-directory entry of the directory open as fd and
// returns the names of its subdirectories.
func list(fd int) ([]string, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, fmt.Errorf("list directory: %w", err)
	}
	f := os.NewFile(uintptr(dup), "dir")
	defer func() { _ = f.Close() }()
	var dirs []string
	for {
		entries, err := f.ReadDir(1024)
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, e.Name())
				continue
			}
			if err := unix.Unlinkat(fd, e.Name(), 0); err != nil && !errors.Is(err, unix.ENOENT) {
				return nil, fmt.Errorf("remove %q: %w", e.Name(), err)
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return dirs, nil
			}
			return nil, fmt.Errorf("list directory: %w", err)
		}
		if len(entries) == 0 {
			return dirs, nil
		}
	}
}
