package sast

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// The trace shows each step's code as written: spaces inside string literals
// and between tokens survive, and only Mermaid's own syntax is escaped.
func TestMermaidTraceKeepsCodeAsWritten(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, src, want string
	}{
		{"ping.py", "from flask import request\nimport os\n\ndef handler():\n    host = request.args.get(\"host\")\n    os.system(\"ping -c 1 \" + host)\n",
			`os.system(#quot;ping -c 1 #quot; + host)`},
		{"ping.js", "const cp = require('child_process');\nconst express = require('express');\nconst app = express();\napp.get('/p', (req, res) => {\n  cp.exec(\"ping -c 1 \" + req.query.host);\n});\n",
			`cp.exec(#quot;ping -c 1 #quot; + req.query.host);`},
		{"ping.php", "<?php\n$host = $_GET['host'];\nsystem(\"ping -c 1 \" . $host);\n",
			`system(#quot;ping -c 1 #quot; . $host);`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			a, err := New(Limits{})
			require.NoError(t, err)
			w := a.NewWorker()
			defer w.Close()
			out, err := w.Analyze(context.Background(), tc.file, []byte(tc.src))
			require.NoError(t, err)
			require.NotEmpty(t, out)
			require.NotNil(t, out[0].MermaidTrace)
			tr := *out[0].MermaidTrace
			t.Log(tr)
			require.Contains(t, tr, tc.want)
			for _, line := range strings.Split(strings.TrimSpace(tr), "\n")[1:] {
				require.True(t, strings.HasPrefix(line, "  n"), "every line is a node or an edge: %q", line)
			}
		})
	}
}

func TestMermaidEscape(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 99) + "日本"
	for _, tc := range []struct{ in, want string }{
		{`os.system("ping -c 1 " + host)`, `os.system(#quot;ping -c 1 #quot; + host)`},
		{"a\tb  c", "a\tb  c"},
		{"#include <stdio.h>", "#35;include #lt;stdio.h#gt;"},
		{"x = `id`", "x = #96;id#96;"},
		{"a#quot;b", "a#35;quot;b"},
		{"one\r\ntwo\nthree", "one two three"},
		{long, strings.Repeat("é", 99) + "日…"},
		{"bad \xff byte", "bad \uFFFD byte"},
	} {
		got := mermaidEscape(tc.in)
		require.Equal(t, tc.want, got, "escape %q", tc.in)
		require.True(t, utf8.ValidString(got))
	}
}
