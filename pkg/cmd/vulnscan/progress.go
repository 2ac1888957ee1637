package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
)

// progress reports what a command is doing on stderr: on a terminal one
// line redrawn in place with a bar; in CI (CI=true, or stderr not a
// terminal) plain lines, one per step and one per ten percent of a scan, so
// job logs stay short and readable.
type progress struct {
	w      io.Writer
	tty    bool
	drawn  bool // a bar is on the current line
	status string
	bucket int
}

func newProgress(e env) *progress {
	tty := false
	if f, ok := e.stderr.(*os.File); ok {
		tty = isatty.IsTerminal(f.Fd())
	}
	if ci := strings.ToLower(e.getenv("CI")); ci == "true" || ci == "1" {
		tty = false
	}
	return &progress{w: e.stderr, tty: tty, bucket: -1}
}

// line prints one step.
func (p *progress) line(format string, args ...any) {
	p.clear()
	_, _ = fmt.Fprintf(p.w, format+"\n", args...)
}

// bar shows a scan's status and progress.
func (p *progress) bar(what, status string, pct int) {
	pct = max(0, min(100, pct))
	if p.tty {
		const width = 30
		n := pct * width / 100
		_, _ = fmt.Fprintf(p.w, "\r\033[K%s [%s%s] %3d%% %s", what, strings.Repeat("#", n), strings.Repeat(".", width-n), pct, status)
		p.drawn = true
		return
	}
	if status != p.status || pct/10 != p.bucket {
		p.status, p.bucket = status, pct/10
		_, _ = fmt.Fprintf(p.w, "%s: %s %d%%\n", what, status, pct)
	}
}

// clear ends a drawn bar's line.
func (p *progress) clear() {
	if p.drawn {
		_, _ = fmt.Fprint(p.w, "\n")
		p.drawn = false
	}
}
