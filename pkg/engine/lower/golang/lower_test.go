package golang

import (
	"context"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// lowerSource parses and lowers one file.
func lowerSource(t testing.TB, path string, src []byte) *ir.File {
	t.Helper()
	return lowertest.Lower(t, syntax.Go, Lower, path, src)
}

// Each case is a small file; its IR dump is compared with
// testdata/golden/<name>.ir (go test -run TestLowerGolden -update rewrites them).
var goldenCases = []struct{ name, src string }{
	{"imports", `package app
import (
	"fmt"
	h "net/http"
	. "strings"
	_ "embed"
	"github.com/labstack/echo/v4"
	"gopkg.in/yaml.v3"
)
var Prefix = "p"
func run(r *h.Request, c echo.Context) {
	fmt.Println(ToUpper(r.FormValue("q")), yaml.Marshal, Prefix, helper(1), h.StatusFound)
	h.HandleFunc("/", handle)
	Prefix = "x"
}
func handle(w h.ResponseWriter, r *h.Request) {}
`},
	{"types", `package app
import (
	"database/sql"
	"io"
)
type Base struct{ ID int }
type Store struct {
	Base
	db   *sql.DB
	Name, Kind string
	tags []string
}
type Reader interface {
	io.Closer
	Read(p []byte) (int, error)
}
func (s *Store) Find(name string) (*sql.Rows, error) { return s.db.Query(name) }
func (Store) Static() {}
func use(s *Store) {
	rows, err := s.Find("x")
	_ = rows
	_ = err
	p := &Store{Name: "n", Kind: "k"}
	q := new(Store)
	r := Base{7}
	var z Store
	_, _, _, _ = p, q, r, z
}
`},
	{"interfaces", `package app
type Finder interface {
	Find(name string) (int, error)
}
type Named interface{ Name() string }
type pg struct{}
func (p *pg) Find(name string) (int, error) { return 0, nil }
type both struct{ pg }
func (b both) Find(name string) (int, error) { return 1, nil }
func (b both) Name() string                  { return "both" }
func use(f Finder) { f.Find("x") }
`},
	{"if_init_and_conditions", `package app
func f(a, b int, s string) string {
	if n := len(s); n > a && (b < 3 || !ok(s)) {
		return "big"
	} else if a == b {
		s = "eq"
	}
	return s
}
func ok(s string) bool { return s != "" }
`},
	{"loops", `package app
func f(items []string, m map[string]int, ch chan string, s string) {
	for i := 0; i < 3; i++ {
		if i == 1 {
			continue
		}
		use(items[i])
	}
	for len(items) > 0 {
		items = items[1:]
	}
	for {
		break
	}
	for i, v := range items {
		use(i, v)
	}
	for k, v := range m {
		use(k, v)
	}
	for v := range ch {
		use(v)
	}
	for _, r := range s {
		use(r)
	}
}
`},
	{"switch", `package app
func f(kind string, n int) string {
	out := ""
	switch kind {
	case "a", "b":
		out = "ab"
		fallthrough
	case "c":
		out += "c"
	default:
		out = "other"
	}
	switch {
	case n > 10:
		return "big"
	case n < 0:
		break
	}
	return out
}
`},
	{"type_switch_and_select", `package app
import "fmt"
func f(v any, in chan string, out chan string) {
	switch t := v.(type) {
	case string:
		use(t)
	case int, int64:
		use(t)
	case nil:
	default:
		use(fmt.Sprint(t))
	}
	select {
	case s := <-in:
		use(s)
	case out <- "x":
	default:
	}
}
`},
	{"defer_go_panic", `package app
import "os"
func f(name string) (err error) {
	fh, err := os.Open(name)
	if err != nil {
		return err
	}
	defer fh.Close()
	defer func() {
		if r := recover(); r != nil {
			err = nil
		}
	}()
	go notify(name)
	if name == "" {
		panic("empty")
	}
	return
}
`},
	{"labels_goto", `package app
func f(rows [][]int) int {
	n := 0
outer:
	for _, row := range rows {
		for _, v := range row {
			if v < 0 {
				break outer
			}
			if v == 0 {
				continue outer
			}
			n += v
		}
	}
	if n > 100 {
		goto done
	}
	n = 0
done:
	return n
}
`},
	{"assignments", `package app
type T struct{ A string }
func f(t *T, m map[string]string, p *string) {
	a, b := "x", "y"
	a, b = b, a
	var c, d = 1, 2
	var e string
	c += d
	c++
	t.A = a
	m["k"] = b
	*p = e
	v, ok := m["k"]
	w, ok2 := any(v).(string)
	_, _, _ = ok, w, ok2
}
`},
	{"closures", `package app
import "net/http"
func routes(prefix string) {
	count := 0
	h := func(w http.ResponseWriter, r *http.Request) {
		count++
		w.Write([]byte(prefix + r.URL.Path))
	}
	http.HandleFunc("/a", h)
	func() { count = 2 }()
	var s server
	http.HandleFunc("/b", s.handle)
}
type server struct{ name string }
func (s *server) handle(w http.ResponseWriter, r *http.Request) {}
`},
	{"literals_and_builtins", `package app
import "net/http"
func f(x string, xs []string) []string {
	s := []string{"a", x}
	m := map[string][]string{"k": {x}}
	c := &http.Cookie{Name: "sid", Value: x, Secure: true}
	s = append(s, "b", x)
	s = append(s, xs...)
	n := copy(s, xs)
	buf := make([]byte, 0, n)
	_ = string(buf)
	_ = x[1:] + "abc"[1:2]
	_ = len(m) + cap(s)
	_ = c
	ch := make(chan int)
	ch <- 1
	<-ch
	return s
}
`},
	{"package_consts_vars", `package app
import "os"
const debug = false
const table = "users"
var home = os.Getenv("HOME")
var (
	a, b = split()
	c    []string
)
var normalize = func(s string) string { return s + "!" }
func f() string {
	if debug {
		return home
	}
	return normalize("SELECT * FROM " + table)
}
`},
}

func TestLowerGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lowertest.Golden(t, tc.name, lowerSource(t, "app/"+tc.name+".go", []byte(tc.src)))
		})
	}
}

