// Package java lowers tree-sitter-java syntax trees into the engine's IR
// (package ir), following the conventions of the ir package comment.
//
// Choices specific to Java:
//   - Static fields are globals: a read of a static field, of this class or
//     of another one, is OpLoadGlobal "java:<class FQN>.<field>" and a write
//     OpStoreGlobal; enum constants are static fields of their enum. Instance
//     fields are OpLoadField/OpStoreField on the object (this for unqualified
//     names; an inner, local or anonymous class reaches its enclosing
//     instance via field "this$0"; the creating `new` does not store it,
//     so the analysis reads outer fields by class).
//   - Instance field initializers and instance initializer blocks run at the
//     start of every constructor that does not delegate to this(...), or in a
//     synthetic "<init>" when the class declares no constructor; static
//     field initializers and static blocks form "<clinit>".
//   - Unqualified calls are CallFunc (resolved by scope by the analysis);
//     calls on a type name are CallStatic with the class FQN; super.m(...)
//     and super(...) are CallSuper; this(...) is CallFunc "<init>".
//   - Lambdas, method references and the methods of local and anonymous
//     classes are Funcs whose Parent is the enclosing function; the locals
//     they use are Captured vars, and the enclosing function creates each of
//     them with OpFunc where the lambda or class body appears. A method
//     reference becomes a synthetic one-parameter function calling the
//     referenced method. Anonymous classes are named "<outer class>$<n>".
//   - switch becomes a chain of "==" branches on the subject (string, int,
//     char and enum labels alike) with classic fallthrough; pattern labels
//     become instanceof tests.
//   - Names resolve as javac would where the file tells: nested and local
//     classes, classes of the file, single-type imports, java.lang,
//     on-demand imports of well-known packages, then the file's own package
//     (a simple name stays simple only when an on-demand import of an
//     unknown package could supply it). A qualified name in an expression
//     is a type up to its first capitalised segment plus the member classes
//     the file declares or that follow the naming convention; what follows
//     is a static field. Unqualified names a static import supplies (a
//     single member, or the only on-demand static import when the file
//     declares no such method) are static calls and globals of that class.
//     Generics are erased (a type variable to its first bound or
//     java.lang.Object) and arrays are written "T[]".
package java

