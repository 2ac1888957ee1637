package javascript

import (
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// funcInfo describes the function being lowered.
type funcInfo struct {
	name, qname string
	class       *classInfo // methods
	static      bool
	prologue    func(fc *fnCtx) // runs after the parameters are bound (constructor field initializers)
}

// isFunctionNode reports whether n is a function or arrow function
// expression.
func isFunctionNode(n *syntax.Node) bool {
	if n == nil {
		return false
	}
	switch n.Type {
	case "arrow_function", "function_expression", "function", "generator_function":
		return true
	}
	return false
}

// function lowers a function, arrow function or method n into a new Func
// appended to the file. Functions nested in another one have it as Parent;
// module-level ones (topLevel) have none and see module names as globals.
func (l *lowerer) function(n *syntax.Node, fi funcInfo, parent *fnCtx, topLevel bool) *ir.Func {
	b := ir.NewBuilder(l.file, fi.name, l.uniqueQName(fi.qname))
	fn := b.Fn
	fn.Pos = pos(n)
	fn.Static = fi.static
	if parent != nil && !topLevel {
		fn.Parent = parent.b.Fn
	}
	if fi.class != nil {
		fn.Class = fi.class.cls
	}
	l.file.Funcs = append(l.file.Funcs, fn)
	fc := newFnCtx(l, b, parent)
	fc.arrow = n.Type == "arrow_function"
	fc.class = fi.class
	fc.static = fi.static
	if fi.class != nil && !fi.static {
		fc.this = b.This("this", fi.class.cls.QName)
		fc.scopes[0]["this"] = &sym{v: fc.this}
	}
	if rt := n.Child("return_type"); rt != nil {
		fn.Result = l.typeOf(rt)
	}
	fc.params(n)
	if fi.prologue != nil {
		fi.prologue(fc)
	}
	body := n.Child("body")
	switch {
	case body == nil:
		if fi.class != nil && n.Type != "method_definition" {
			fn.Abstract = true
		}
	case body.Type == "statement_block":
		fc.predeclare(body.Children)
		fc.hoist(body.Children)
		fc.stmts(body.Children)
	default: // arrow function with an expression body
		v := fc.expr(body)
		b.Return(v, pos(body))
	}
	return b.Finish(lower.EndPos(n))
}

// params binds the formal parameters of n.
func (fc *fnCtx) params(n *syntax.Node) {
	if p := n.Child("parameter"); p != nil { // x => ...
		fc.param(p)
		return
	}
	ps := n.Child("parameters")
	if ps == nil {
		return
	}
	var deferred []func()
	for _, p := range ps.Children {
		if !p.Named || isComment(p) {
			continue
		}
		if d := fc.param(p); d != nil {
			deferred = append(deferred, d)
		}
	}
	for _, d := range deferred {
		d()
	}
}

// param binds one formal parameter and returns the destructuring or
// default-value code to run once every parameter is bound, if any.
func (fc *fnCtx) param(p *syntax.Node) func() {
	l := fc.l
	typ := ""
	var def *syntax.Node
	prop := false
	pat := p
	switch p.Type {
	case "required_parameter", "optional_parameter":
		pat = p.Child("pattern")
		typ = l.typeOf(p.Child("type"))
		def = p.Child("value")
		prop = p.FirstOfType("accessibility_modifier") != nil || l.hasKeyword(p, pat, "readonly")
	case "assignment_pattern":
		pat, def = p.Child("left"), p.Child("right")
	}
	if pat == nil {
		return nil
	}
	rest := false
	if pat.Type == "rest_pattern" {
		rest = true
		if inner := firstNamed(pat); inner != nil {
			pat = inner
		}
	}
	if pat.Type == "assignment_pattern" {
		pat, def = pat.Child("left"), pat.Child("right")
		if pat == nil {
			return nil
		}
	}
	if pat.Type == "this" { // TypeScript this-parameter: a type annotation only
		return nil
	}
	name := "$p" + itoa(len(fc.b.Fn.Params))
	simple := pat.Type == "identifier"
	if simple {
		name = l.text(pat)
	}
	if fc.used != nil {
		fc.used[name] = true
	}
	v := fc.b.Param(name, typ, l.decorators(p))
	fc.scopes[0][name] = &sym{v: v}
	idx := len(fc.b.Fn.Params) - 1
	fc.b.Fn.Params[idx].Default = def != nil
	fc.b.Fn.Params[idx].Rest = rest
	if simple && def == nil && !prop {
		return nil
	}
	return func() {
		val := ir.V(v)
		if def != nil {
			val = fc.withDefault(val, def)
			if simple {
				fc.b.Assign(v, val, pos(p))
			}
		}
		if prop && fc.this != ir.NoVar {
			fc.b.StoreField(ir.V(fc.this), name, val, pos(p))
		}
		if !simple {
			fc.bindPattern(pat, val, bindLet, pos(p))
		}
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// hoist creates the closures of the function declarations of a statement
// list before its first statement, as JavaScript hoists them.
func (fc *fnCtx) hoist(list []*syntax.Node) {
	for _, n := range list {
		d := n
		if d.Type == "export_statement" {
			d = d.Child("declaration")
		}
		if d == nil || d.Type != "function_declaration" && d.Type != "generator_function_declaration" {
			continue
		}
		if fc.module && len(fc.scopes) == 1 {
			continue // module-level functions are not closures
		}
		name := d.Child("name")
		if name == nil {
			continue
		}
		fn := fc.l.function(d, funcInfo{name: fc.l.text(name), qname: fc.b.Fn.QName + "$" + fc.l.text(name)}, fc, false)
		v := fc.declare(fc.l.text(name), "", true)
		fc.b.Assign(v, fc.b.Closure(fn, pos(d)), pos(d))
		fc.hoisted = append(fc.hoisted, d)
	}
}

// closure lowers a function expression into a nested Func and returns the
// closure value. name names it (a variable it initializes), or "" for a
// lambda.
func (fc *fnCtx) closure(n *syntax.Node, name string) ir.Value {
	l := fc.l
	if nm := n.Child("name"); nm != nil && name == "" {
		name = l.text(nm)
	}
	var fi funcInfo
	top := false
	switch {
	case fc.module && len(fc.scopes) == 1 && name != "" && l.top[name] != nil && l.top[name].fnQName != "":
		fi = funcInfo{name: name, qname: l.top[name].fnQName}
		top = true
	case name != "":
		fi = funcInfo{name: name, qname: fc.b.Fn.QName + "$" + name}
	default:
		fi = funcInfo{name: "<lambda>", qname: l.lambdaName(fc.b.Fn.QName)}
	}
	fn := l.function(n, fi, fc, top)
	return fc.b.Closure(fn, pos(n))
}
