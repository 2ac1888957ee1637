package javascript

import (
	"path"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// sourceExts are the extensions a module specifier or a file path may carry.
var sourceExts = []string{".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"}

// modulePath is the module name of a repository file: its path without
// extension, and without a trailing "/index" (a directory's index file is
// what importing the directory loads).
func modulePath(file string) string {
	p := strings.TrimPrefix(path.Clean("/"+strings.ReplaceAll(file, "\\", "/")), "/")
	return strings.TrimSuffix(trimSourceExt(p), "/index")
}

func trimSourceExt(p string) string {
	ext := strings.ToLower(path.Ext(p))
	for _, e := range sourceExts {
		if ext == e {
			if strings.HasSuffix(p, ".d"+ext) {
				return strings.TrimSuffix(p, ".d"+ext)
			}
			return strings.TrimSuffix(p, path.Ext(p))
		}
	}
	return p
}

// resolveSpecifier turns a module specifier as written into a qualified
// module name: relative specifiers become repository module paths ("./db"
// from src/app.js is "src/db"); package specifiers stay as written
// ("child_process", "fs/promises"; the "node:" scheme is dropped).
func resolveSpecifier(fromFile, spec string) (qual string, rel bool) {
	if strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") || spec == "." || spec == ".." {
		dir := path.Dir(strings.ReplaceAll(fromFile, "\\", "/"))
		p := strings.TrimPrefix(path.Clean("/"+path.Join(dir, spec)), "/")
		p = trimSourceExt(p)
		if p == "index" || strings.HasSuffix(p, "/index") {
			p = strings.TrimSuffix(strings.TrimSuffix(p, "index"), "/")
		}
		return p, true
	}
	return strings.TrimPrefix(spec, "node:"), false
}

// stringValue returns the value of a string literal node, and whether n is
// one.
func (l *lowerer) stringValue(n *syntax.Node) (string, bool) {
	n = unwrap(n)
	if n == nil {
		return "", false
	}
	switch n.Type {
	case "string":
		return decodeString(l.src, n), true
	case "template_string":
		for _, c := range n.Children {
			if c.Type == "template_substitution" {
				return "", false
			}
		}
		return decodeString(l.src, n), true
	}
	return "", false
}

// requireSpec recognises require('m') and import('m') (also behind await)
// and returns the specifier.
func (l *lowerer) requireSpec(n *syntax.Node) (string, bool) {
	n = unwrap(n)
	if n != nil && n.Type == "await_expression" {
		n = unwrap(firstNamed(n))
	}
	if n == nil || n.Type != "call_expression" {
		return "", false
	}
	fn := n.Child("function")
	if fn == nil || !(fn.Type == "identifier" && l.text(fn) == "require" || fn.Type == "import") {
		return "", false
	}
	if fn.Type == "identifier" && l.top["require"] != nil {
		return "", false
	}
	args := n.Child("arguments")
	if args == nil {
		return "", false
	}
	first := firstNamed(args)
	if first == nil {
		return "", false
	}
	return l.stringValue(first)
}

// requireRef recognises an expression that denotes an imported module or
// one of its members: require('m'), require('m').a.b, import('m').
func (l *lowerer) requireRef(n *syntax.Node) (*importRef, bool) {
	n = unwrap(n)
	if n == nil {
		return nil, false
	}
	if spec, ok := l.requireSpec(n); ok {
		q, rel := resolveSpecifier(l.file.Path, spec)
		return moduleRef(q, rel), true
	}
	if n.Type == "member_expression" {
		prop := n.Child("property")
		if prop == nil || prop.Type != "property_identifier" {
			return nil, false
		}
		if base, ok := l.requireRef(n.Child("object")); ok {
			return memberRef(base.qual, l.text(prop), base.rel), true
		}
	}
	return nil, false
}

