package prdiff

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestTouchesRangeEdges(t *testing.T) {
	ch := Changes{"a.go": Lines{5: true, 9: true}}
	tests := []struct {
		name       string
		file       string
		start, end int
		want       bool
	}{
		{"unknown file", "b.go", 1, 100, false},
		{"single changed line", "a.go", 5, 5, true},
		{"range before the changes", "a.go", 1, 4, false},
		{"range between the changes", "a.go", 6, 8, false},
		{"range ending on a change", "a.go", 6, 9, true},
		{"end before start is the start line only", "a.go", 9, 1, true},
		{"end before start on an unchanged line", "a.go", 8, 1, false},
		{"range after the changes", "a.go", 10, 20, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ch.TouchesRange(tt.file, tt.start, tt.end); got != tt.want {
				t.Errorf("TouchesRange(%q, %d, %d) = %v, want %v", tt.file, tt.start, tt.end, got, tt.want)
			}
		})
	}
}

func TestDiffEdges(t *testing.T) {
	tests := []struct {
		name       string
		base, head []string
		want       []int
	}{
		{"both empty", nil, nil, []int{}},
		{"head emptied", []string{"a", "b"}, nil, []int{}},
		{"blank line added at the end", []string{"a"}, []string{"a", ""}, []int{2}},
		{"duplicate lines inserted", []string{"x", "x"}, []string{"x", "x", "x"}, []int{3}},
		{"everything replaced", []string{"a", "b"}, []string{"c", "d", "e"}, []int{1, 2, 3}},
		{"change between equal prefix and suffix", []string{"p", "a", "b", "s"}, []string{"p", "b", "a", "s"}, []int{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := keys(Diff(tt.base, tt.head))
			if len(got) != len(tt.want) {
				t.Fatalf("Diff = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("Diff = %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCompareEdges(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, base, head string)
		maxSize int64
		want    map[string][]int
	}{
		{
			name: "git directory is skipped",
			setup: func(t *testing.T, base, head string) {
				writeFile(t, head, ".git/config", "[core]\n")
				writeFile(t, head, "sub/.git/HEAD", "ref\n")
				writeFile(t, head, "main.go", "package main\n")
			},
			maxSize: 1 << 20,
			want:    map[string][]int{"main.go": {1}},
		},
		{
			name: "symlinks are not followed",
			setup: func(t *testing.T, base, head string) {
				writeFile(t, head, "real.txt", "x\n")
				writeFile(t, base, "real.txt", "x\n")
				if err := os.Symlink("real.txt", filepath.Join(head, "link.txt")); err != nil {
					t.Fatal(err)
				}
			},
			maxSize: 1 << 20,
			want:    map[string][]int{},
		},
		{
			name: "new empty file has no changed lines",
			setup: func(t *testing.T, base, head string) {
				writeFile(t, head, "empty.txt", "")
			},
			maxSize: 1 << 20,
			want:    map[string][]int{},
		},
		{
			name: "base file larger than the bound counts as changed whole",
			setup: func(t *testing.T, base, head string) {
				writeFile(t, base, "f.txt", "a\nb\nc\nlong line at the base\n")
				writeFile(t, head, "f.txt", "a\nb\nc\n")
			},
			maxSize: 8,
			want:    map[string][]int{"f.txt": {1, 2, 3}},
		},
		{
			name: "only deletions leave the file out",
			setup: func(t *testing.T, base, head string) {
				writeFile(t, base, "f.txt", "a\nb\nc\n")
				writeFile(t, head, "f.txt", "a\nc\n")
			},
			maxSize: 1 << 20,
			want:    map[string][]int{},
		},
		{
			name: "a dropped trailing newline changes no line",
			setup: func(t *testing.T, base, head string) {
				writeFile(t, base, "f.txt", "a\nb\n")
				writeFile(t, head, "f.txt", "a\nb")
			},
			maxSize: 1 << 20,
			want:    map[string][]int{},
		},
		{
			name: "nested paths use slashes",
			setup: func(t *testing.T, base, head string) {
				writeFile(t, base, "a/b/c.go", "x\n")
				writeFile(t, head, "a/b/c.go", "y\n")
			},
			maxSize: 1 << 20,
			want:    map[string][]int{"a/b/c.go": {1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, head := t.TempDir(), t.TempDir()
			tt.setup(t, base, head)
			ch, err := Compare(context.Background(), base, head, tt.maxSize)
			if err != nil {
				t.Fatalf("Compare: %v", err)
			}
			if len(ch) != len(tt.want) {
				t.Fatalf("Compare = %v, want %v", ch, tt.want)
			}
			for file, lines := range tt.want {
				got := keys(ch[file])
				if len(got) != len(lines) {
					t.Fatalf("%s: lines %v, want %v", file, got, lines)
				}
				for i := range got {
					if got[i] != lines[i] {
						t.Fatalf("%s: lines %v, want %v", file, got, lines)
					}
				}
			}
		})
	}
}

func TestCompareErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, base, head string) (context.Context, string)
		want  func(error) bool
	}{
		{
			name: "cancelled context",
			setup: func(t *testing.T, base, head string) (context.Context, string) {
				writeFile(t, head, "f.txt", "x\n")
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, head
			},
			want: func(err error) bool { return errors.Is(err, context.Canceled) },
		},
		{
			name: "missing head directory",
			setup: func(t *testing.T, base, head string) (context.Context, string) {
				return context.Background(), filepath.Join(head, "absent")
			},
			want: func(err error) bool { return errors.Is(err, os.ErrNotExist) },
		},
		{
			name: "base path is a directory where head has a file",
			setup: func(t *testing.T, base, head string) (context.Context, string) {
				writeFile(t, head, "f.txt", "x\n")
				writeFile(t, base, "f.txt/inner", "y\n")
				return context.Background(), head
			},
			want: func(err error) bool { return err != nil && !errors.Is(err, os.ErrNotExist) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, head := t.TempDir(), t.TempDir()
			ctx, dir := tt.setup(t, base, head)
			if _, err := Compare(ctx, base, dir, 1<<20); !tt.want(err) {
				t.Fatalf("Compare error = %v", err)
			}
		})
	}
}