import (
	"fmt"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// Lower turns the syntax tree of one Java file into an ir.File.
func Lower(path string, src []byte, root *syntax.Node) (f *ir.File, err error) {
	if root == nil {
		return nil, fmt.Errorf("lower %s: no syntax tree", path)
	}
	l := &lowerer{
		src:       src,
		file:      &ir.File{Path: path, Lang: "java", Src: src, Lines: lower.Lines(src)},
		imports:   map[string]string{},
		statics:   map[string]string{},
		fileTypes: map[string]string{},
		declared:  map[string]bool{},
		methods:   map[string]bool{},
		classes:   map[string]*classCtx{},
	}
	l.header(root)
	l.collectTypes(root, "")
	for _, n := range root.Children {
		if isTypeDecl(n.Type) {
			l.classDecl(n, nil, nil)
		}
	}
	return l.file, nil
}

// lowerer holds the state of lowering one file.
type lowerer struct {
	src  []byte
	file *ir.File

	imports         map[string]string // simple name -> FQN (single-type imports)
	wildcards       []string          // packages or classes imported with .*
	unknownWildcard bool              // an on-demand import of a package wellKnown does not list
	statics         map[string]string // statically imported member -> class FQN
	staticAll       []string          // classes whose static members are all imported
	fileTypes       map[string]string // simple name -> FQN of every class declared in the file
	declared        map[string]bool   // FQNs of the classes declared in the file
	methods         map[string]bool   // names of the methods declared in the file
	mtparams        map[string]string // type parameters of the method being lowered, to their erasure
	classes         map[string]*classCtx
	anon            int // anonymous classes numbered per file
	lambdas         int // lambdas and method references numbered per file
}

func (l *lowerer) text(n *syntax.Node) string {
	if n == nil {
		return ""
	}
	return string(l.src[n.Start:n.End])
}

func pos(n *syntax.Node) ir.Pos {
	return lower.Pos(n)
}

func isTypeDecl(t string) bool {
	switch t {
	case "class_declaration", "interface_declaration", "enum_declaration", "record_declaration", "annotation_type_declaration":
		return true
	}
	return false
}

// header reads the package and import declarations.
func (l *lowerer) header(root *syntax.Node) {
	for _, n := range root.Children {
		switch n.Type {
		case "package_declaration":
			for _, c := range n.Children {
				if c.Type == "scoped_identifier" || c.Type == "identifier" {
					l.file.Package = l.text(c)
				}
			}
		case "import_declaration":
			l.importDecl(n)
		}
	}
}

func (l *lowerer) importDecl(n *syntax.Node) {
	var name string
	static, wild := false, false
	for _, c := range n.Children {
		switch c.Type {
		case "scoped_identifier", "identifier":
			name = l.text(c)
		case "asterisk":
			wild = true
		}
	}
	if name == "" {
		return
	}
	// The "static" keyword is an anonymous token: look at the text.
	txt := l.text(n)
	if len(txt) > 7 && txt[:6] == "import" {
		rest := trimSpace(txt[6:])
		static = len(rest) > 6 && rest[:6] == "static" && (rest[6] == ' ' || rest[6] == '\t' || rest[6] == '\n')
	}
	switch {
	case wild && static:
		l.staticAll = append(l.staticAll, name)
		l.file.Imports = append(l.file.Imports, ir.Import{Alias: "*", Path: name})
	case wild:
		l.wildcards = append(l.wildcards, name)
		l.unknownWildcard = l.unknownWildcard || wellKnown[name] == nil
		l.file.Imports = append(l.file.Imports, ir.Import{Alias: "*", Path: name})
	case static:
		cls, member := splitLast(name)
		l.statics[member] = cls
		l.file.Imports = append(l.file.Imports, ir.Import{Alias: member, Path: name})
	default:
		_, simple := splitLast(name)
		l.imports[simple] = name
		l.file.Imports = append(l.file.Imports, ir.Import{Alias: simple, Path: name})
	}
}

// collectTypes registers every named class of the file before bodies are
// lowered, so that forward references resolve.
func (l *lowerer) collectTypes(n *syntax.Node, outer string) {
	for _, c := range n.Children {
		if isTypeDecl(c.Type) {
			name := l.text(c.Child("name"))
			q := l.qualify(outer, name)
			l.declared[q] = true
			if _, ok := l.fileTypes[name]; !ok {
				l.fileTypes[name] = q
			}
			l.collectTypes(c.Child("body"), q)
		} else if c.Type == "enum_body_declarations" {
			l.collectTypes(c, outer)
		} else if c.Type == "method_declaration" {
			l.methods[l.text(c.Child("name"))] = true
		}
	}
}

// qualify joins an outer class (or the package) and a simple class name.
func (l *lowerer) qualify(outer, name string) string {
	if outer == "" {
		if l.file.Package == "" {
			return name
		}
		return l.file.Package + "." + name
	}
	return outer + "." + name
}

func splitLast(s string) (string, string) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return s[:i], s[i+1:]
		}
	}
	return "", s
}

func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	for j > i && (s[j-1] == ' ' || s[j-1] == '\t' || s[j-1] == '\n' || s[j-1] == '\r') {
		j--
	}
	return s[i:j]
}

// staticOwner returns the class that supplies an unqualified member name
// through a static import: a single-member import, or the only on-demand
// static import when the file declares no method (for calls) of that name.
func (l *lowerer) staticOwner(name string, call bool) (string, bool) {
	if cls, ok := l.statics[name]; ok {
		return cls, true
	}
	if len(l.staticAll) == 1 && (!call || !l.methods[name]) {
		return l.staticAll[0], true
	}
	return "", false
}
