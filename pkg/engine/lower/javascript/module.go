package javascript

import (
	"path"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// topStatements returns the module-level statements, looking through
// export statements to their declarations.
func topStatements(root *syntax.Node) []*syntax.Node {
	var out []*syntax.Node
	for _, n := range root.Children {
		if n.Type == "export_statement" {
			if d := n.Child("declaration"); d != nil {
				out = append(out, d)
				continue
			}
		}
		out = append(out, n)
	}
	return out
}

// collectTop records the module's imports and the names it declares, so
// that references from functions resolve whatever the order.
func (l *lowerer) collectTop(root *syntax.Node) {
	for _, n := range root.Children {
		if n.Type == "import_statement" {
			l.importStatement(n)
		}
	}
	defaultClass := l.defaultExportedName(root)
	for _, n := range topStatements(root) {
		switch n.Type {
		case "function_declaration", "generator_function_declaration":
			if name := n.Child("name"); name != nil {
				q := l.mod + "." + l.text(name)
				if l.isDefaultExport(n) {
					q = l.mod + ".default"
				}
				l.top[l.text(name)] = &topDecl{kind: topFunc, qname: q}
				l.topNodes = append(l.topNodes, n)
			}
		case "class_declaration", "abstract_class_declaration", "interface_declaration", "enum_declaration":
			if name := n.Child("name"); name != nil {
				q := l.mod + "." + l.text(name)
				if l.text(name) == defaultClass && n.Type != "interface_declaration" || l.isDefaultExport(n) {
					q = l.mod
				}
				l.top[l.text(name)] = &topDecl{kind: topClass, qname: q}
			}
		case "internal_module", "module":
			if name := n.Child("name"); name != nil && name.Type == "identifier" {
				l.top[l.text(name)] = &topDecl{kind: topClass, qname: l.mod + "." + l.text(name)}
			}
		case "expression_statement":
			if c := firstNamed(n); c != nil && (c.Type == "internal_module" || c.Type == "module") {
				if name := c.Child("name"); name != nil && name.Type == "identifier" {
					l.top[l.text(name)] = &topDecl{kind: topClass, qname: l.mod + "." + l.text(name)}
				}
			}
		case "lexical_declaration", "variable_declaration":
			for _, d := range n.Children {
				if d.Type != "variable_declarator" {
					continue
				}
				if l.requireDeclarator(d, l.bindImport) {
					continue
				}
				name := d.Child("name")
				if name != nil && name.Type == "identifier" {
					if v := unwrap(d.Child("value")); v != nil && v.Type == "class" {
						q := l.mod + "." + l.text(name)
						if l.text(name) == defaultClass {
							q = l.mod
						}
						l.top[l.text(name)] = &topDecl{kind: topClass, qname: q}
						continue
					}
				}
				for _, id := range l.patternNames(name) {
					if l.top[id] == nil {
						l.top[id] = &topDecl{kind: topVar}
					}
				}
				if name != nil && name.Type == "identifier" && isFunctionNode(unwrap(d.Child("value"))) {
					l.top[l.text(name)].fnQName = l.mod + "." + l.text(name)
				}
			}
		}
	}
	l.collectProtoClasses(root, defaultClass)
	// evident types of module-level variables, now that every name is known
	for _, n := range topStatements(root) {
		if n.Type != "lexical_declaration" && n.Type != "variable_declaration" {
			continue
		}
		for _, d := range n.Children {
			name := d.Child("name")
			if d.Type != "variable_declarator" || name == nil || name.Type != "identifier" {
				continue
			}
			if td := l.top[l.text(name)]; td != nil && td.kind == topVar {
				td.typ = l.typeOf(d.Child("type"))
				if td.typ == "" {
					td.typ = l.evidentType(d.Child("value"))
				}
			}
		}
	}
}

// evidentType is the type a module-level initializer makes evident: the
// class of a `new` expression or a literal's type.
func (l *lowerer) evidentType(n *syntax.Node) string {
	n = unwrap(n)
	if n == nil {
		return ""
	}
	switch n.Type {
	case "new_expression":
		return l.staticName(n.Child("constructor"))
	case "string", "template_string":
		return "String"
	case "regex":
		return "RegExp"
	case "array":
		return "Array"
	case "object":
		return "Object"
	case "as_expression":
		for _, c := range n.NamedChildren() {
			if c != firstNamed(n) {
				return l.typeOf(c)
			}
		}
	}
	return ""
}

// staticName resolves a constructor expression at module level to a
// qualified name (a class of the file, an import, a global).
func (l *lowerer) staticName(n *syntax.Node) string {
	n = unwrap(n)
	if n == nil {
		return ""
	}
	switch n.Type {
	case "identifier", "type_identifier":
		r := l.resolveModule(l.text(n))
		switch r.kind {
		case refClass:
			return r.qual
		case refImport:
			return r.imp.qual
		case refGlobal:
			return r.name
		}
	case "member_expression":
		if p := n.Child("property"); p != nil {
			if base := l.staticName(n.Child("object")); base != "" {
				return base + "." + l.text(p)
			}
		}
	}
	return ""
}

// patternNames lists the identifiers a declaration pattern binds.
func (l *lowerer) patternNames(n *syntax.Node) []string {
	if n == nil {
		return nil
	}
	switch n.Type {
	case "identifier", "shorthand_property_identifier_pattern":
		return []string{l.text(n)}
	case "object_pattern", "array_pattern", "pair_pattern", "object_assignment_pattern", "assignment_pattern", "rest_pattern":
		var out []string
		for _, c := range n.Children {
			if c.Field == "key" || c.Field == "right" {
				continue
			}
			out = append(out, l.patternNames(c)...)
		}
		return out
	}
	return nil
}

// isDefaultExport reports whether a declaration is `export default ...`.
func (l *lowerer) isDefaultExport(decl *syntax.Node) bool {
	p := decl.Parent
	return p != nil && p.Type == "export_statement" && decl.Field == "declaration" && l.hasKeyword(p, decl, "default")
}

// defaultExportedName returns the name a module exports as its value with
// `module.exports = Name`, `export default Name` or `export = Name`.
func (l *lowerer) defaultExportedName(root *syntax.Node) string {
	for _, n := range root.Children {
		switch n.Type {
		case "expression_statement":
			a := firstNamed(n)
			if a != nil && a.Type == "assignment_expression" && l.isModuleExports(a.Child("left")) {
				if r := unwrap(a.Child("right")); r != nil && r.Type == "identifier" {
					return l.text(r)
				}
			}
		case "export_statement":
			if n.Child("declaration") != nil {
				continue
			}
			if v := n.Child("value"); v != nil && unwrap(v).Type == "identifier" {
				return l.text(unwrap(v))
			}
			for _, c := range n.NamedChildren() {
				if c.Type == "identifier" && c.Field == "" { // export = Name
					return l.text(c)
				}
			}
		}
	}
	return ""
}

// isModuleExports recognises `module.exports`.
func (l *lowerer) isModuleExports(n *syntax.Node) bool {
	n = unwrap(n)
	if n == nil || n.Type != "member_expression" {
		return false
	}
	obj, prop := n.Child("object"), n.Child("property")
	return obj != nil && prop != nil && obj.Type == "identifier" && l.text(obj) == "module" && l.text(prop) == "exports" &&
		l.top["module"] == nil
}

// exportTarget recognises `module.exports.x`, `exports.x` (and the
// subscript forms with a constant key) and returns x.
func (l *lowerer) exportTarget(n *syntax.Node) (string, bool) {
	n = unwrap(n)
	if n == nil || n.Type != "member_expression" && n.Type != "subscript_expression" {
		return "", false
	}
	obj := unwrap(n.Child("object"))
	name := ""
	if p := n.Child("property"); p != nil {
		name = l.text(p)
	} else if s, ok := l.stringValue(n.Child("index")); ok {
		name = s
	} else {
		return "", false
	}
	if l.isModuleExports(obj) || obj != nil && obj.Type == "identifier" && l.text(obj) == "exports" && l.top["exports"] == nil {
		return name, true
	}
	return "", false
}

// lowerModule lowers the module's top-level code into File.Init.
func (l *lowerer) lowerModule(root *syntax.Node) {
	b := ir.NewBuilder(l.file, "<module>", l.mod+".<module>")
	b.Fn.Pos = pos(root)
	fc := newFnCtx(l, b, nil)
	fc.module = true
	l.init = fc
	for name, d := range l.top {
		if d.kind == topVar {
			fc.declare(name, d.typ, true)
		}
	}
	fc.stmts(root.Children)
	l.file.Init = b.Finish(pos(root))
	l.annotateExports()
}

// export records that the module exports the value of local (a module-level
// name) as name, and makes "<module>.<name>" resolve to it.
func (fc *fnCtx) export(name, local string, at *syntax.Node) {
	l := fc.l
	d := l.top[local]
	q := l.mod + "." + name
	if name == "default" {
		q = l.mod
	}
	switch {
	case d != nil && d.kind == topFunc:
		fq := l.mod + "." + name
		if d.qname != fq {
			l.forwarder(name, fq, local, d.qname, at)
		}
		l.exported = append(l.exported, exportedFunc{qname: fq, name: name})
		if d.qname != q {
			fc.b.StoreGlobal(q, fc.b.LoadGlobal(d.qname, "", pos(at)), pos(at))
		}
	case d != nil && d.kind == topClass:
		if d.qname != q {
			fc.b.StoreGlobal(q, fc.b.LoadGlobal(d.qname, "", pos(at)), pos(at))
		}
	default:
		v := fc.load(local, at)
		fc.b.StoreGlobal(q, v, pos(at))
		if name == "default" {
			fc.b.StoreGlobal(l.mod+".default", v, pos(at))
		}
	}
}

// exportedFunc is a function the module exports under a name.
type exportedFunc struct{ qname, name string }

// forwarder creates the function "<module>.<name>" that calls the module's
// function local (qualified target), so that importers of a renamed export
// reach it.
func (l *lowerer) forwarder(name, qname, local, target string, at *syntax.Node) {
	nparams := 0
	for _, fn := range l.file.Funcs {
		if fn.QName == target {
			nparams = len(fn.Params)
		}
	}
	if decl := l.topFuncNode(local); decl != nil {
		if ps := decl.Child("parameters"); ps != nil {
			nparams = len(ps.NamedChildren())
		}
	}
	b := ir.NewBuilder(l.file, name, l.uniqueQName(qname))
	b.Fn.Pos = pos(at)
	l.file.Funcs = append(l.file.Funcs, b.Fn)
	args := make([]ir.Value, nparams)
	for i := range args {
		args[i] = ir.V(b.Param(paramName(i), "", nil))
	}
	r := b.Call(&ir.Call{Kind: ir.CallFunc, Name: local, Recv: ir.None, Args: args}, "", pos(at))
	b.Return(r, pos(at))
	b.Finish(pos(at))
}

func paramName(i int) string { return "p" + string(rune('0'+i%10)) + strings.Repeat("'", i/10) }

// topFuncNode finds the declaration of a module-level function.
func (l *lowerer) topFuncNode(name string) *syntax.Node {
	for _, n := range l.topNodes {
		if nm := n.Child("name"); nm != nil && l.text(nm) == name {
			return n
		}
	}
	return nil
}

// exportValue lowers `module.exports = v`, `export default v` and
// `export = v`: the module value becomes v; an object literal's members
// become the module's members "<module>.<key>", and functions defined there
// are named so.
func (fc *fnCtx) exportValue(v *syntax.Node, at *syntax.Node) ir.Value {
	l := fc.l
	v = unwrap(v)
	p := pos(at)
	switch v.Type {
	case "object":
		var kv []ir.Value
		for _, m := range v.Children {
			key, val := fc.exportMember(m)
			if key == "" {
				continue
			}
			kv = append(kv, ir.C(ir.Str(key)), val)
			fc.b.StoreGlobal(l.mod+"."+key, val, pos(m))
		}
		obj := fc.b.MakeMap("Object", kv, pos(v))
		fc.b.StoreGlobal(l.mod, obj, p)
		return obj
	case "arrow_function", "function_expression", "function", "generator_function":
		fn := l.function(v, funcInfo{name: "default", qname: l.mod + ".default"}, fc, true)
		l.exported = append(l.exported, exportedFunc{qname: fn.QName, name: "default"})
		val := fc.b.Closure(fn, pos(v))
		fc.b.StoreGlobal(l.mod, val, p)
		return val
	case "identifier":
		name := l.text(v)
		if r := fc.resolve(name); r.kind == refFunc || r.kind == refClass || r.kind == refTop || r.kind == refLocal && r.qual != "" {
			fc.export("default", name, at)
			return fc.load(name, v)
		}
	case "class":
		val := fc.classValue(v, "", l.mod)
		fc.b.StoreGlobal(l.mod, val, p)
		return val
	}
	val := fc.expr(v)
	fc.b.StoreGlobal(l.mod, val, p)
	return val
}

// exportMember lowers one member of an exported object literal.
func (fc *fnCtx) exportMember(m *syntax.Node) (string, ir.Value) {
	l := fc.l
	switch m.Type {
	case "shorthand_property_identifier":
		name := l.text(m)
		if d := l.top[name]; d != nil && d.kind == topFunc {
			fc.export(name, name, m)
		}
		return name, fc.load(name, m)
	case "pair":
		k, v := m.Child("key"), unwrap(m.Child("value"))
		key := l.propertyKeyName(k)
		if key == "" || v == nil {
			return "", ir.None
		}
		switch v.Type {
		case "arrow_function", "function_expression", "function", "generator_function":
			fn := l.function(v, funcInfo{name: key, qname: l.mod + "." + key}, fc, true)
			l.exported = append(l.exported, exportedFunc{qname: fn.QName, name: key})
			return key, fc.b.Closure(fn, pos(v))
		case "identifier":
			if d := l.top[l.text(v)]; d != nil && d.kind == topFunc {
				if d.qname != l.mod+"."+key {
					l.forwarder(key, l.mod+"."+key, l.text(v), d.qname, m)
				}
				l.exported = append(l.exported, exportedFunc{qname: l.mod + "." + key, name: key})
			}
		}
		return key, fc.expr(v)
	case "method_definition":
		key := l.propertyKeyName(m.Child("name"))
		if key == "" {
			return "", ir.None
		}
		fn := l.function(m, funcInfo{name: key, qname: l.mod + "." + key}, fc, true)
		l.exported = append(l.exported, exportedFunc{qname: fn.QName, name: key})
		return key, fc.b.Closure(fn, pos(m))
	}
	return "", ir.None
}

// exportStatement lowers an export statement of the module.
func (fc *fnCtx) exportStatement(n *syntax.Node) {
	l := fc.l
	if d := n.Child("declaration"); d != nil {
		fc.stmt(d)
		def := l.isDefaultExport(d)
		switch d.Type {
		case "function_declaration", "generator_function_declaration":
			if name := d.Child("name"); name != nil && l.top[l.text(name)] != nil {
				en := l.text(name)
				if def {
					en = "default"
				}
				l.exported = append(l.exported, exportedFunc{qname: l.top[l.text(name)].qname, name: en})
				if def {
					fc.b.StoreGlobal(l.mod, fc.b.LoadGlobal(l.top[l.text(name)].qname, "", pos(d)), pos(d))
				}
			}
		case "lexical_declaration", "variable_declaration":
			for _, v := range d.Children {
				if v.Type != "variable_declarator" {
					continue
				}
				if name := v.Child("name"); name != nil && name.Type == "identifier" {
					if td := l.top[l.text(name)]; td != nil && td.fnQName != "" {
						l.exported = append(l.exported, exportedFunc{qname: td.fnQName, name: l.text(name)})
					}
				}
			}
		}
		return
	}
	if src := n.Child("source"); src != nil {
		return // re-exports: the importer's name resolves to this module, which does not define it
	}
	if clause := n.FirstOfType("export_clause"); clause != nil {
		for _, s := range clause.Children {
			if s.Type != "export_specifier" {
				continue
			}
			name, alias := s.Child("name"), s.Child("alias")
			if name == nil {
				continue
			}
			en := l.specName(name)
			if alias != nil {
				en = l.specName(alias)
			}
			fc.export(en, l.text(name), s)
		}
		return
	}
	if v := n.Child("value"); v != nil {
		fc.exportValue(v, n)
		return
	}
	for _, c := range n.NamedChildren() {
		if !isComment(c) { // TypeScript `export = value`
			fc.exportValue(c, n)
			return
		}
	}
}

// annotateExports marks exported functions with "export:<name>" and, for
// each pair of consecutive directories of the file's path, with
// "export:<name>@<dir>/<dir>", so that entry points can select handlers by
// export name and location (see the package documentation).
func (l *lowerer) annotateExports() {
	if len(l.exported) == 0 {
		return
	}
	dirs := strings.Split(path.Dir(l.file.Path), "/")
	byQ := map[string]*ir.Func{}
	for _, fn := range l.file.Funcs {
		if fn.Class == nil && byQ[fn.QName] == nil {
			byQ[fn.QName] = fn
		}
	}
	seen := map[string]bool{}
	for _, e := range l.exported {
		fn := byQ[e.qname]
		if fn == nil || seen[e.qname+"\x00"+e.name] {
			continue
		}
		seen[e.qname+"\x00"+e.name] = true
		fn.Annotations = append(fn.Annotations, ir.Annotation{Name: "export:" + e.name, Pos: fn.Pos})
		for i := 0; i+1 < len(dirs); i++ {
			if dirs[i] == "." || dirs[i] == "" {
				continue
			}
			fn.Annotations = append(fn.Annotations, ir.Annotation{Name: "export:" + e.name + "@" + dirs[i] + "/" + dirs[i+1], Pos: fn.Pos})
		}
	}
}
