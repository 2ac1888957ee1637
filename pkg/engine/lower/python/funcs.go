package python

import (
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// funcDef lowers a def (with its decorators) declared in scope s, as a method
// of cls when cls is not nil. A def nested in a function binds its name to a
// closure value in s.
func (l *lowerer) funcDef(s *scope, n *syntax.Node, decorators []*syntax.Node, cls *ir.Class) *ir.Func {
	name := l.text(n.Child("name"))
	var qname string
	switch {
	case cls != nil:
		qname = cls.QName + "." + name
	case s.module:
		qname = l.qual(name)
	default:
		qname = s.b.Fn.QName + "." + name
	}
	b := ir.NewBuilder(l.file, name, l.unique(qname))
	fn := b.Fn
	fn.Class, fn.Pos = cls, pos(n)
	if !s.module {
		fn.Parent = s.b.Fn
	}
	l.file.Funcs = append(l.file.Funcs, fn)
	ns := newScope(l, b, s, false)
	ns.cls = cls
	static := false
	for _, d := range decorators {
		a := l.annotation(s, d)
		fn.Annotations = append(fn.Annotations, a)
		static = static || a.Name == "staticmethod"
	}
	fn.Static = static
	selfParam := cls != nil && !static
	l.params(ns, n.Child("parameters"), selfParam)
	if rt := n.Child("return_type"); rt != nil {
		fn.Result = l.typeName(rt)
	}
	body := n.Child("body")
	if ns.collectLocals(body) {
		ns.gen = b.MakeList("list", nil, pos(n)).Var
	}
	l.stmts(ns, body.Children)
	end := endPos(n)
	if ns.gen != ir.NoVar && b.Reachable() {
		b.Return(ir.V(ns.gen), end)
	}
	b.Finish(end)
	switch {
	case cls != nil:
		cls.Methods = append(cls.Methods, fn)
	case s.module:
		l.topFuncs[name] = fn
	default:
		v := s.b.Closure(fn, pos(n))
		s.assignName(name, v, pos(n))
	}
	return fn
}

// endPos is an empty position at the end of a node.
func endPos(n *syntax.Node) ir.Pos {
	return lower.EndPos(n)
}

// params declares the formal parameters of a def or lambda. With selfParam
// the first one is the receiver (self, cls), typed with the class.
func (l *lowerer) params(s *scope, ps *syntax.Node, selfParam bool) {
	if ps == nil {
		return
	}
	b := s.b
	for _, p := range named(ps) {
		var nameNode, typeNode, valueNode *syntax.Node
		rest := false
		switch p.Type {
		case "identifier":
			nameNode = p
		case "typed_parameter":
			typeNode = p.Child("type")
			for _, c := range named(p) {
				if c.Field == "" {
					nameNode = c
					break
				}
			}
		case "default_parameter", "typed_default_parameter":
			nameNode, typeNode, valueNode = p.Child("name"), p.Child("type"), p.Child("value")
		case "list_splat_pattern", "dictionary_splat_pattern":
			nameNode = p
		default: // separators, tuple parameters of Python 2
			continue
		}
		typ := ""
		if nameNode != nil && (nameNode.Type == "list_splat_pattern" || nameNode.Type == "dictionary_splat_pattern") {
			rest = true
			typ = "tuple"
			if nameNode.Type == "dictionary_splat_pattern" {
				typ = "dict"
			}
			nameNode = nameNode.FirstOfType("identifier")
		}
		if nameNode == nil || nameNode.Type != "identifier" {
			continue
		}
		name := l.text(nameNode)
		if selfParam {
			selfParam = false
			cls := ""
			if s.cls != nil {
				cls = s.cls.QName
			}
			id := b.This(name, cls)
			s.vars[name] = id
			s.locals[name] = true
			s.declare(id, cls)
			continue
		}
		if typeNode != nil {
			typ = l.typeName(typeNode)
		}
		var anns []ir.Annotation
		if typeNode != nil {
			anns = l.annotatedExtras(s, typeNode)
		}
		if valueNode != nil && valueNode.Type == "call" {
			if a, ok := l.callAnnotation(s, valueNode); ok {
				anns = append(anns, a)
			}
		}
		id := b.Param(name, typ, anns)
		s.vars[name] = id
		s.locals[name] = true
		if typ != "" {
			s.declare(id, typ)
		} else {
			s.setType(id, "") // the caller's value: its type is unknown here
		}
		last := &b.Fn.Params[len(b.Fn.Params)-1]
		last.Default, last.Rest = valueNode != nil, rest
	}
}

// annotatedExtras returns the call metadata of `Annotated[T, Meta(...)]`.
func (l *lowerer) annotatedExtras(s *scope, t *syntax.Node) []ir.Annotation {
	g := t.FirstOfType("generic_type")
	if g == nil {
		return nil
	}
	if base := g.FirstOfType("identifier"); base == nil || lastSegment(l.resolveName(s, l.text(base))) != "Annotated" {
		return nil
	}
	var out []ir.Annotation
	if tp := g.FirstOfType("type_parameter"); tp != nil {
		for _, c := range named(tp) {
			if e := c.FirstOfType("call"); e != nil {
				if a, ok := l.callAnnotation(s, e); ok {
					out = append(out, a)
				}
			}
		}
	}
	return out
}

// annotation turns a decorator into an Annotation.
func (l *lowerer) annotation(s *scope, d *syntax.Node) ir.Annotation {
	var e *syntax.Node
	for _, c := range named(d) {
		e = c
		break
	}
	if e == nil {
		return ir.Annotation{Name: strings.TrimPrefix(l.text(d), "@"), Pos: pos(d)}
	}
	if e.Type == "call" {
		if a, ok := l.callAnnotation(s, e); ok {
			a.Pos = pos(d)
			return a
		}
	}
	return ir.Annotation{Name: l.annotationName(s, e), Pos: pos(d)}
}

// callAnnotation describes a call of a resolvable name with its constant
// arguments.
func (l *lowerer) callAnnotation(s *scope, call *syntax.Node) (ir.Annotation, bool) {
	fn := call.Child("function")
	if fn == nil || (fn.Type != "identifier" && fn.Type != "attribute") {
		return ir.Annotation{}, false
	}
	a := ir.Annotation{Name: l.annotationName(s, fn), Pos: pos(call)}
	args := call.Child("arguments")
	if args == nil {
		return a, true
	}
	i := 0
	for _, c := range named(args) {
		key, val := "", c
		if c.Type == "keyword_argument" {
			key, val = l.text(c.Child("name")), c.Child("value")
		} else {
			key = itoa(i)
			i++
		}
		if v, ok := l.constText(val); ok {
			if a.Args == nil {
				a.Args = map[string]string{}
			}
			a.Args[key] = v
		}
	}
	return a, true
}

// annotationName resolves a decorator or annotation name through imports,
// classes and the evident types of module-level objects.
func (l *lowerer) annotationName(s *scope, e *syntax.Node) string {
	switch e.Type {
	case "identifier":
		return l.resolveName(s, l.text(e))
	case "attribute":
		root := e
		var rest []string
		for root.Type == "attribute" {
			rest = append(rest, l.text(root.Child("attribute")))
			root = root.Child("object")
		}
		if root.Type != "identifier" {
			break
		}
		base := l.text(root)
		ref := s.lookup(base)
		switch {
		case ref.kind == nkImport || ref.kind == nkModule || ref.kind == nkClass:
			base = ref.qual
		case ref.kind == nkGlobal && ref.typ != "":
			base = ref.typ
		case ref.kind == nkLocal && s.b.Fn.Vars[ref.v].Type != "":
			base = s.b.Fn.Vars[ref.v].Type
		}
		for i := len(rest) - 1; i >= 0; i-- {
			base += "." + rest[i]
		}
		return base
	}
	return strings.Join(strings.Fields(l.text(e)), "")
}

// resolveName resolves a plain name to its qualified name when it is
// imported or a class of the file, else returns it unchanged.
func (l *lowerer) resolveName(s *scope, name string) string {
	ref := s.lookup(name)
	switch ref.kind {
	case nkImport, nkModule, nkClass:
		return ref.qual
	case nkTopFunc:
		return l.qual(name)
	}
	return name
}

// typeName turns a type annotation into a type name: builtin names as
// written, classes of the file and imported names qualified, Optional[T] and
// T | None as T, generics by their origin (List[str] → list).
func (l *lowerer) typeName(t *syntax.Node) string {
	if t == nil {
		return ""
	}
	if t.Type == "type" {
		cs := named(t)
		if len(cs) != 1 {
			return ""
		}
		t = cs[0]
	}
	switch t.Type {
	case "identifier":
		name := l.text(t)
		if builtinTypes[name] {
			return name
		}
		if name == "None" {
			return ""
		}
		return l.canonicalType(l.resolveName(l.moduleScope(), name))
	case "attribute":
		if q := l.modulePath(t); q != "" {
			return l.canonicalType(q)
		}
		return strings.Join(strings.Fields(l.text(t)), "")
	case "string": // forward reference "User"
		if c := t.FirstOfType("string_content"); c != nil && len(c.Children) == 0 {
			return l.typeName(&syntax.Node{Type: "identifier", Start: c.Start, End: c.End})
		}
	case "generic_type":
		base := ""
		if id := t.FirstOfType("identifier"); id != nil {
			base = l.canonicalType(l.resolveName(l.moduleScope(), l.text(id)))
		} else if at := t.FirstOfType("attribute"); at != nil {
			base = l.canonicalType(l.modulePath(at))
		}
		if base == "typing.Optional" || base == "typing.Annotated" || base == "Optional" || base == "Annotated" {
			if tp := t.FirstOfType("type_parameter"); tp != nil {
				if first := tp.FirstOfType("type"); first != nil {
					return l.typeName(first)
				}
			}
		}
		return base
	case "union_type", "binary_operator":
		for _, c := range named(t) {
			if tn := l.typeName(c); tn != "" {
				return tn
			}
		}
	}
	return ""
}

// canonicalType maps typing aliases of built-in containers to the built-in.
func (l *lowerer) canonicalType(q string) string {
	switch q {
	case "typing.List", "List":
		return "list"
	case "typing.Dict", "Dict", "typing.Mapping", "typing.MutableMapping":
		return "dict"
	case "typing.Set", "Set", "typing.FrozenSet":
		return "set"
	case "typing.Tuple", "Tuple":
		return "tuple"
	case "typing.Text", "Text":
		return "str"
	}
	return q
}

// moduleScope is a scope for resolving names at module level (types).
func (l *lowerer) moduleScope() *scope {
	return &scope{l: l, module: true}
}

// lambda lowers a lambda into a closure Func and returns its value.
func (l *lowerer) lambda(s *scope, n *syntax.Node) ir.Value {
	s.lambdas++
	b := ir.NewBuilder(l.file, "<lambda>", l.unique(s.b.Fn.QName+"$lambda"+itoa(s.lambdas)))
	fn := b.Fn
	fn.Parent, fn.Class, fn.Pos = s.b.Fn, nil, pos(n)
	l.file.Funcs = append(l.file.Funcs, fn)
	ns := newScope(l, b, s, false)
	l.params(ns, n.Child("parameters"), false)
	body := n.Child("body")
	if body != nil {
		ns.collectLocals(body)
		v := l.expr(ns, body)
		b.Return(v, pos(body))
	}
	b.Finish(endPos(n))
	return s.b.Closure(fn, pos(n))
}

// classDef lowers a class: its methods become Funcs of the class, its
// class-level assignments static fields (stored as globals "<Class>.<name>"
// by the enclosing code), nested classes classes with Outer set.
func (l *lowerer) classDef(s *scope, n *syntax.Node, decorators []*syntax.Node, outer *ir.Class) *ir.Class {
	name := l.text(n.Child("name"))
	var qname string
	switch {
	case outer != nil:
		qname = outer.QName + "." + name
	case s.module:
		qname = l.qual(name)
	default:
		qname = l.unique(s.b.Fn.QName + "." + name)
		if s.classes == nil {
			s.classes = map[string]string{}
		}
		s.classes[name] = qname
	}
	c := &ir.Class{Name: name, QName: qname, Outer: outer, File: l.file, Pos: pos(n)}
	for _, d := range decorators {
		c.Annotations = append(c.Annotations, l.annotation(s, d))
	}
	if sup := n.Child("superclasses"); sup != nil {
		for _, e := range named(sup) {
			if e.Type == "keyword_argument" || e.Type == "list_splat" || e.Type == "dictionary_splat" {
				continue
			}
			if t := l.classRef(s, e); t != "" && t != "object" {
				c.Super = append(c.Super, t)
			}
		}
	}
	l.file.Classes = append(l.file.Classes, c)
	body := n.Child("body")
	if body == nil {
		return c
	}
	for _, st := range body.Children {
		def, decs := st, []*syntax.Node(nil)
		if st.Type == "decorated_definition" {
			def, decs = st.Child("definition"), decorators0(st)
		}
		switch {
		case def == nil:
		case def.Type == "function_definition":
			l.funcDef(s, def, decs, c)
		case def.Type == "class_definition":
			l.classDef(s, def, decs, c)
		case st.Type == "expression_statement":
			l.classAttrs(s, c, st)
		case st.Type == "pass_statement":
		default:
			l.stmt(s, st)
		}
	}
	return c
}

// decorators0 returns the decorator children of a decorated_definition.
func decorators0(n *syntax.Node) []*syntax.Node {
	var out []*syntax.Node
	for _, c := range n.Children {
		if c.Type == "decorator" {
			out = append(out, c)
		}
	}
	return out
}

// classAttrs lowers `name = value` in a class body: a static field, whose
// value the enclosing code stores into the global "<Class>.<name>".
func (l *lowerer) classAttrs(s *scope, c *ir.Class, st *syntax.Node) {
	for _, e := range named(st) {
		if e.Type != "assignment" {
			if e.Type != "string" {
				l.expr(s, e)
			}
			continue
		}
		left, right := e.Child("left"), e.Child("right")
		if left == nil || left.Type != "identifier" {
			l.expr(s, e)
			continue
		}
		fname := l.text(left)
		typ := ""
		if t := e.Child("type"); t != nil {
			typ = l.typeName(t)
		}
		if right == nil {
			addField(c, ir.Field{Name: fname, Type: typ, Static: true, Pos: pos(left)})
			continue
		}
		v := l.expr(s, right)
		if typ == "" {
			typ = valueType(s.b.Fn, v)
		}
		addField(c, ir.Field{Name: fname, Type: typ, Static: true, Pos: pos(left)})
		s.b.StoreGlobal(c.QName+"."+fname, v, pos(e))
	}
}

func addField(c *ir.Class, f ir.Field) {
	for i := range c.Fields {
		if c.Fields[i].Name == f.Name {
			if c.Fields[i].Type == "" {
				c.Fields[i].Type = f.Type
			}
			return
		}
	}
	c.Fields = append(c.Fields, f)
}

// classRef resolves an expression naming a class (a base class).
func (l *lowerer) classRef(s *scope, e *syntax.Node) string {
	switch e.Type {
	case "identifier":
		return l.resolveName(s, l.text(e))
	case "attribute":
		if q := l.modulePath(e); q != "" {
			return q
		}
		return l.annotationName(s, e)
	case "subscript": // Generic[T], List[str]
		if v := e.Child("value"); v != nil {
			return l.canonicalType(l.classRef(s, v))
		}
	}
	return ""
}

// valueType is the static type of an operand: a constant's or a variable's.
func valueType(fn *ir.Func, v ir.Value) string {
	switch {
	case v.IsConst():
		switch v.Const.Kind {
		case ir.ConstStr:
			return "str"
		case ir.ConstInt:
			return "int"
		case ir.ConstFloat:
			return "float"
		case ir.ConstBool:
			return "bool"
		}
	case v.IsVar():
		return fn.Vars[v.Var].Type
	}
	return ""
}

func itoa(i int) string {
	if i >= 0 && i < 10 {
		return string(rune('0' + i))
	}
	var buf [20]byte
	n := len(buf)
	neg := i < 0
	if neg {
		i = -i
	}
	for i > 0 {
		n--
		buf[n] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		n--
		buf[n] = '-'
	}
	return string(buf[n:])
}

// constText renders a constant decorator argument: strings, numbers,
// booleans, None, and lists or tuples of them joined with ",".
func (l *lowerer) constText(n *syntax.Node) (string, bool) {
	switch n.Type {
	case "string", "concatenated_string":
		if n.FirstOfType("interpolation") != nil {
			return "", false
		}
		parts := l.stringParts(nil, n, nil)
		if n.Type == "concatenated_string" {
			parts = nil
			for _, c := range n.Children {
				if c.Type == "string" {
					if c.FirstOfType("interpolation") != nil {
						return "", false
					}
					parts = l.stringParts(nil, c, parts)
				}
			}
		}
		var sb strings.Builder
		for _, p := range parts {
			sb.WriteString(p.Const.Str)
		}
		return sb.String(), true
	case "integer", "float":
		return l.text(n), true
	case "true":
		return "true", true
	case "false":
		return "false", true
	case "none":
		return "null", true
	case "list", "tuple", "set":
		var out []string
		for _, c := range named(n) {
			v, ok := l.constText(c)
			if !ok {
				return "", false
			}
			out = append(out, v)
		}
		return strings.Join(out, ","), true
	}
	return "", false
}