// TestLowerPackageQualifier checks how a file's package is named.
func TestLowerPackageQualifier(t *testing.T) {
	t.Parallel()
	src := []byte("package users\nfunc F() {}\n")
	cases := []struct{ mod, path, want string }{
		{"", "internal/users/users.go", "internal/users"},
		{"", "users.go", "users"},
		{"example.com/app", "internal/users/users.go", "example.com/app/internal/users"},
		{"example.com/app", "main.go", "example.com/app"},
	}
	for _, tc := range cases {
		p := syntax.NewParser(syntax.Limits{})
		root, _, err := p.Parse(context.Background(), syntax.Go, src)
		require.NoError(t, err)
		f, err := LowerModule(tc.mod, tc.path, src, root)
		require.NoError(t, err)
		require.Equal(t, tc.want, f.Package, tc.path)
		require.Equal(t, tc.want+".F", f.Funcs[0].QName)
		p.Close()
	}
}

func TestImportName(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"net/http":                      "http",
		"github.com/labstack/echo/v4":   "echo",
		"gopkg.in/yaml.v3":              "yaml",
		"github.com/go-chi/chi/v5":      "chi",
		"github.com/mattn/go-sqlite3":   "sqlite3",
		"github.com/gin-gonic/gin":      "gin",
		"github.com/go-ldap/ldap/v3":    "ldap",
		"github.com/satori/go.uuid":     "uuid",
		"github.com/elastic/elastic-go": "elastic",
	}
	for in, want := range cases {
		require.Equal(t, want, importName(in), in)
	}
}

func TestLowerRejectsOtherTrees(t *testing.T) {
	t.Parallel()
	_, err := Lower("x.go", nil, nil)
	require.ErrorIs(t, err, ErrNotGo)
	_, err = Lower("x.go", nil, &syntax.Node{Type: "program"})
	require.ErrorIs(t, err, ErrNotGo)
}

// TestLowerCorpus lowers every Go file of the labelled corpus and validates
// the IR.
func TestLowerCorpus(t *testing.T) {
	t.Parallel()
	lowertest.LowerCorpus(t, "go", syntax.Go, Lower)
}

func corpusFiles(t testing.TB) []string { return lowertest.CorpusFiles(t, "go") }
