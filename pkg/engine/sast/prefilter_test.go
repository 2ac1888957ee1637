package sast

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestRequiredLiterals(t *testing.T) {
	for _, tc := range []struct {
		re   string
		want []string
	}{
		{`shell=True`, []string{"shell=true"}},
		{`(?i)^[\w.]*(password|secret)\w*=['"][^'"]{4,}['"]$`, []string{"password", "secret"}},
		{`^hashlib\.(md5|sha1)\(`, []string{"hashlib."}},
		{`(a|b*)`, nil}, // one alternative needs nothing
		{`x?`, nil},     // optional
		{`[Ss]ecret`, []string{"ecret"}},
		{`(?i)ſecret`, []string{"secret"}}, // the parser folds ſ to s; texts with ſ skip the filter
		{`(ab){2,}`, []string{"ab"}},
		{`(ab){0,3}`, nil},
		{`(`, nil}, // does not parse: no filter
	} {
		got := requiredLiterals(tc.re)
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("requiredLiterals(%q) = %q, want %q", tc.re, got, tc.want)
		}
	}
}

// The filter must never reject a text the regex matches.
func TestPrefilterKeepsMatches(t *testing.T) {
	texts := []string{
		"db_password='hunter22'", "DB_PASSWORD='hunter22'", "api_key=\"abcd1234\"", "name='x'",
		"subprocess.call(cmd, shell=True)", "subprocess.call(cmd, SHELL=true)", "hashlib.md5(x)",
		"HashLib.md5(x)", "ſecret='abcdef'", "password = 'é'", "", "p", "ab", "abab",
	}
	exprs := []string{
		`(?i)^[\w.]*(password|passwd|pwd|secret|api_?key|access_?key|auth_?token|private_?key)\w*=['"][^'"]{4,}['"]$`,
		`shell=True`, `^hashlib\.(md5|sha1)\(`, `(?i)secret`, `(?i)ſecret`, `(ab){2,}`, `(?i)HASHLIB\.md5`,
	}
	for _, e := range exprs {
		re := regexp.MustCompile(e)
		lits := requiredLiterals(e)
		for _, text := range texts {
			if re.MatchString(text) && !containsAnyFold(text, lits) {
				t.Errorf("%q matches %q but the filter %q rejects it", e, text, lits)
			}
		}
	}
	if lits := requiredLiterals(exprs[0]); containsAnyFold("name = 'value'", lits) {
		t.Errorf("filter %q keeps a text with none of its literals", lits)
	}
}

func TestDropSpace(t *testing.T) {
	for _, in := range []string{
		"", "a b", " \t\n x ( y ,\r\n z ) ", "a\u00a0b\u0085c\u2003d", "caf\u00e9 \u00e9t\u00e9", "\xff \xfe\x80 a", "\v\f",
		"request . getParameter ( \"id\" )",
	} {
		want := strings.Join(strings.Fields(in), "")
		if got := dropSpace([]byte(in)); got != want {
			t.Errorf("dropSpace(%q) = %q, want %q", in, got, want)
		}
	}
}
