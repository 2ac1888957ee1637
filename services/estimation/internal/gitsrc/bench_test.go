package gitsrc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vulnscan/vulnscan/pkg/gittest"
	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/services/estimation/internal/detect"
)

// mediumRepo writes a repository of about 1,200 files and 120,000 lines:
// a Go service, a Python service and a TypeScript front end.
func mediumRepo(b testing.TB, dir string) {
	b.Helper()
	write := func(p, s string) {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("api/go.mod", "module example.com/api\n\ngo 1.22\n\nrequire github.com/gin-gonic/gin v1.9.1\n")
	write("worker/requirements.txt", "celery\nredis\n")
	write("web/package.json", `{"name":"web","dependencies":{"react":"18"},"devDependencies":{"typescript":"5"}}`)
	for i := range 400 {
		var sb strings.Builder
		fmt.Fprintf(&sb, "package main\n\n")
		for j := range 50 {
			fmt.Fprintf(&sb, "func f%d_%d(x int) int {\n\treturn x + %d\n}\n\n", i, j, j)
		}
		write(fmt.Sprintf("api/pkg%d/f%d.go", i%20, i), sb.String())
		sb.Reset()
		for j := range 50 {
			fmt.Fprintf(&sb, "def f%d_%d(x):\n    return x + %d\n\n", i, j, j)
		}
		write(fmt.Sprintf("worker/mod%d/m%d.py", i%20, i), sb.String())
		sb.Reset()
		for j := range 50 {
			fmt.Fprintf(&sb, "export function f%d_%d(x: number): number {\n  return x + %d;\n}\n", i, j, j)
		}
		write(fmt.Sprintf("web/src/c%d/m%d.ts", i%20, i), sb.String())
	}
}

// BenchmarkEstimateMediumRepo compares an estimation's resolve + shallow
// clone + detection of a medium repository with a plain `git clone
// --depth 1` of it, both over HTTPS on loopback.
func BenchmarkEstimateMediumRepo(b *testing.B) {
	work := b.TempDir()
	mediumRepo(b, work)
	srv := gittest.Start(b, gittest.Options{TLS: true})
	srv.PublishDir(b, "medium", work)
	ca := srv.CAFile
	guard, err := netguard.New([]string{"127.0.0.0/8"})
	if err != nil {
		b.Fatal(err)
	}
	f, err := New(guard, ca, Limits{MaxBytes: 1 << 30, MaxFiles: 100_000, MaxTreeBytes: 1 << 30, Timeout: time.Minute}, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	url := srv.URL("medium")

	b.Run("estimate", func(b *testing.B) {
		for b.Loop() {
			ctx := context.Background()
			branch, _, err := f.Resolve(ctx, Remote{URL: url}, "", "")
			if err != nil {
				b.Fatal(err)
			}
			snap, err := f.Clone(ctx, Remote{URL: url}, branch)
			if err != nil {
				b.Fatal(err)
			}
			res := detect.Analyze(snap, "medium")
			_ = snap.Close()
			if len(res.Apps) != 3 {
				b.Fatalf("apps: %+v", res.Apps)
			}
		}
	})
	b.Run("git-clone", func(b *testing.B) {
		for b.Loop() {
			dst := filepath.Join(b.TempDir(), "c")
			cmd := exec.Command("git", "clone", "-q", "--depth", "1", url, dst)
			cmd.Env = srv.CloneEnv()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
}
