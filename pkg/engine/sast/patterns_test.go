package sast_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/sast"
)

// shared returns an analyzer with the default limits (rules and models are
// compiled once per process by New).
func shared(t *testing.T) *sast.Analyzer {
	t.Helper()
	a, err := sast.New(sast.DefaultLimits)
	require.NoError(t, err)
	return a
}

var mark = regexp.MustCompile(`want:([\w.\-]+)`)

// patternHits prepares one file and returns its pattern findings as sorted
// "rule:line" strings, together with the "want:<rule>" marks of the source.
func patternHits(t *testing.T, file, src string) (got, want []string) {
	t.Helper()
	w := shared(t).NewWorker()
	defer w.Close()
	p, err := w.Prepare(context.Background(), file, []byte(src))
	require.NoError(t, err)
	got, want = []string{}, []string{}
	for _, f := range p.Findings {
		require.Equal(t, file, f.AffectedFile)
		require.NotEmpty(t, f.AffectedCode)
		require.NotEmpty(t, f.FingerprintKey)
		got = append(got, fmt.Sprintf("%s:%d", f.RuleID, f.StartLine))
	}
	for i, line := range strings.Split(src, "\n") {
		for _, m := range mark.FindAllStringSubmatch(line, -1) {
			want = append(want, fmt.Sprintf("%s:%d", m[1], i+1))
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	return got, want
}

func TestPatternRules(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, file, src string }{
		{"python verify=False", "a.py", `import requests
requests.get(url, verify=False)  # want:python.tls.verify-disabled
requests.get(url, verify=True)
requests.get(url, verify=ca_bundle)
`},
		{"python unverified context", "a.py", `import ssl
ssl._create_unverified_context()  # want:python.tls.unverified-context
ok = ssl.create_default_context()
ok.check_hostname = False  # want:python.tls.unverified-context
ctx = ssl._create_unverified_context()  # want:python.tls.unverified-context
ok.check_hostname = True
`},
		{"flask debug", "a.py", `app.run(debug=True)  # want:python.debug.flask
app.run(debug=False)
app.run(host="0.0.0.0")
`},
		{"django DEBUG setting", "settings.py", `DEBUG = True  # want:python.debug.django
TEMPLATE_DEBUG = True
`},
		{"django DEBUG off", "settings.py", "DEBUG = False\n"},
		{"yaml.load without a safe loader", "a.py", `import yaml
yaml.load(data)  # want:python.deser.yaml-load
yaml.load(data, Loader=yaml.SafeLoader)
yaml.safe_load(data)
`},
		{"subprocess shell with a built command", "a.py", `import subprocess
subprocess.run("ls " + d, shell=True)  # want:python.cmdi.subprocess-shell
subprocess.run("ls -l", shell=True)
subprocess.run(["ls", d])
`},
		{"pattern text in comments is ignored", "a.py", `# requests.get(url, verify=False)
x = 1
`},
		{"go InsecureSkipVerify", "a.go", `package a
import "crypto/tls"
var c = &tls.Config{InsecureSkipVerify: true} // want:go.tls.insecure-skip-verify
var d = &tls.Config{InsecureSkipVerify: false}
func f(c *tls.Config) { c.InsecureSkipVerify = true } // want:go.tls.insecure-skip-verify
`},
		{"go pprof import", "a.go", `package a
import (
	_ "net/http/pprof" // want:go.debug.pprof
	"net/http"
)
var _ = http.ListenAndServe
`},
		{"gin debug mode", "a.go", `package a
import "github.com/gin-gonic/gin"
func f() {
	gin.SetMode(gin.DebugMode) // want:go.debug.gin-debug
	gin.SetMode(gin.ReleaseMode)
}
`},
		{"node rejectUnauthorized", "a.js", `const https = require("https");
const agent = new https.Agent({ rejectUnauthorized: false }); // want:js.tls.reject-unauthorized
const ok = new https.Agent({ rejectUnauthorized: true });
process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0"; // want:js.tls.reject-unauthorized
`},
		{"java stack trace to the response", "A.java", `class A {
  void f(javax.servlet.http.HttpServletResponse response, Exception e) throws Exception {
    e.printStackTrace(response.getWriter()); // want:java.debug.stack-trace
    e.printStackTrace();
  }
}
`},
		{"php curl verification off", "a.php", `<?php
curl_setopt($ch, CURLOPT_SSL_VERIFYPEER, false); // want:php.tls.verify-disabled
curl_setopt($ch, CURLOPT_SSL_VERIFYHOST, 0); // want:php.tls.verify-disabled
curl_setopt($ch, CURLOPT_SSL_VERIFYPEER, true);
$opts = ['verify' => false]; // want:php.tls.verify-disabled
$good = ['verify' => true];
`},
		{"ruby verify none", "a.rb", `http.verify_mode = OpenSSL::SSL::VERIFY_NONE # want:ruby.tls.verify-disabled
http.verify_mode = OpenSSL::SSL::VERIFY_PEER
Faraday.new(url, ssl: { verify: false }) # want:ruby.tls.verify-disabled
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, want := patternHits(t, tc.file, tc.src)
			require.Equal(t, want, got)
		})
	}
}

func TestPrepareFileWithoutFrontEnd(t *testing.T) {
	t.Parallel()
	w := shared(t).NewWorker()
	defer w.Close()
	for _, f := range []string{"README.md", "data.csv", "Makefile", "noext"} {
		p, err := w.Prepare(context.Background(), f, []byte("exec(x)\n"))
		require.NoError(t, err, f)
		require.Nil(t, p.IR, f)
		require.Empty(t, p.Findings, f)
		require.NoError(t, w.ParseOnly(context.Background(), f, []byte("x")))
	}
}

func TestPrepareSetsLanguageAndNodes(t *testing.T) {
	t.Parallel()
	w := shared(t).NewWorker()
	defer w.Close()
	cases := map[string]string{
		"a.py": "python", "a.js": "javascript", "a.mjs": "javascript", "a.ts": "typescript", "a.tsx": "typescript",
		"a.go": "go", "A.java": "java", "a.php": "php", "a.rb": "ruby",
	}
	for file, lang := range cases {
		p, err := w.Prepare(context.Background(), file, []byte("\n"))
		require.NoError(t, err, file)
		require.NotNil(t, p.IR, file)
		require.Equal(t, lang, p.IR.Lang, file)
		require.Equal(t, lang, sast.Language(file))
		require.NoError(t, w.ParseOnly(context.Background(), file, []byte("\n")), file)
	}
	require.Empty(t, sast.Language("a.txt"))
	require.Empty(t, sast.Language("py"))
}

func TestPrepareLimits(t *testing.T) {
	t.Parallel()
	a, err := sast.New(sast.Limits{MaxDepth: 20, MaxNodes: 200, Timeout: sast.DefaultLimits.Timeout})
	require.NoError(t, err)
	w := a.NewWorker()
	defer w.Close()

	deep := "x = " + strings.Repeat("(", 60) + "1" + strings.Repeat(")", 60) + "\n"
	_, err = w.Prepare(context.Background(), "deep.py", []byte(deep))
	require.ErrorIs(t, err, sast.ErrTooDeep)
	require.Equal(t, "too_deep", sast.SkipReason(err))

	wide := strings.Repeat("a = 1\n", 500)
	_, err = w.Prepare(context.Background(), "wide.py", []byte(wide))
	require.ErrorIs(t, err, sast.ErrTooLarge)
	require.Equal(t, "too_many_nodes", sast.SkipReason(err))

	p, err := w.Prepare(context.Background(), "small.py", []byte("a = 1\n"))
	require.NoError(t, err)
	require.NotNil(t, p.IR)
	require.Positive(t, p.Nodes)
}

func TestSkipReason(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		want string
	}{
		{sast.ErrTooDeep, "too_deep"},
		{fmt.Errorf("file x: %w", sast.ErrTooDeep), "too_deep"},
		{sast.ErrTooLarge, "too_many_nodes"},
		{sast.ErrTimeout, "time_limit"},
		{context.DeadlineExceeded, "time_limit"},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), "time_limit"},
		{sast.ErrNoParse, "parse_error"},
		{errors.New("anything else"), "parse_error"},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, sast.SkipReason(tc.err), "%v", tc.err)
	}
}

func TestAnalyzerHasNoProblems(t *testing.T) {
	t.Parallel()
	require.Empty(t, shared(t).Problems())
}

func TestAnalyzeCombinesPatternAndFlowFindings(t *testing.T) {
	t.Parallel()
	w := shared(t).NewWorker()
	defer w.Close()
	src := "from flask import request\nimport os, requests\ndef h():\n    requests.get('https://x', verify=False)\n    os.system(request.args.get('c'))\n"
	out, err := w.Analyze(context.Background(), "h.py", []byte(src))
	require.NoError(t, err)
	got := map[string]int{}
	for _, f := range out {
		got[f.RuleID] = f.StartLine
		require.Equal(t, "python", f.Language)
		require.NotEmpty(t, f.Fingerprint+f.FingerprintKey)
	}
	require.Equal(t, map[string]int{"python.tls.verify-disabled": 4, "python.cmdi.shell": 5}, got)
}
