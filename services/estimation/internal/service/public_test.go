package service

import (
	"net/url"
	"strings"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/pkg/vocab"
)

func FuzzValidateRepoURL(f *testing.F) {
	for _, s := range []string{
		"https://github.com/acme/app", "http://github.com/a/b", "https://10.0.0.1/x", "https://[::1]/x",
		"https://0x7f.1/x", "https://user:pw@host/x", "https://169.254.169.254/latest", "https://host:99999/x",
		"upload://abc", "https://2130706433/", "https://[::ffff:10.0.0.1]/", "", "https://h/\x00",
	} {
		f.Add(s)
	}
	guard, err := netguard.New(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if ValidateRepoURL(guard, "repo_url", raw) != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" || u.User != nil || u.Hostname() == "" {
			t.Fatalf("accepted %q", raw)
		}
		if ip, ok := netguard.ParseIPLiteral(strings.Trim(u.Hostname(), "[]")); ok && !netguard.IsPublic(ip) {
			t.Fatalf("accepted non-public literal %q", raw)
		}
		_ = vocab.RepoKey(raw)
	})
}

func TestValidateBranch(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"", "main", "feature/x", "release-1.2"} {
		if err := ValidateBranch("branch", ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"a..b", "-x", "a b", "x.lock", "a:b", "/x", "x/", "a\\b", strings.Repeat("b", 256)} {
		if ValidateBranch("branch", bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestRepoKey(t *testing.T) {
	t.Parallel()
	if vocab.RepoKey("HTTPS://GitHub.com/Acme/App.git/") != vocab.RepoKey("https://github.com/Acme/App") {
		t.Fatal("keys differ")
	}
}
