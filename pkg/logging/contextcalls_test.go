package logging

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// loggerName matches the expressions the repository's loggers go by:
// log, logger, s.Log, w.Log, p.log, e.cfg.logger, and the slog package.
var loggerName = regexp.MustCompile(`^(?i:log|logger|slog)$`)

var contextless = map[string]bool{"Debug": true, "Info": true, "Warn": true, "Error": true}

// contextlessLogCalls returns "file:line: call" for every call of a
// context-less slog method (Debug, Info, Warn, Error) made where a context
// is in scope: a function (or a closure inside one) taking a
// context.Context or an *http.Request. Such lines would lose the trace id
// and request id the context carries; use the ...Context form.
func contextlessLogCalls(t *testing.T, fset *token.FileSet, file *ast.File, name string) []string {
	t.Helper()
	var out []string
	var visit func(n ast.Node, ctxInScope bool)
	visit = func(n ast.Node, ctxInScope bool) {
		ast.Inspect(n, func(c ast.Node) bool {
			if c == n {
				return true
			}
			switch x := c.(type) {
			case *ast.FuncDecl:
				if x.Body != nil {
					visit(x.Body, takesContext(x.Type))
				}
				return false
			case *ast.FuncLit:
				visit(x.Body, ctxInScope || takesContext(x.Type))
				return false
			case *ast.CallExpr:
				sel, ok := x.Fun.(*ast.SelectorExpr)
				if ok && ctxInScope && contextless[sel.Sel.Name] && loggerName.MatchString(lastName(sel.X)) {
					out = append(out, fmt.Sprintf("%s:%d: %s.%s", name, fset.Position(x.Pos()).Line, lastName(sel.X), sel.Sel.Name))
				}
			}
			return true
		})
	}
	visit(file, false)
	return out
}

func lastName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

func takesContext(ft *ast.FuncType) bool {
	for _, f := range ft.Params.List {
		switch ty := f.Type.(type) {
		case *ast.SelectorExpr:
			if pkg, ok := ty.X.(*ast.Ident); ok && pkg.Name == "context" && ty.Sel.Name == "Context" {
				return true
			}
		case *ast.StarExpr:
			if sel, ok := ty.X.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "http" && sel.Sel.Name == "Request" {
					return true
				}
			}
		}
	}
	return false
}

// TestLogCallsCarryTheContext keeps every log line that could carry a trace
// id and request id doing so: no non-test file of the repository calls a
// context-less slog method where a context is in scope.
func TestLogCallsCarryTheContext(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("repository root not found at %s: %v", root, err)
	}
	fset := token.NewFileSet()
	var found []string
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == filepath.Join("proto", "gen") || d.Name() == "testdata" || d.Name() == "bin" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		found = append(found, contextlessLogCalls(t, fset, f, rel)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("only %d Go files found under %s; the walk is broken", files, root)
	}
	if len(found) > 0 {
		t.Errorf("log calls without the context in scope (use the ...Context form):\n%s", strings.Join(found, "\n"))
	}
}

// TestContextlessLogCallsDetector pins the detector on small sources, so the
// repository-wide test cannot pass by detecting nothing.
func TestContextlessLogCallsDetector(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      int
	}{
		{"ctx param", `func f(ctx context.Context) { log.Info("x") }`, 1},
		{"field logger", `func (s *S) f(ctx context.Context) { s.Log.Warn("x"); s.Log.WarnContext(ctx, "y") }`, 1},
		{"closure inherits", `func f(ctx context.Context) { go func() { w.log.Error("x") }() }`, 1},
		{"closure with ctx", `func f() { h := func(ctx context.Context) { e.cfg.logger.Debug("x") }; _ = h }`, 1},
		{"http request", `func f(w http.ResponseWriter, r *http.Request) { slog.Info("x") }`, 1},
		{"no context", `func f() { log.Info("starting") }`, 0},
		{"context form", `func f(ctx context.Context) { log.InfoContext(ctx, "x") }`, 0},
		{"not a logger", `func f(ctx context.Context) { t.Error("x"); _ = err.Error() }`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", "package p\n"+tc.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := contextlessLogCalls(t, fset, f, "x.go"); len(got) != tc.want {
				t.Fatalf("found %v, want %d", got, tc.want)
			}
		})
	}
}
