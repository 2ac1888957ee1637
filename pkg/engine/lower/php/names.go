package php

import (
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// scope holds the name resolution state of a file: the current namespace
// and the three import tables PHP keeps (classes and namespaces, functions,
// constants). Keys are lower case because PHP class and function names are
// case-insensitive.
type scope struct {
	ns     string
	class  map[string]string
	fn     map[string]string
	consts map[string]string
}

func newScope() *scope {
	return &scope{class: map[string]string{}, fn: map[string]string{}, consts: map[string]string{}}
}

// superglobals are the variables PHP makes visible everywhere.
var superglobals = map[string]bool{
	"_GET": true, "_POST": true, "_COOKIE": true, "_REQUEST": true, "_SERVER": true,
	"_FILES": true, "_ENV": true, "_SESSION": true,
}

// scalarTypes are the built-in type names of declarations, kept lower case.
var scalarTypes = map[string]bool{
	"int": true, "integer": true, "float": true, "double": true, "string": true, "bool": true, "boolean": true,
	"array": true, "callable": true, "iterable": true, "object": true, "mixed": true, "void": true,
	"null": true, "never": true, "false": true, "true": true,
}

// castTypes maps a cast's spelling to PHP's canonical type name.
var castTypes = map[string]string{
	"int": "int", "integer": "int", "float": "float", "double": "float", "real": "float",
	"string": "string", "binary": "string", "bool": "bool", "boolean": "bool", "array": "array",
	"object": "object", "unset": "null",
}

// nameText returns the written text of a name or qualified name, without
// spaces or comments the grammar may have kept inside it.
func nameText(n *syntax.Node, src []byte) string {
	t := n.Text(src)
	if strings.IndexFunc(t, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }) >= 0 {
		t = strings.Join(strings.Fields(t), "")
	}
	return t
}

// qualify resolves a class (or namespace prefix) name as written.
func (s *scope) qualify(name string) string {
	if name == "" {
		return ""
	}
	if name[0] == '\\' {
		return strings.TrimLeft(name, "\\")
	}
	if len(name) > 10 && strings.EqualFold(name[:10], "namespace\\") {
		return s.inNS(name[10:])
	}
	first, rest, qualified := strings.Cut(name, "\\")
	if full, ok := s.class[strings.ToLower(first)]; ok {
		if qualified {
			return full + "\\" + rest
		}
		return full
	}
	return s.inNS(name)
}

func (s *scope) inNS(name string) string {
	if s.ns == "" {
		return name
	}
	return s.ns + "\\" + name
}

// function resolves a called function name to its Qual and Name: an
// unqualified name not imported stays unqualified, since PHP falls back to
// the global function of that name.
func (s *scope) function(name string) (qual, fn string) {
	if name == "" {
		return "", ""
	}
	if name[0] == '\\' {
		return splitLast(strings.TrimLeft(name, "\\"))
	}
	if !strings.Contains(name, "\\") {
		if full, ok := s.fn[strings.ToLower(name)]; ok {
			return splitLast(full)
		}
		return "", name
	}
	return splitLast(s.qualify(name))
}

// constant resolves a constant name; constants are globals of their
// unqualified name unless imported with `use const`.
func (s *scope) constant(name string) string {
	name = strings.TrimLeft(name, "\\")
	if full, ok := s.consts[strings.ToLower(name)]; ok {
		name = full
	}
	_, last := splitLast(name)
	return last
}

func splitLast(q string) (string, string) {
	if i := strings.LastIndexByte(q, '\\'); i >= 0 {
		return q[:i], q[i+1:]
	}
	return "", q
}

// importUse records one `use` declaration (plain, aliased, grouped,
// `use function`, `use const`) in the scope and the file's import list.
func (l *lowerer) importUse(n *syntax.Node) {
	// The kind keyword (function, const) is an anonymous token: read it
	// from the text.
	kind := ""
	t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(n.Text(l.src)), "use"))
	switch {
	case strings.HasPrefix(t, "function ") || strings.HasPrefix(t, "function\t") || strings.HasPrefix(t, "function\n"):
		kind = "function"
	case strings.HasPrefix(t, "const ") || strings.HasPrefix(t, "const\t") || strings.HasPrefix(t, "const\n"):
		kind = "const"
	}
	prefix := ""
	for _, c := range n.Children {
		switch c.Type {
		case "namespace_name", "qualified_name", "name":
			prefix = strings.TrimLeft(nameText(c, l.src), "\\")
		case "namespace_use_clause":
			l.useClause(c, "", kind)
		case "namespace_use_group":
			for _, g := range c.Children {
				if g.Type == "namespace_use_group_clause" || g.Type == "namespace_use_clause" {
					l.useClause(g, prefix, kind)
				}
			}
		}
	}
}

func (l *lowerer) useClause(c *syntax.Node, prefix, kind string) {
	path, alias := "", ""
	for _, p := range c.Children {
		switch p.Type {
		case "qualified_name", "namespace_name", "name":
			if path == "" {
				path = strings.TrimLeft(nameText(p, l.src), "\\")
			}
		case "namespace_aliasing_clause":
			if a := p.FirstOfType("name"); a != nil {
				alias = a.Text(l.src)
			}
		}
	}
	// A group clause may carry its own kind: use A\{function f, const C}.
	t := strings.TrimSpace(c.Text(l.src))
	switch {
	case strings.HasPrefix(t, "function "):
		kind = "function"
	case strings.HasPrefix(t, "const "):
		kind = "const"
	}
	if path == "" {
		return
	}
	if prefix != "" {
		path = prefix + "\\" + path
	}
	if alias == "" {
		_, alias = splitLast(path)
	}
	key := strings.ToLower(alias)
	switch kind {
	case "function":
		l.scope.fn[key] = path
	case "const":
		l.scope.consts[key] = path
	default:
		l.scope.class[key] = path
	}
	l.file.Imports = append(l.file.Imports, ir.Import{Alias: alias, Path: path})
}

// typeName resolves a declared type (parameter, property, result): nullable
// types are unwrapped, a union is kept only when it names a single class,
// scalar types stay as written in lower case.
func (f *fnLowerer) typeName(n *syntax.Node) string {
	if n == nil {
		return ""
	}
	switch n.Type {
	case "optional_type", "type":
		for _, c := range n.NamedChildren() {
			if t := f.typeName(c); t != "" {
				return t
			}
		}
		return ""
	case "union_type", "disjunctive_normal_form_type", "intersection_type":
		found := ""
		for _, c := range n.NamedChildren() {
			t := f.typeName(c)
			if t == "" || t == "null" || t == "false" {
				continue
			}
			if found != "" {
				return ""
			}
			found = t
		}
		return found
	case "primitive_type", "bottom_type", "cast_type":
		return strings.ToLower(n.Text(f.l.src))
	case "named_type":
		if c := n.NamedChildren(); len(c) > 0 {
			return f.typeName(c[0])
		}
		return ""
	case "name", "qualified_name", "relative_scope":
		t := nameText(n, f.l.src)
		if scalarTypes[strings.ToLower(t)] {
			return strings.ToLower(t)
		}
		return f.className(t)
	}
	return ""
}

// className resolves a class reference, including self, static and parent.
func (f *fnLowerer) className(name string) string {
	switch strings.ToLower(name) {
	case "self", "static":
		if f.cls != nil {
			return f.cls.QName
		}
		return name
	case "parent":
		if f.cls != nil && len(f.cls.Super) > 0 && f.parentClass != "" {
			return f.parentClass
		}
		return name
	}
	return f.l.scope.qualify(name)
}
