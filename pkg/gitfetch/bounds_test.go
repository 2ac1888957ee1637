package gitfetch

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/gittest"
)

// genRepo is a bare repository generated in-process with go-git.
type genRepo struct {
	t    *testing.T
	repo *git.Repository
	dir  string
}

func newGenRepo(t *testing.T, root string) *genRepo {
	dir := filepath.Join(root, "gen.git")
	repo, err := git.PlainInit(dir, true)
	require.NoError(t, err)
	return &genRepo{t: t, repo: repo, dir: dir}
}

func (g *genRepo) blob(content []byte) plumbing.Hash {
	obj := g.repo.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	require.NoError(g.t, err)
	_, err = w.Write(content)
	require.NoError(g.t, err)
	require.NoError(g.t, w.Close())
	h, err := g.repo.Storer.SetEncodedObject(obj)
	require.NoError(g.t, err)
	return h
}

// tree stores a tree of files (path → blob), nested directories included.
func (g *genRepo) tree(files map[string]plumbing.Hash) plumbing.Hash {
	sub := map[string]map[string]plumbing.Hash{}
	var entries []object.TreeEntry
	for p, h := range files {
		if dir, rest, ok := strings.Cut(p, "/"); ok {
			if sub[dir] == nil {
				sub[dir] = map[string]plumbing.Hash{}
			}
			sub[dir][rest] = h
			continue
		}
		entries = append(entries, object.TreeEntry{Name: p, Mode: filemode.Regular, Hash: h})
	}
	for dir, fs := range sub {
		entries = append(entries, object.TreeEntry{Name: dir, Mode: filemode.Dir, Hash: g.tree(fs)})
	}
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i].Name, entries[j].Name
		if entries[i].Mode == filemode.Dir {
			a += "/"
		}
		if entries[j].Mode == filemode.Dir {
			b += "/"
		}
		return a < b
	})
	obj := g.repo.Storer.NewEncodedObject()
	require.NoError(g.t, (&object.Tree{Entries: entries}).Encode(obj))
	h, err := g.repo.Storer.SetEncodedObject(obj)
	require.NoError(g.t, err)
	return h
}

// commit stores a commit of files on branch main (its parent: the branch's
// current head, if any) and returns its hash.
func (g *genRepo) commit(files map[string]plumbing.Hash, msg string, keepParent bool) string {
	sig := object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1_700_000_000, 0)}
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: g.tree(files)}
	if ref, err := g.repo.Reference(plumbing.NewBranchReferenceName("main"), true); err == nil && keepParent {
		c.ParentHashes = []plumbing.Hash{ref.Hash()}
	}
	obj := g.repo.Storer.NewEncodedObject()
	require.NoError(g.t, c.Encode(obj))
	h, err := g.repo.Storer.SetEncodedObject(obj)
	require.NoError(g.t, err)
	require.NoError(g.t, g.repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName("main"), h)))
	require.NoError(g.t, g.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName("main"))))
	return h.String()
}

// allowSHAWants makes the server accept wants of any reachable commit.
func (g *genRepo) allowSHAWants() {
	cfg, err := g.repo.Config()
	require.NoError(g.t, err)
	cfg.Raw.Section("uploadpack").SetOption("allowReachableSHA1InWant", "true")
	require.NoError(g.t, g.repo.Storer.SetConfig(cfg))
}

// serve serves the repositories under root over git's smart HTTP protocol
// on loopback; served, when set, is called after each response.
func serve(t *testing.T, root string, served func(*http.Request)) string {
	s, err := gittest.Serve(root, gittest.Options{Wrap: func(git http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			git.ServeHTTP(w, r)
			if served != nil {
				served(r)
			}
		})
	}})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s.URL("gen")
}

func countFiles(t *testing.T, dir string) int {
	n := 0
	require.NoError(t, filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	}))
	return n
}

// expiring is a context whose deadline passes when expire is called.
type expiring struct {
	context.Context
	once sync.Once
	done chan struct{}
}

