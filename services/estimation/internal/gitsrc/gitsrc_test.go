package gitsrc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/gittest"
	"github.com/vulnscan/vulnscan/pkg/netguard"
)

// go-git's HTTPS transport is process-wide, so every test shares one
// loopback server and one installed client; each test copies the fetcher
// to set its own limits.
var (
	server  *gittest.Server
	fetcher *Fetcher
)

var roomy = Limits{MaxBytes: 64 << 20, MaxFiles: 1000, MaxTreeBytes: 64 << 20, Timeout: time.Minute}

func TestMain(m *testing.M) {
	os.Exit(func() int {
		var err error
		server, err = gittest.New(gittest.Options{TLS: true, Wrap: front})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer server.Close()
		guard, err := netguard.New([]string{"127.0.0.0/8"})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fetcher, err = New(guard, server.CAFile, roomy, "")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}())
}

// front guards repositories under private/ with basic auth and answers
// under redirect/ with redirects: to plain HTTP, to the IPv6 loopback
// (outside the exempt 127.0.0.0/8) and to itself.
func front(git http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/redirect/http/"):
			http.Redirect(w, r, "http://"+r.Host+"/elsewhere.git/info/refs?service=git-upload-pack", http.StatusFound)
			return
		case strings.HasPrefix(r.URL.Path, "/redirect/ipv6/"):
			_, port, _ := net.SplitHostPort(r.Host)
			http.Redirect(w, r, "https://[::1]:"+port+"/elsewhere.git/info/refs?service=git-upload-pack", http.StatusFound)
			return
		case strings.HasPrefix(r.URL.Path, "/redirect/loop/"):
			http.Redirect(w, r, r.URL.String(), http.StatusFound)
			return
		}
		if len(r.URL.Path) > len("/private/") && r.URL.Path[:len("/private/")] == "/private/" {
			if u, p, ok := r.BasicAuth(); !ok || u != "x-access-token" || p != "s3cret" {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		git.ServeHTTP(w, r)
	})
}

var repoSeq atomic.Int64

// repoName is a name no other run of a test in this process has used (the
// server outlives -count repetitions).
func repoName(base string) string { return fmt.Sprintf("%s-%d", base, repoSeq.Add(1)) }

func withLimits(t *testing.T, lim Limits) *Fetcher {
	t.Helper()
	return &Fetcher{Limits: lim, TempDir: t.TempDir()}
}

func requireMsg(t *testing.T, err error, want string) {
	t.Helper()
	require.Error(t, err)
	var ge *Error
	require.True(t, errors.As(err, &ge), "an *Error for the caller: %v", err)
	require.Contains(t, ge.Msg, want)
}

func TestResolveBranches(t *testing.T) {
	t.Parallel()
	repo := repoName("resolve")
	initial := server.Publish(t, repo, map[string]string{"README.md": "hi\n"})
	feature := server.Commit(t, repo, "feature", map[string]string{"f.txt": "f\n"})
	f := withLimits(t, roomy)
	ctx := context.Background()
	for _, tc := range []struct {
		name, branch, fallback string
		wantBranch, wantSHA    string
		wantErr                string
	}{
		{name: "default branch from HEAD", wantBranch: "main", wantSHA: initial},
		{name: "HEAD wins over the fallback", fallback: "feature", wantBranch: "main", wantSHA: initial},
		{name: "explicit branch", branch: "feature", wantBranch: "feature", wantSHA: feature},
		{name: "unknown branch", branch: "nope", wantBranch: "nope", wantErr: `branch "nope" not found in the repository`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			branch, sha, err := f.Resolve(ctx, Remote{URL: server.URL(repo)}, tc.branch, tc.fallback)
			require.Equal(t, tc.wantBranch, branch)
			if tc.wantErr != "" {
				requireMsg(t, err, tc.wantErr)
				require.Empty(t, sha)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantSHA, sha)
		})
	}
}

