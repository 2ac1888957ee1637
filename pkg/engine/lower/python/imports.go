package python

import (
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// collectImports records every import of the file, wherever it is written,
// before anything is lowered: Python resolves a name at run time, and an
// import inside a function or an if/try at module level binds it all the
// same.
func (l *lowerer) collectImports(n *syntax.Node) {
	switch n.Type {
	case "import_statement":
		l.importStatement(n)
		return
	case "import_from_statement", "future_import_statement":
		l.importFrom(n)
		return
	}
	for _, c := range n.Children {
		if c.Named {
			l.collectImports(c)
		}
	}
}

func (l *lowerer) addImport(alias, path string, module bool) {
	if alias == "" || path == "" {
		return
	}
	l.imports[alias] = path
	if module {
		l.modules[alias] = true
	} else {
		delete(l.modules, alias)
	}
	l.file.Imports = append(l.file.Imports, ir.Import{Alias: alias, Path: path})
}

// importStatement: `import a.b.c` binds a (the module a), `import a.b as z`
// binds z to the module a.b.
func (l *lowerer) importStatement(n *syntax.Node) {
	for _, c := range n.ChildrenByField("name") {
		switch c.Type {
		case "dotted_name":
			full := l.text(c)
			root := full
			if i := strings.IndexByte(full, '.'); i >= 0 {
				root = full[:i]
			}
			l.addImport(root, root, true)
		case "aliased_import":
			l.addImport(l.text(c.Child("alias")), dotted(l.src, c.Child("name")), true)
		}
	}
}

// importFrom: `from m import f as g` binds g to m.f; relative modules are
// resolved against the file's package. `from . import views` binds a module.
func (l *lowerer) importFrom(n *syntax.Node) {
	modNode := n.Child("module_name")
	module, relative := "", false
	if n.Type == "future_import_statement" {
		module = "__future__"
	} else if modNode != nil {
		if modNode.Type == "relative_import" {
			relative = true
			module = l.resolveRelative(modNode)
		} else {
			module = dotted(l.src, modNode)
		}
	}
	for _, c := range n.Children {
		switch {
		case c.Type == "wildcard_import":
			l.addImport("*", module, true)
		case c.Field != "name":
		case c.Type == "dotted_name":
			name := dotted(l.src, c)
			l.addImport(lastSegment(name), join(module, name), relative && !hasDotted(modNode))
		case c.Type == "aliased_import":
			name := dotted(l.src, c.Child("name"))
			l.addImport(l.text(c.Child("alias")), join(module, name), relative && !hasDotted(modNode))
		}
	}
}

func hasDotted(n *syntax.Node) bool { return n != nil && n.FirstOfType("dotted_name") != nil }

// resolveRelative turns `.m`, `..`, `..a.b` into an absolute module path.
func (l *lowerer) resolveRelative(n *syntax.Node) string {
	dots := 0
	if p := n.FirstOfType("import_prefix"); p != nil {
		dots = strings.Count(l.text(p), ".")
	}
	base := l.pkg
	for i := 1; i < dots; i++ {
		if j := strings.LastIndexByte(base, '.'); j >= 0 {
			base = base[:j]
		} else {
			base = ""
		}
	}
	if d := n.FirstOfType("dotted_name"); d != nil {
		return join(base, dotted(l.src, d))
	}
	return base
}

// dotted returns the text of a dotted_name (or identifier) without spaces.
func dotted(src []byte, n *syntax.Node) string {
	if n == nil {
		return ""
	}
	if n.Type != "dotted_name" {
		return n.Text(src)
	}
	var b strings.Builder
	for i, c := range named(n) {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(c.Text(src))
	}
	return b.String()
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}

func lastSegment(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// capitalized reports whether a name follows the class naming convention.
func capitalized(name string) bool {
	name = lastSegment(name)
	name = strings.TrimLeft(name, "_")
	return name != "" && name[0] >= 'A' && name[0] <= 'Z'
}

// collectModule records the names a module defines at top level (functions,
// classes and assigned globals) and the evident types of its globals, so that
// functions lowered before a later assignment still resolve them.
func (l *lowerer) collectModule(root *syntax.Node) {
	var walk func(stmts []*syntax.Node)
	walk = func(stmts []*syntax.Node) {
		for _, st := range stmts {
			switch st.Type {
			case "function_definition":
				l.topDefs[l.text(st.Child("name"))] = true
			case "class_definition":
				name := l.text(st.Child("name"))
				l.classes[name] = l.qual(name)
			case "decorated_definition":
				walk([]*syntax.Node{st.Child("definition")})
			case "expression_statement":
				for _, e := range named(st) {
					l.collectAssign(e)
				}
			case "import_statement", "import_from_statement", "future_import_statement":
			default:
				// compound statements: their targets and blocks
				if t := st.Child("left"); t != nil && st.Type == "for_statement" {
					for _, name := range targetNames(l.src, t, nil) {
						l.globals[name] = true
					}
				}
				for _, c := range st.Children {
					switch c.Type {
					case "block":
						walk(c.Children)
					case "else_clause", "elif_clause", "except_clause", "except_group_clause", "finally_clause", "case_clause":
						for _, cc := range c.Children {
							if cc.Type == "block" {
								walk(cc.Children)
							}
						}
					case "with_clause":
						for _, it := range c.Children {
							if v := it.Child("value"); v != nil && v.Type == "as_pattern" {
								for _, name := range targetNames(l.src, v.Child("alias"), nil) {
									l.globals[name] = true
								}
							}
						}
					}
				}
			}
		}
	}
	walk(root.Children)
}

func (l *lowerer) collectAssign(e *syntax.Node) {
	for e != nil && (e.Type == "assignment" || e.Type == "augmented_assignment") {
		left, right := e.Child("left"), e.Child("right")
		names := targetNames(l.src, left, nil)
		for _, name := range names {
			l.globals[name] = true
		}
		if len(names) == 1 && left.Type == "identifier" {
			if t := l.evidentType(right); t != "" {
				if old, ok := l.gtypes[names[0]]; !ok || old == t {
					l.gtypes[names[0]] = t
				} else {
					l.gtypes[names[0]] = ""
				}
			} else if ann := e.Child("type"); ann != nil {
				l.gtypes[names[0]] = l.typeName(ann)
			}
		}
		if e.Type != "assignment" || right == nil || right.Type != "assignment" {
			return
		}
		e = right
	}
}

// targetNames lists the identifiers an assignment target binds.
func targetNames(src []byte, t *syntax.Node, out []string) []string {
	if t == nil {
		return out
	}
	switch t.Type {
	case "identifier":
		return append(out, t.Text(src))
	case "pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "list_splat_pattern", "expression_list",
		"parenthesized_expression", "as_pattern_target", "list_splat":
		for _, c := range t.Children {
			if c.Named {
				out = targetNames(src, c, out)
			}
		}
	}
	return out
}

// evidentType is the type a module-level value evidently has: a literal's,
// or a constructor's class.
func (l *lowerer) evidentType(n *syntax.Node) string {
	if n == nil {
		return ""
	}
	if t := literalType(n.Type); t != "" {
		return t
	}
	if n.Type != "call" {
		return ""
	}
	fn := n.Child("function")
	switch fn.Type {
	case "identifier":
		name := l.text(fn)
		if q, ok := l.classes[name]; ok {
			return q
		}
		if q, ok := l.imports[name]; ok && capitalized(name) && !l.modules[name] {
			return q
		}
		if builtinTypes[name] {
			return name
		}
	case "attribute":
		if q := l.modulePath(fn); q != "" && capitalized(q) {
			return q
		}
	}
	return ""
}

// modulePath resolves an attribute chain rooted at an imported module or an
// imported class to a dotted qualified name, or "".
func (l *lowerer) modulePath(n *syntax.Node) string {
	switch n.Type {
	case "identifier":
		name := l.text(n)
		if q, ok := l.imports[name]; ok && (l.modules[name] || capitalized(name)) {
			return q
		}
		return ""
	case "attribute":
		obj := n.Child("object")
		base := l.modulePath(obj)
		if base == "" {
			return ""
		}
		// below a class, a chain names members, not modules
		if capitalized(lastSegment(base)) && obj.Type == "attribute" {
			return ""
		}
		return base + "." + l.text(n.Child("attribute"))
	}
	return ""
}

// literalType is the type of a literal node.
func literalType(typ string) string {
	switch typ {
	case "string", "concatenated_string":
		return "str"
	case "integer":
		return "int"
	case "float":
		return "float"
	case "true", "false":
		return "bool"
	case "list", "list_comprehension":
		return "list"
	case "dictionary", "dictionary_comprehension":
		return "dict"
	case "tuple":
		return "tuple"
	case "set", "set_comprehension":
		return "set"
	}
	return ""
}

// builtinTypes are the built-in classes whose call constructs a value of
// that type.
var builtinTypes = map[string]bool{
	"str": true, "int": true, "float": true, "bool": true, "list": true, "dict": true, "set": true,
	"tuple": true, "bytes": true, "bytearray": true, "frozenset": true, "complex": true, "object": true,
}
