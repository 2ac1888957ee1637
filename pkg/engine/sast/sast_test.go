package sast

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRulesLoad(t *testing.T) {
	t.Parallel()
	a, err := New(Limits{})
	require.NoError(t, err)
	require.Empty(t, a.Problems(), "every embedded rule must validate")
	langs := map[string]int{}
	for _, r := range a.Rules() {
		for _, l := range r.Languages {
			langs[l]++
		}
	}
	for _, l := range []string{"python", "javascript", "typescript", "go", "java"} {
		require.GreaterOrEqual(t, langs[l], 15, l)
	}
	for _, l := range []string{"php", "ruby"} {
		require.GreaterOrEqual(t, langs[l], 13, l)
	}
}

func TestTaintThroughCallsAndReturns(t *testing.T) {
	t.Parallel()
	a, err := New(Limits{})
	require.NoError(t, err)
	w := a.NewWorker()
	defer w.Close()
	src := `from flask import request
import os

def wrap(v):
    return "echo " + v

def run(cmd):
    os.system(cmd)

def handler():
    data = request.args.get("x")
    parts = []
    parts.append(data)
    run(wrap(" ".join(parts)))
`
	out, err := w.Analyze(context.Background(), "h.py", []byte(src))
	require.NoError(t, err)
	require.Len(t, out, 1)
	require.Equal(t, "python.cmdi.shell", out[0].RuleID)
	require.Equal(t, 8, out[0].StartLine)
	tr := *out[0].MermaidTrace
	require.True(t, strings.HasPrefix(tr, "flowchart TD\n"))
	require.Contains(t, tr, "h.py:11")
	require.Contains(t, tr, "h.py:8")
	require.Contains(t, tr, "-->")
}

func TestTaintPHPAndRuby(t *testing.T) {
	t.Parallel()
	a, err := New(Limits{})
	require.NoError(t, err)
	w := a.NewWorker()
	defer w.Close()
	php := `<?php
class Ctl {
    private function wrap($v) { return "ls " . $v; }
    private function run($cmd) { shell_exec($cmd); }
    public function handle(Request $request) {
        $parts = [];
        foreach ($request->input('dirs') as $d) { $parts[] = $d; }
        $this->run($this->wrap(implode(" ", $parts)));
        $n = (int) $request->input('n');
        system("seq " . $n);
    }
}
`
	out, err := w.Analyze(context.Background(), "app/Ctl.php", []byte(php))
	require.NoError(t, err)
	require.Len(t, out, 1)
	require.Equal(t, "php.cmdi.shell", out[0].RuleID)
	require.Equal(t, 4, out[0].StartLine)
	require.Contains(t, *out[0].MermaidTrace, "app/Ctl.php:7")

	rb := `class FilesController < ApplicationController
  def show
    names = params[:names]
    names.each do |n|
      path = build(n)
      send_file path
    end
    send_file build(params[:id].to_i)
  end

  private

  def build(name)
    "/srv/files/#{name}"
  end
end
`
	out, err = w.Analyze(context.Background(), "app/controllers/files_controller.rb", []byte(rb))
	require.NoError(t, err)
	require.Len(t, out, 1)
	require.Equal(t, "ruby.path.file-access", out[0].RuleID)
	require.Equal(t, 6, out[0].StartLine)
	require.Contains(t, *out[0].MermaidTrace, "files_controller.rb:3")
	require.Equal(t, "php", Language("x.phtml"))
	require.Equal(t, "ruby", Language("x.rb"))
}

func TestHostileInputIsBounded(t *testing.T) {
	t.Parallel()
	a, err := New(Limits{MaxDepth: 100, MaxNodes: 20_000, Timeout: time.Second})
	require.NoError(t, err)
	w := a.NewWorker()
	defer w.Close()
	tests := []struct {
		file string
		src  string
		want error
	}{
		{"deep.js", "x = " + strings.Repeat("[", 2000) + strings.Repeat("]", 2000), ErrTooDeep},
		{"wide.go", "package p\nvar x = []int{" + strings.Repeat("1,", 30_000) + "}\n", ErrTooLarge},
		{"bin.java", "\x00\xff\xfe class {{{{", nil},
		{"deep.php", "<?php $x = " + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + ";", ErrTooDeep},
		{"deep.rb", "x = " + strings.Repeat("[", 2000) + strings.Repeat("]", 2000), ErrTooDeep},
		{"bin.rb", "\x00\xff\xfe def end end {{{{", nil},
	}
	for _, tc := range tests {
		_, err := w.Analyze(context.Background(), tc.file, []byte(tc.src))
		switch {
		case tc.want == nil:
			require.NoError(t, err, tc.file)
		case tc.want == ErrTooLarge:
			// a very wide file may hit the node or the time limit first
			require.True(t, errors.Is(err, ErrTooLarge) || errors.Is(err, ErrTimeout), "%s: %v", tc.file, err)
		default:
			require.ErrorIs(t, err, tc.want, tc.file)
		}
	}
}

var fuzzSeeds = map[string]string{
	"a.py":   "from flask import request\nimport os\ndef f():\n    x = request.args['a']\n    os.system('x' + x)\n",
	"a.js":   "app.get('/', (req, res) => { res.send(req.query.a) })\n",
	"a.ts":   "export function f(req: any) { return db.query(`SELECT ${req.query.id}`) }\n",
	"a.tsx":  "export const C = (p: {x: string}) => <div dangerouslySetInnerHTML={{__html: p.x}} />\n",
	"a.go":   "package p\nimport \"net/http\"\nfunc h(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, r.FormValue(\"n\"), 302) }\n",
	"A.java": "class A { void f(javax.servlet.http.HttpServletRequest request) { new java.io.File(request.getParameter(\"f\")); } }\n",
	"a.php":  "<?php\nfunction f($db) { $q = \"SELECT \" . $_GET['id']; return mysqli_query($db, $q); }\necho `ls {$_POST['d']}`;\n?>\n<p><?= $x ?></p>\n",
	"a.rb":   "class C < ApplicationController\n  def s\n    items.each { |i| system(\"ls #{params[:d]}\") }\n    redirect_to params[:u]\n  end\nend\n",
}

// FuzzAnalyze feeds arbitrary bytes to every language's parser and rules.
func FuzzAnalyze(f *testing.F) {
	for name, src := range fuzzSeeds {
		f.Add(name, []byte(src))
	}
	f.Add("x.py", []byte(strings.Repeat("(", 500)))
	f.Add("x.js", []byte("\x00\x01\x02\xff"))
	a, err := New(Limits{MaxDepth: 200, MaxNodes: 200_000, Timeout: 2 * time.Second})
	require.NoError(f, err)
	exts := []string{"py", "js", "ts", "tsx", "go", "java", "php", "rb"}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		w := a.NewWorker()
		defer w.Close()
		file := fmt.Sprintf("f.%s", exts[len(name)%len(exts)])
		out, err := w.Analyze(context.Background(), file, data)
		if err != nil {
			return
		}
		for _, fd := range out {
			require.GreaterOrEqual(t, fd.StartLine, 1)
			require.GreaterOrEqual(t, fd.EndLine, fd.StartLine)
		}
	})
}
