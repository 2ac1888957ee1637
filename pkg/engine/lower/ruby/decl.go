package ruby

import (
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// classDecl lowers `class X < Y ... end` and `module X ... end`: the body
// runs in the current function (File.Init) with the class as context.
func (fs *fnState) classDecl(n *syntax.Node) {
	name := n.Child("name")
	if name == nil {
		return
	}
	outer := fs.ctx.cls
	nest := ""
	if len(fs.ctx.nesting) > 0 {
		nest = fs.ctx.nesting[len(fs.ctx.nesting)-1]
	}
	q := fs.l.declName(name, nest)
	c := fs.l.class(q, outer, n)
	if n.Type == "module" && len(c.Annotations) == 0 {
		c.Annotations = append(c.Annotations, ir.Annotation{Name: "module", Pos: pos(n)})
	}
	if sup := n.Child("superclass"); sup != nil {
		for _, s := range sup.NamedChildren() {
			if s.Type == "constant" || s.Type == "scope_resolution" {
				addSuper(c, fs.resolve(fs.l.text(s)))
			} else {
				fs.expr(s, false) // Struct.new(...) and other computed superclasses
			}
		}
	}
	saved, savedBody := fs.ctx, fs.classBody
	nesting := append(append([]string(nil), saved.nesting...), q)
	fs.ctx = &classCtx{cls: c, nesting: nesting}
	fs.classBody = true
	if body := n.Child("body"); body != nil {
		fs.beginBody(body, false)
	}
	fs.ctx, fs.classBody = saved, savedBody
}

func addSuper(c *ir.Class, s string) {
	for _, x := range c.Super {
		if x == s {
			return
		}
	}
	c.Super = append(c.Super, s)
}

// singletonClass lowers `class << self ... end`: its defs are singleton methods.
func (fs *fnState) singletonClass(n *syntax.Node) {
	saved := *fs.ctx
	fs.ctx.singleton = true
	if body := n.Child("body"); body != nil {
		fs.beginBody(body, false)
	}
	*fs.ctx = saved
}

// methodDecl lowers def and def self.x into a Func and returns it.
func (fs *fnState) methodDecl(n *syntax.Node) *ir.Func {
	nameN := n.Child("name")
	name := strings.TrimSpace(fs.l.text(nameN))
	cls := fs.ctx.cls
	static := n.Type == "singleton_method" || fs.ctx.singleton || fs.ctx.moduleFn
	if obj := n.Child("object"); obj != nil && obj.Type != "self" {
		cls, static = nil, false // def obj.x: a function of that object
	}
	if name == "initialize" && !static {
		name = "<init>"
	}
	qname := name
	if cls != nil {
		sep := "#"
		if static {
			sep = "."
		}
		qname = cls.QName + sep + name
	}
	fn := fs.newFunc(name, qname, cls, static, n, n.Child("parameters"), n.Child("body"))
	if cls != nil {
		cls.Methods = append(cls.Methods, fn)
		if v := fs.ctx.visibility; v != "" {
			fn.Annotations = append(fn.Annotations, ir.Annotation{Name: v, Pos: pos(n)})
		}
	}
	return fn
}

// newFunc lowers a method body into a new Func. body may be a
// body_statement or (endless def) a single expression.
func (fs *fnState) newFunc(name, qname string, cls *ir.Class, static bool, n, params, body *syntax.Node) *ir.Func {
	l := fs.l
	b := ir.NewBuilder(l.file, name, qname)
	b.Fn.Class, b.Fn.Static, b.Fn.Pos = cls, static, pos(n)
	l.file.Funcs = append(l.file.Funcs, b.Fn)
	ctx := fs.ctx
	if cls != nil && cls != ctx.cls {
		ctx = &classCtx{cls: cls, nesting: ctx.nesting}
	} else if cls == nil {
		ctx = &classCtx{nesting: ctx.nesting}
	}
	m := &fnState{l: l, b: b, ctx: ctx, self: ir.NoVar, block: ir.NoVar, isMethod: true, static: static, redo: -1}
	if cls != nil && !static {
		m.self = b.This("self", cls.QName)
	}
	m.params(params)
	var v ir.Value
	switch {
	case body == nil:
		v = ir.C(ir.Null())
	case body.Type == "body_statement":
		v = m.beginBody(body, true)
	default:
		v = m.expr(body, true)
	}
	if b.Reachable() {
		b.Return(v, pos(n))
	}
	return b.Finish(pos(n))
}

// params declares the formal parameters of a method, block or lambda.
func (fs *fnState) params(list *syntax.Node) {
	if list == nil {
		return
	}
	b := fs.b
	var defaults []*syntax.Node
	for _, p := range list.NamedChildren() {
		switch p.Type {
		case "identifier":
			b.Param(fs.l.text(p), "", nil)
		case "optional_parameter", "keyword_parameter":
			b.Param(fs.l.text(p.Child("name")), "", nil)
			if p.Child("value") != nil {
				b.Fn.Params[len(b.Fn.Params)-1].Default = true
				defaults = append(defaults, p)
			}
		case "splat_parameter", "hash_splat_parameter":
			name := "*"
			if p.Type == "hash_splat_parameter" {
				name = "**"
			}
			if nn := p.Child("name"); nn != nil {
				name = fs.l.text(nn)
			}
			b.Param(name, "", nil)
			b.Fn.Params[len(b.Fn.Params)-1].Rest = true
		case "forward_parameter":
			b.Param("...", "", nil)
			b.Fn.Params[len(b.Fn.Params)-1].Rest = true
		case "block_parameter":
			fs.block = b.Param("&block", "Proc", nil)
			if nn := p.Child("name"); nn != nil {
				v := b.Var(fs.l.text(nn), "Proc")
				b.Assign(v, ir.V(fs.block), pos(p))
				fs.markProc(fs.l.text(nn))
			}
		case "destructured_parameter":
			t := b.Param("$destructured", "", nil)
			fs.destructure(p, ir.V(t))
		}
	}
	// A default value is computed when the caller passes no argument.
	for _, p := range defaults {
		v, _ := b.Lookup(fs.l.text(p.Child("name")))
		set, join := b.NewBlock(), b.NewBlock()
		b.If(b.Opaque(nil, pos(p)), set, join, pos(p))
		b.SetBlock(set)
		d := fs.expr(p.Child("value"), true)
		if b.Reachable() {
			b.Assign(v, d, pos(p))
			b.Jump(join, pos(p))
		}
		b.SetBlock(join)
	}
}

// destructure binds the names of a destructured parameter (|(a, b)|) to the
// elements of v.
func (fs *fnState) destructure(p *syntax.Node, v ir.Value) {
	for i, c := range p.NamedChildren() {
		switch c.Type {
		case "identifier":
			e := fs.b.LoadIndex(v, ir.C(ir.Int(int64(i))), "", pos(c))
			fs.b.Assign(fs.b.Var(fs.l.text(c), ""), e, pos(c))
		case "splat_parameter":
			if nn := c.Child("name"); nn != nil {
				fs.b.Assign(fs.b.Var(fs.l.text(nn), ""), v, pos(c))
			}
		case "destructured_parameter":
			e := fs.b.LoadIndex(v, ir.C(ir.Int(int64(i))), "", pos(c))
			fs.destructure(c, e)
		}
	}
}

func (fs *fnState) markProc(name string) {
	if fs.procs == nil {
		fs.procs = map[string]bool{}
	}
	fs.procs[name] = true
}

// accessors declares the fields and accessor methods of attr_accessor,
// attr_reader and attr_writer.
func (fs *fnState) accessors(kind string, args *syntax.Node) {
	c := fs.ctx.cls
	if c == nil || args == nil {
		return
	}
	for _, a := range args.NamedChildren() {
		name, ok := fs.symbolName(a)
		if !ok {
			continue
		}
		if !hasField(c, name) {
			c.Fields = append(c.Fields, ir.Field{Name: name, Pos: pos(a)})
		}
		if kind != "attr_writer" {
			b := ir.NewBuilder(fs.l.file, name, c.QName+"#"+name)
			b.Fn.Class, b.Fn.Pos = c, pos(a)
			self := b.This("self", c.QName)
			b.Return(b.LoadField(ir.V(self), name, "", pos(a)), pos(a))
			fs.addMethod(c, b.Finish(pos(a)))
		}
		if kind == "attr_writer" || kind == "attr_accessor" {
			b := ir.NewBuilder(fs.l.file, name+"=", c.QName+"#"+name+"=")
			b.Fn.Class, b.Fn.Pos = c, pos(a)
			self := b.This("self", c.QName)
			v := b.Param("value", "", nil)
			b.StoreField(ir.V(self), name, ir.V(v), pos(a))
			b.Return(ir.V(v), pos(a))
			fs.addMethod(c, b.Finish(pos(a)))
		}
	}
}

func (fs *fnState) addMethod(c *ir.Class, fn *ir.Func) {
	c.Methods = append(c.Methods, fn)
	fs.l.file.Funcs = append(fs.l.file.Funcs, fn)
}

func hasField(c *ir.Class, name string) bool {
	for _, f := range c.Fields {
		if f.Name == name {
			return true
		}
	}
	return false
}

// symbolName reads a literal symbol or string argument (:name, "name").
func (fs *fnState) symbolName(n *syntax.Node) (string, bool) {
	switch n.Type {
	case "simple_symbol":
		return strings.TrimPrefix(fs.l.text(n), ":"), true
	case "string", "delimited_symbol":
		if s, ok := fs.constString(n); ok {
			return s, true
		}
	}
	return "", false
}

// visibility handles private/protected/public/module_function in a class
// body: without arguments they apply to the following defs; with symbol
// arguments or a def they annotate those methods.
func (fs *fnState) visibility(kind string, args *syntax.Node) {
	c := fs.ctx.cls
	if args == nil || len(args.NamedChildren()) == 0 {
		switch kind {
		case "module_function":
			fs.ctx.moduleFn = true
		case "public":
			fs.ctx.visibility = ""
		case "private", "protected":
			fs.ctx.visibility = kind
		}
		return
	}
	for _, a := range args.NamedChildren() {
		var fn *ir.Func
		if a.Type == "method" || a.Type == "singleton_method" {
			fn = fs.methodDecl(a)
		} else if name, ok := fs.symbolName(a); ok && c != nil {
			for _, m := range c.Methods {
				if m.Name == name || (name == "initialize" && m.Name == "<init>") {
					fn = m
				}
			}
		} else {
			fs.expr(a, false)
		}
		if fn != nil && (kind == "private" || kind == "protected" || kind == "private_class_method") {
			fn.Annotations = append(fn.Annotations, ir.Annotation{Name: strings.TrimSuffix(kind, "_class_method"), Pos: pos(a)})
		}
	}
}

// mixins adds include/extend/prepend arguments to the class's supertypes.
func (fs *fnState) mixins(args *syntax.Node) {
	if fs.ctx.cls == nil || args == nil {
		return
	}
	for _, a := range args.NamedChildren() {
		if a.Type == "constant" || a.Type == "scope_resolution" {
			addSuper(fs.ctx.cls, fs.resolve(fs.l.text(a)))
		}
	}
}