func TestResolveAccessFailures(t *testing.T) {
	t.Parallel()
	repo := repoName("private/app")
	sha := server.Publish(t, repo, map[string]string{"main.go": "package main\n"})
	f := withLimits(t, roomy)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		remote  Remote
		wantErr string
	}{
		{name: "missing repository", remote: Remote{URL: server.URL("does/not-exist")},
			wantErr: "repository not found or not accessible"},
		{name: "private without credentials", remote: Remote{URL: server.URL(repo)},
			wantErr: "repository not found or not accessible"},
		{name: "private with a wrong token", remote: Remote{URL: server.URL(repo), Password: "wrong"},
			wantErr: "repository not found or not accessible"},
		{name: "private with the token", remote: Remote{URL: server.URL(repo), Password: "s3cret"}},
		{name: "private with an explicit user", remote: Remote{URL: server.URL(repo), Username: "x-access-token", Password: "s3cret"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			branch, got, err := f.Resolve(ctx, tc.remote, "", "")
			if tc.wantErr != "" {
				requireMsg(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "main", branch)
			require.Equal(t, sha, got)
		})
	}
}

func TestCloneReadsTheCommit(t *testing.T) {
	t.Parallel()
	files := map[string]string{"go.mod": "module example.com/x\n", "cmd/x/main.go": "package main\n\nfunc main() {}\n", "docs/a.md": "# A\n"}
	repo := repoName("clone")
	server.Publish(t, repo, files)
	feature := server.Commit(t, repo, "feature", map[string]string{"extra.txt": "more\n"})
	f := withLimits(t, roomy)
	snap, err := f.Clone(context.Background(), Remote{URL: server.URL(repo)}, "feature")
	require.NoError(t, err)
	require.Equal(t, feature, snap.Commit)
	got := map[string]int64{}
	for _, fl := range snap.Files() {
		got[fl.Path] = fl.Size
	}
	want := map[string]int64{"extra.txt": 5}
	for p, s := range files {
		want[p] = int64(len(s))
	}
	require.Equal(t, want, got)
	b, err := snap.ReadFile("cmd/x/main.go")
	require.NoError(t, err)
	require.Equal(t, files["cmd/x/main.go"], string(b))
	_, err = snap.ReadFile("absent.txt")
	require.Error(t, err)

	require.DirExists(t, snap.dir)
	require.NoError(t, snap.Close())
	require.NoDirExists(t, snap.dir)
}

func TestCloneRefusals(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 12 {
		files[fmt.Sprintf("src/f%02d.txt", i)] = fmt.Sprintf("%0100d\n", i)
	}
	repo := repoName("budget")
	server.Publish(t, repo, files)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		branch  string
		lim     Limits
		wantErr string
	}{
		{name: "unknown branch", branch: "nope", lim: roomy, wantErr: `branch "nope" not found in the repository`},
		{name: "too many files", branch: "main", lim: Limits{MaxBytes: roomy.MaxBytes, MaxFiles: 5, MaxTreeBytes: roomy.MaxTreeBytes, Timeout: time.Minute},
			wantErr: "repository has more than 5 files"},
		{name: "tree too large", branch: "main", lim: Limits{MaxBytes: roomy.MaxBytes, MaxFiles: 1000, MaxTreeBytes: 500, Timeout: time.Minute},
			wantErr: "repository has files add up to more than 500 bytes"},
		{name: "transfer too large", branch: "main", lim: Limits{MaxBytes: 64, MaxFiles: 1000, MaxTreeBytes: roomy.MaxTreeBytes, Timeout: time.Minute},
			wantErr: "repository exceeds the clone size limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			f := &Fetcher{Limits: tc.lim, TempDir: tmp}
			snap, err := f.Clone(ctx, Remote{URL: server.URL(repo)}, tc.branch)
			require.Nil(t, snap)
			requireMsg(t, err, tc.wantErr)
			left, err := os.ReadDir(tmp)
			require.NoError(t, err)
			require.Empty(t, left, "a failed clone leaves nothing behind")
		})
	}
}