func (e *expiring) Done() <-chan struct{} { return e.done }
func (e *expiring) Err() error {
	select {
	case <-e.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}
func (e *expiring) expire() { e.once.Do(func() { close(e.done) }) }

func TestCheckoutBounds(t *testing.T) {
	install(t)
	root := t.TempDir()
	g := newGenRepo(t, root)
	small := map[string]plumbing.Hash{}
	for i := 0; i < 50; i++ {
		small[fmt.Sprintf("src/f%02d.py", i)] = g.blob([]byte(fmt.Sprintf("print(%d)\n", i)))
	}
	smallCommit := g.commit(small, "small", false)
	// 1,000 entries pointing at one 2 MiB blob of zeros: a few kilobytes
	// packed, 2,000 MiB declared, twice the default budget.
	zero := g.blob(make([]byte, 2<<20))
	bomb := map[string]plumbing.Hash{}
	for i := 0; i < 1000; i++ {
		bomb[fmt.Sprintf("z/%04d", i)] = zero
	}
	bombCommit := g.commit(bomb, "bomb", true)
	// One blob over the per-file bound beside a small file.
	bigCommit := g.commit(map[string]plumbing.Hash{"big.bin": g.blob(make([]byte, 5<<20)), "app.py": g.blob([]byte("print(1)\n"))}, "big", true)

	var exp *expiring
	var mu sync.Mutex
	url := serve(t, root, func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if exp != nil && r.Method == http.MethodPost {
			exp.expire()
		}
	})

	fileCap := DefaultLimits
	fileCap.MaxFiles = 10
	for _, tc := range []struct {
		name   string
		commit string
		lim    Limits
		msg    string
	}{
		{"file cap", smallCommit, fileCap, "more than 10 files"},
		{"repeated blob bomb", bombCommit, DefaultLimits, "more than 1073741824 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "repo")
			_, err := Checkout(context.Background(), Source{CloneURL: url, Branch: "main", Commit: tc.commit}, dir, tc.lim)
			require.ErrorIs(t, err, ErrTooLarge)
			require.ErrorContains(t, err, tc.msg)
			require.Zero(t, countFiles(t, filepath.Dir(dir)), "nothing written or inflated, object store removed")
		})
	}
	t.Run("oversized blob skipped", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "repo")
		got, err := Checkout(context.Background(), Source{CloneURL: url, Branch: "main", Commit: bigCommit}, dir, DefaultLimits)
		require.NoError(t, err)
		require.Equal(t, bigCommit, got)
		b, err := os.ReadFile(filepath.Join(dir, "app.py"))
		require.NoError(t, err)
		require.Equal(t, "print(1)\n", string(b))
		_, err = os.Stat(filepath.Join(dir, "big.bin"))
		require.True(t, os.IsNotExist(err))
		entries, err := os.ReadDir(filepath.Dir(dir))
		require.NoError(t, err)
		require.Len(t, entries, 1, "only the files; the object store is gone")
	})
	t.Run("deadline honoured", func(t *testing.T) {
		// The deadline passes as soon as the server has sent the pack: the
		// files are not written.
		dir := filepath.Join(t.TempDir(), "repo")
		mu.Lock()
		exp = &expiring{Context: context.Background(), done: make(chan struct{})}
		ctx := exp
		mu.Unlock()
		defer func() { mu.Lock(); exp = nil; mu.Unlock() }()
		_, err := Checkout(ctx, Source{CloneURL: url, Branch: "main", Commit: smallCommit}, dir, DefaultLimits)
		require.ErrorIs(t, err, ErrTimeout)
		require.Zero(t, countFiles(t, filepath.Dir(dir)))
	})
	for _, shaWants := range []bool{false, true} {
		t.Run(fmt.Sprintf("branch moved after estimation (wants by hash %v)", shaWants), func(t *testing.T) {
			root := t.TempDir()
			g := newGenRepo(t, root)
			if shaWants {
				g.allowSHAWants()
			}
			estimated := g.commit(map[string]plumbing.Hash{"app.py": g.blob([]byte("print('estimated')\n"))}, "one", false)
			url := serve(t, root, nil)
			// The branch moves on after the estimation.
			moved := g.commit(map[string]plumbing.Hash{"app.py": g.blob([]byte("print('moved')\n")), "new.py": g.blob([]byte("x = 1\n"))}, "two", true)
			require.NotEqual(t, estimated, moved)
			dir := filepath.Join(t.TempDir(), "repo")
			got, err := Checkout(context.Background(), Source{CloneURL: url, Branch: "main", Commit: estimated}, dir, DefaultLimits)
			require.NoError(t, err)
			require.Equal(t, estimated, got)
			b, err := os.ReadFile(filepath.Join(dir, "app.py"))
			require.NoError(t, err)
			require.Equal(t, "print('estimated')\n", string(b))
			require.Equal(t, 1, countFiles(t, dir))

			// Force-pushed away: the estimated commit is gone for good.
			g.commit(map[string]plumbing.Hash{"other.py": g.blob([]byte("y = 2\n"))}, "rewritten", false)
			require.NoError(t, g.repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName("keep"), plumbing.NewHash(moved))))
			require.NoError(t, g.repo.Storer.RemoveReference(plumbing.NewBranchReferenceName("keep")))
			_, err = Checkout(context.Background(), Source{CloneURL: url, Branch: "main", Commit: estimated}, filepath.Join(t.TempDir(), "repo"), DefaultLimits)
			require.ErrorIs(t, err, ErrNotFound)
		})
	}
}
