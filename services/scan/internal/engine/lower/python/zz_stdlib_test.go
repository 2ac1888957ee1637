package python

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vulnscan/vulnscan/services/scan/internal/engine/ir"
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/syntax"
)

func TestZZStdlib(t *testing.T) {
	dir := os.Getenv("STDLIB")
	if dir == "" {
		t.Skip()
	}
	p := syntax.NewParser(syntax.Limits{})
	var lines, files int
	var lowerTime time.Duration
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !strings.HasSuffix(path, ".py") {
			return nil
		}
		src, _ := os.ReadFile(path)
		root, _, err := p.Parse(context.Background(), syntax.Python, src)
		if err != nil {
			return nil
		}
		start := time.Now()
		f, err := Lower(strings.TrimPrefix(path, dir+"/"), src, root)
		lowerTime += time.Since(start)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		if err := ir.ValidateFile(f); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		files++
		lines += f.Lines
		return nil
	})
	t.Logf("%d files, %d lines, lowering %.0f lines/s", files, lines, float64(lines)/lowerTime.Seconds())
}
