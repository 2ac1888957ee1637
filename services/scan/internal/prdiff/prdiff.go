// Package prdiff finds the lines a pull request changed: it compares the
// files of the head's checked-out tree with those of the base's, line by
// line, and tells which head lines are new or modified. Pull request scans
// report only findings that touch such lines.
//
// The diff trims the common prefix and suffix of a file and aligns the rest
// by a longest common subsequence of lines. When the middle of a file is
// too large for that (more than MaxCells line pairs), every line of the
// middle counts as changed: a large rewrite is treated as changed rather
// than risking a missed finding (findings already present at the base are
// still dropped by fingerprint).
package prdiff

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MaxCells bounds the work of aligning one file's changed middle.
const MaxCells = 4_000_000

// Lines is a set of 1-based line numbers of a head file.
type Lines map[int]bool

// Changes maps repository-relative, slash-separated paths of head files to
// their changed lines. A file absent from the map is unchanged.
type Changes map[string]Lines

// Touches tells whether line of file was changed.
func (c Changes) Touches(file string, line int) bool {
	return c[file][line]
}

// TouchesRange tells whether any line from start to end of file changed.
func (c Changes) TouchesRange(file string, start, end int) bool {
	ls, ok := c[file]
	if !ok {
		return false
	}
	end = max(end, start)
	for l := start; l <= end; l++ {
		if ls[l] {
			return true
		}
	}
	return false
}

// Compare walks headDir and returns the changed lines of every file that is
// new or differs from the file of the same path under baseDir. Files larger
// than maxFileBytes are compared whole: when they differ, every line counts
// as changed.
func Compare(ctx context.Context, baseDir, headDir string, maxFileBytes int64) (Changes, error) {
	out := Changes{}
	err := filepath.WalkDir(headDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(headDir, p)
		if err != nil {
			return err
		}
		head, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		base, err := os.ReadFile(filepath.Join(baseDir, rel))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			base = nil
		case err != nil:
			return err
		}
		if base != nil && bytes.Equal(head, base) {
			return nil
		}
		var ls Lines
		if base == nil || int64(len(head)) > maxFileBytes || int64(len(base)) > maxFileBytes {
			ls = all(split(head))
		} else {
			ls = Diff(split(base), split(head))
		}
		if len(ls) > 0 {
			out[filepath.ToSlash(rel)] = ls
		}
		return nil
	})
	return out, err
}

func split(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(b), "\n")
	return strings.Split(s, "\n")
}

func all(lines []string) Lines {
	ls := Lines{}
	for i := range lines {
		ls[i+1] = true
	}
	return ls
}

// Diff returns the 1-based numbers of the lines of head that are not part
// of a longest common subsequence with base: the lines added or modified.
func Diff(base, head []string) Lines {
	out := Lines{}
	pre := 0
	for pre < len(base) && pre < len(head) && base[pre] == head[pre] {
		pre++
	}
	suf := 0
	for suf < len(base)-pre && suf < len(head)-pre && base[len(base)-1-suf] == head[len(head)-1-suf] {
		suf++
	}
	b, h := base[pre:len(base)-suf], head[pre:len(head)-suf]
	if len(h) == 0 {
		return out
	}
	if len(b) == 0 || len(b)*len(h) > MaxCells {
		for i := range h {
			out[pre+i+1] = true
		}
		return out
	}
	// lcs[i][j] is the LCS length of b[i:] and h[j:].
	n, m := len(b), len(h)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if b[i] == h[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for j < m {
		switch {
		case i < n && b[i] == h[j]:
			i++
			j++
		case i < n && lcs[i+1][j] >= lcs[i][j+1]:
			i++
		default:
			out[pre+j+1] = true
			j++
		}
	}
	return out
}
