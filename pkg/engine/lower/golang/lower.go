package golang

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// ErrNotGo is returned for a tree that is not a Go source file.
var ErrNotGo = errors.New("not a Go source tree")

// Lower lowers one Go file whose module path is not known: its package is
// qualified by its directory (see the package comment).
func Lower(path string, src []byte, root *syntax.Node) (*ir.File, error) {
	return LowerModule("", path, src, root)
}

// LowerModule lowers one Go file of the module whose go.mod declares module
// path mod (path is relative to the module root): the file's package is then
// qualified by its import path, mod + "/" + directory.
func LowerModule(mod, file string, src []byte, root *syntax.Node) (*ir.File, error) {
	// A file tree-sitter could not parse at all has an ERROR root: its
	// recognisable declarations are still lowered.
	if root == nil || (root.Type != "source_file" && root.Type != "ERROR") {
		return nil, fmt.Errorf("lower %s: %w", file, ErrNotGo)
	}
	fc := newFileCtx(file, src)
	pkgName := ""
	if pc := root.FirstOfType("package_clause"); pc != nil {
		pkgName = pc.FirstOfType("package_identifier").Text(src)
	}
	fc.pkg = qualifier(mod, file, pkgName)
	fc.f.Package = fc.pkg
	for _, c := range root.Children {
		if c.Type == "import_declaration" {
			fc.imports(c)
		}
	}
	fc.declare(root)
	fc.lowerDecls(root)
	fc.patch()
	fc.implement()
	return fc.f, nil
}

// qualifier names the file's package: the import path when the module is
// known, else the directory, else (a root file) the package clause.
func qualifier(mod, file, pkgName string) string {
	dir := path.Dir(strings.TrimPrefix(path.Clean("/"+file), "/"))
	if dir == "." || dir == "/" {
		dir = ""
	}
	switch {
	case mod != "" && dir != "":
		return mod + "/" + dir
	case mod != "":
		return mod
	case dir != "":
		return dir
	case pkgName != "":
		return pkgName
	}
	return "main"
}

// fileCtx is what the lowering of one file knows about its top level.
type fileCtx struct {
	f       *ir.File
	src     []byte
	pkg     string
	alias   map[string]string // import alias → import path
	dots    []string          // dot-imported paths
	types   map[string]*typeInfo
	funcs   map[string]*funcInfo // top-level functions by name
	methods map[string]*funcInfo // "Type.Method"
	consts  map[string]*ir.Const // package constants with a literal value
	globals map[string]string    // package variables → type
	classes map[string]*ir.Class // by type name
	fixups  []fixup
}

// typeInfo is a named type declared in the file.
type typeInfo struct {
	kind   kind
	fields []string          // struct fields in order
	ftypes map[string]string // field → type
	fkinds map[string]kind
}

// funcInfo is a function or method declared in the file.
type funcInfo struct {
	results []string
	fn      *ir.Func
}

// fixup is an OpFunc referring to a top-level function ("name") or a
// method ("Type.name") lowered later.
type fixup struct {
	fn       *ir.Func
	blk, idx int
	name     string
}

func newFileCtx(file string, src []byte) *fileCtx {
	f := &ir.File{Path: file, Lang: "go", Src: src, Lines: lower.Lines(src)}
	return &fileCtx{f: f, src: src, alias: map[string]string{}, types: map[string]*typeInfo{},
		funcs: map[string]*funcInfo{}, methods: map[string]*funcInfo{}, consts: map[string]*ir.Const{},
		globals: map[string]string{}, classes: map[string]*ir.Class{}}
}

func (fc *fileCtx) text(n *syntax.Node) string { return n.Text(fc.src) }

func pos(n *syntax.Node) ir.Pos {
	return lower.Pos(n)
}

// imports records the file's imports and their local names.
func (fc *fileCtx) imports(decl *syntax.Node) {
	var specs []*syntax.Node
	for _, c := range decl.Children {
		switch c.Type {
		case "import_spec":
			specs = append(specs, c)
		case "import_spec_list":
			specs = append(specs, c.Children...)
		}
	}
	for _, s := range specs {
		if s.Type != "import_spec" {
			continue
		}
		p := unquote(fc.text(s.Child("path")))
		if p == "" {
			continue
		}
		name := s.Child("name")
		switch {
		case name == nil:
			a := importName(p)
			fc.alias[a] = p
			fc.f.Imports = append(fc.f.Imports, ir.Import{Alias: a, Path: p})
		case name.Type == "dot":
			fc.dots = append(fc.dots, p)
			fc.f.Imports = append(fc.f.Imports, ir.Import{Alias: "*", Path: p})
		case name.Type == "blank_identifier":
			fc.f.Imports = append(fc.f.Imports, ir.Import{Alias: "_", Path: p})
		default:
			a := fc.text(name)
			fc.alias[a] = p
			fc.f.Imports = append(fc.f.Imports, ir.Import{Alias: a, Path: p})
		}
	}
}

// importName guesses the package name of an import path: its last element
// without a major version suffix ("/v5", ".v3") or a "go-" prefix / "-go"
// suffix, with other dashes and dots dropped.
func importName(p string) string {
	parts := strings.Split(p, "/")
	last := parts[len(parts)-1]
	if len(parts) > 1 && isMajor(last) {
		last = parts[len(parts)-2]
	}
	if i := strings.Index(last, ".v"); i > 0 && isMajor(last[i+1:]) {
		last = last[:i]
	}
	last = strings.TrimPrefix(strings.TrimPrefix(last, "go-"), "go.")
	last = strings.TrimSuffix(last, "-go")
	last = strings.TrimSuffix(last, ".go")
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '.' {
			return -1
		}
		return r
	}, last)
}

func isMajor(s string) bool {
	if len(s) < 2 || s[0] != 'v' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// resolveImport returns the import path a selector operand names, or "".
func (fc *fileCtx) resolveImport(name string) string {
	return fc.alias[name]
}

// dotImport returns the dot-imported package an undeclared exported name
// comes from, when the file has exactly one dot import.
func (fc *fileCtx) dotImport(name string) string {
	if len(fc.dots) != 1 || name == "" || name[0] < 'A' || name[0] > 'Z' {
		return ""
	}
	if _, ok := fc.types[name]; ok {
		return ""
	}
	if _, ok := fc.funcs[name]; ok {
		return ""
	}
	if _, ok := fc.globals[name]; ok {
		return ""
	}
	if _, ok := fc.consts[name]; ok {
		return ""
	}
	return fc.dots[0]
}

// patch fills the OpFunc instructions that name top-level functions.
func (fc *fileCtx) patch() {
	for _, x := range fc.fixups {
		in := &x.fn.Blocks[x.blk].Instrs[x.idx]
		fi := fc.funcs[x.name]
		if fi == nil {
			fi = fc.methods[x.name]
		}
		if fi != nil && fi.fn != nil {
			in.Fn = fi.fn
			continue
		}
		// The function had no body to lower: read it as a global instead.
		in.Op, in.Name = ir.OpLoadGlobal, fc.pkg+"."+x.name
	}
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' {
		return strings.ReplaceAll(s[1:len(s)-1], "\r", "")
	}
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
		return s[1 : len(s)-1]
	}
	return s
}