func TestResolveTransferBudget(t *testing.T) {
	t.Parallel()
	repo := repoName("tiny-budget")
	server.Publish(t, repo, map[string]string{"a.txt": "a\n"})
	f := withLimits(t, Limits{MaxBytes: 8, MaxFiles: 10, MaxTreeBytes: 1 << 20, Timeout: time.Minute})
	_, _, err := f.Resolve(context.Background(), Remote{URL: server.URL(repo)}, "", "")
	requireMsg(t, err, "repository exceeds the clone size limit")
}

func TestChangeMeasuresFromTheMergeBase(t *testing.T) {
	t.Parallel()
	repo := repoName("change")
	initial := server.Publish(t, repo, map[string]string{"a.txt": "1\n2\n3\n", "b.txt": "x\n"})
	// feature: one line replaced and one added in a.txt (3 lines), a new
	// two-line file.
	head := server.Commit(t, repo, "feature", map[string]string{"a.txt": "1\n2\nthree\n4\n", "c.txt": "new\nfile\n"})
	// main moves on after feature branched off; that is not part of the change.
	mainTip := server.Commit(t, repo, "main", map[string]string{"d.txt": "later\n", "b.txt": "y\nz\n"})
	f := withLimits(t, roomy)
	ctx := context.Background()
	remote := Remote{URL: server.URL(repo)}
	for _, tc := range []struct {
		name                          string
		headBranch, head, base, baseC string
		want                          Change
		wantErr                       string
	}{
		{name: "base branch tip", headBranch: "feature", head: head, base: "main",
			want: Change{Base: initial, Files: 2, Lines: 5}},
		{name: "base commit on the base branch", headBranch: "feature", head: head, base: "main", baseC: initial,
			want: Change{Base: initial, Files: 2, Lines: 5}},
		{name: "base commit is the base tip", headBranch: "feature", head: head, base: "main", baseC: mainTip,
			want: Change{Base: initial, Files: 2, Lines: 5}},
		{name: "reverse direction", headBranch: "main", head: mainTip, base: "feature",
			want: Change{Base: initial, Files: 2, Lines: 4}}, // d.txt +1, b.txt -1 +2
		{name: "base commit outside the base branch", headBranch: "feature", head: head, base: "main", baseC: head,
			wantErr: "is not in the history of base branch \"main\""},
		{name: "unknown base commit", headBranch: "feature", head: head, base: "main", baseC: "0123456789abcdef0123456789abcdef01234567",
			wantErr: "is not in the history of base branch \"main\""},
		{name: "unknown base branch", headBranch: "feature", head: head, base: "nope",
			wantErr: `base branch "nope" not found in the repository`},
		{name: "head moved", headBranch: "feature", head: "89abcdef0123456789abcdef0123456789abcdef", base: "main",
			wantErr: `branch "feature" moved while it was being estimated`},
		{name: "empty change", headBranch: "feature", head: initial, base: "main",
			wantErr: `the change is empty: the head of branch "feature" is already in base branch "main"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.Change(ctx, remote, tc.headBranch, tc.head, tc.base, tc.baseC)
			if tc.wantErr != "" {
				requireMsg(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	left, err := os.ReadDir(f.TempDir)
	require.NoError(t, err)
	require.Empty(t, left, "every measurement removes its clone")
}

func TestExplainMapsFailures(t *testing.T) {
	t.Parallel()
	lim := Limits{MaxBytes: 3 << 20, Timeout: 90 * time.Second}
	own := &Error{Msg: "kept as is"}
	for _, tc := range []struct {
		name     string
		err      error
		exceeded bool
		want     string
	}{
		{name: "own error", err: own, want: "kept as is"},
		{name: "budget exceeded", err: errors.New("unexpected EOF"), exceeded: true, want: "repository exceeds the clone size limit of 3 MiB"},
		{name: "deadline", err: fmt.Errorf("list: %w", context.DeadlineExceeded), want: "clone timed out after 1m30s"},
		{name: "blocked", err: fmt.Errorf("dial: %w", netguard.ErrBlocked), want: "clone refused: the repository host resolves to a non-public address"},
		{name: "redirect", err: errors.New("Get x: stopped after redirect: to a private host"), want: "clone refused: to a private host"},
		{name: "tls", err: errors.New("Get x: tls: x509: certificate signed by unknown authority"), want: "TLS certificate of the repository host is not trusted"},
		{name: "other", err: errors.New("read: connection reset by peer"), want: "cannot read the repository: connection reset by peer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := explain(tc.err, func() bool { return tc.exceeded }, lim)
			requireMsg(t, got, tc.want)
		})
	}
}

// TestRemoteMessagesAreText: the end of a clone's error may quote the
// remote's own message, whatever its bytes; the failure keeps it as text
// fit to store, cut at a character (a NUL there made the estimation's job
// fail to record the failure, attempt after attempt).
func TestRemoteMessagesAreText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ remote, want string }{
		{"caf\xe9 \x00 refus\xe9", "cannot read the repository: café \uFFFD refusé"},
		{"a" + strings.Repeat("é", 150), "cannot read the repository: a" + strings.Repeat("é", 99)},
	} {
		err := explain(errors.New("remote: "+tc.remote), func() bool { return false }, Limits{})
		var ge *Error
		require.True(t, errors.As(err, &ge), "%v", err)
		require.Equal(t, tc.want, ge.Msg)
	}
}

func TestNetworkRefusals(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(server.URL("any"))
	require.NoError(t, err)
	f := withLimits(t, roomy)
	for _, tc := range []struct {
		name, url, wantErr string
	}{
		{name: "non-public address", url: "https://[::1]:" + u.Port() + "/any.git",
			wantErr: "clone refused: the repository host resolves to a non-public address"},
		{name: "redirect to the IPv6 loopback", url: server.URL("redirect/ipv6/app"),
			wantErr: "clone refused: the repository host resolves to a non-public address"},
		{name: "redirect to plain HTTP", url: server.URL("redirect/http/app"),
			wantErr: "clone refused: the repository redirects to a plain-HTTP URL; only HTTPS is followed"},
		{name: "redirect loop", url: server.URL("redirect/loop/app"),
			wantErr: "clone refused: stopped after 5 redirects"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := f.Resolve(context.Background(), Remote{URL: tc.url}, "", "")
			requireMsg(t, err, tc.wantErr)
			snap, err := f.Clone(context.Background(), Remote{URL: tc.url}, "main")
			require.Nil(t, snap)
			requireMsg(t, err, tc.wantErr)
		})
	}
}

func TestResolveWithoutAnAdvertisedHEAD(t *testing.T) {
	t.Parallel()
	repo := repoName("headless")
	server.Publish(t, repo, map[string]string{"a.txt": "a\n"})
	feature := server.Commit(t, repo, "feature", map[string]string{"b.txt": "b\n"})
	// HEAD names a branch that does not exist, so the server advertises no HEAD.
	gittest.Run(t, filepath.Join(server.Root, repo+".git"), "symbolic-ref", "HEAD", "refs/heads/gone")
	f := withLimits(t, roomy)
	for _, tc := range []struct {
		name, fallback, wantBranch, wantSHA, wantErr string
	}{
		{name: "fallback default", fallback: "feature", wantBranch: "feature", wantSHA: feature},
		{name: "fallback to a missing branch", fallback: "gone", wantBranch: "gone", wantErr: `branch "gone" not found in the repository`},
		{name: "no default at all", wantErr: "cannot determine the repository's default branch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			branch, sha, err := f.Resolve(context.Background(), Remote{URL: server.URL(repo)}, "", tc.fallback)
			require.Equal(t, tc.wantBranch, branch)
			if tc.wantErr != "" {
				requireMsg(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantSHA, sha)
		})
	}
}