// importStatement records the bindings of an ES import (or a TypeScript
// import-require) at module level.
func (l *lowerer) importStatement(n *syntax.Node) {
	src := n.Child("source")
	if req := n.FirstOfType("import_require_clause"); req != nil {
		src = req.Child("source")
		spec, _ := l.stringValue(src)
		q, rel := resolveSpecifier(l.file.Path, spec)
		if id := req.FirstOfType("identifier"); id != nil {
			l.bindImport(l.text(id), moduleRef(q, rel))
		}
		return
	}
	if src == nil {
		return
	}
	spec, _ := l.stringValue(src)
	q, rel := resolveSpecifier(l.file.Path, spec)
	clause := n.FirstOfType("import_clause")
	if clause == nil {
		l.file.Imports = append(l.file.Imports, ir.Import{Alias: "", Path: q})
		return
	}
	for _, c := range clause.Children {
		switch c.Type {
		case "identifier": // default import: the module value (CommonJS interop)
			l.bindImport(l.text(c), moduleRef(q, rel))
		case "namespace_import":
			if id := c.FirstOfType("identifier"); id != nil {
				l.bindImport(l.text(id), moduleRef(q, rel))
			}
		case "named_imports":
			for _, s := range c.Children {
				if s.Type != "import_specifier" {
					continue
				}
				name := s.Child("name")
				alias := s.Child("alias")
				if alias == nil {
					alias = name
				}
				if name == nil {
					continue
				}
				imported := l.specName(name)
				if imported == "default" {
					l.bindImport(l.text(alias), moduleRef(q, rel))
				} else {
					l.bindImport(l.text(alias), memberRef(q, imported, rel))
				}
			}
		}
	}
}

// specName is the name of an import or export specifier (an identifier or
// a string).
func (l *lowerer) specName(n *syntax.Node) string {
	if s, ok := l.stringValue(n); ok {
		return s
	}
	return l.text(n)
}

func (l *lowerer) bindImport(alias string, ref *importRef) {
	l.imports[alias] = ref
	l.file.Imports = append(l.file.Imports, ir.Import{Alias: alias, Path: ref.qual})
}

// requireDeclarator binds the names of `const x = require('m')`,
// `const {a, b: c} = require('m')` and `const x = require('m').y` in scope
// bind, and reports whether the declarator was such an import.
func (l *lowerer) requireDeclarator(decl *syntax.Node, bind func(name string, ref *importRef)) bool {
	ref, ok := l.requireRef(decl.Child("value"))
	if !ok {
		return false
	}
	name := decl.Child("name")
	switch {
	case name == nil:
		return false
	case name.Type == "identifier":
		bind(l.text(name), ref)
		return true
	case name.Type == "object_pattern":
		for _, c := range name.Children {
			switch c.Type {
			case "shorthand_property_identifier_pattern":
				bind(l.text(c), memberRef(ref.qual, l.text(c), ref.rel))
			case "pair_pattern":
				k, v := c.Child("key"), c.Child("value")
				if k == nil || v == nil || v.Type != "identifier" {
					continue
				}
				key := l.propertyKeyName(k)
				if key == "default" && ref.module {
					bind(l.text(v), ref)
				} else {
					bind(l.text(v), memberRef(ref.qual, key, ref.rel))
				}
			case "object_assignment_pattern":
				if left := c.Child("left"); left != nil && left.Type == "shorthand_property_identifier_pattern" {
					bind(l.text(left), memberRef(ref.qual, l.text(left), ref.rel))
				}
			case "rest_pattern":
				if id := c.FirstOfType("identifier"); id != nil {
					bind(l.text(id), ref)
				}
			}
		}
		return true
	}
	return false
}

// propertyKeyName returns the name of a property key node (identifier,
// string, number); computed keys yield "".
func (l *lowerer) propertyKeyName(k *syntax.Node) string {
	switch k.Type {
	case "property_identifier", "identifier", "private_property_identifier", "shorthand_property_identifier",
		"shorthand_property_identifier_pattern", "type_identifier":
		return l.text(k)
	case "string":
		return decodeString(l.src, k)
	case "number":
		return l.text(k)
	case "computed_property_name":
		if s, ok := l.stringValue(firstNamed(k)); ok {
			return s
		}
	}
	return ""
}

func moduleRef(q string, rel bool) *importRef { return &importRef{qual: q, module: true, rel: rel} }

// memberRef is member name of the module or object owner.
func memberRef(owner, name string, rel bool) *importRef {
	return &importRef{qual: owner + "." + name, owner: owner, member: name, rel: rel}
}
