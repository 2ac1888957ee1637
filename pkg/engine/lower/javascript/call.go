package javascript

import (
	"strings"
	"unicode"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// call lowers a call expression (tagged templates included).
func (fc *fnCtx) call(n *syntax.Node) ir.Value {
	l := fc.l
	p := pos(n)
	callee := unwrap(n.Child("function"))
	argsNode := n.Child("arguments")
	if callee == nil {
		return fc.b.Opaque(nil, p)
	}
	// require('m') and import('m') are the module value
	if imp, ok := l.requireRef(n); ok && (callee.Type == "import" || fc.resolve("require").kind == refGlobal) {
		return fc.b.LoadGlobal(imp.qual, "", p)
	}
	c := &ir.Call{Recv: ir.None}
	switch callee.Type {
	case "super":
		c.Kind, c.Name = ir.CallSuper, "<init>"
	case "import":
		c.Kind, c.Name = ir.CallFunc, "import"
	case "call_expression", "member_expression":
		if imp, ok := l.requireRef(callee); ok && fc.resolve("require").kind == refGlobal {
			c.Kind = ir.CallFunc // require('m')(...), require('m').f(...)
			if imp.module {
				c.Qual, c.Name = imp.qual, "default"
			} else {
				c.Qual, c.Name = imp.owner, imp.member
			}
			break
		}
		if callee.Type == "call_expression" {
			c.Kind, c.Recv = ir.CallDynamic, fc.expr(callee)
			break
		}
		fc.memberCall(c, callee)
	case "identifier":
		fc.callName(c, l.text(callee))
	case "subscript_expression":
		if s, ok := l.stringValue(callee.Child("index")); ok {
			fc.methodCall(c, callee.Child("object"), s)
			break
		}
		c.Kind, c.Recv = ir.CallDynamic, fc.expr(callee)
	default:
		c.Kind, c.Recv = ir.CallDynamic, fc.expr(callee)
	}
	if argsNode != nil && argsNode.Type == "template_string" {
		c.Args = fc.templateArgs(argsNode)
	} else {
		c.Args = fc.args(argsNode)
	}
	return fc.b.Call(c, "", p)
}

// memberCall fills c for a callee obj.name.
func (fc *fnCtx) memberCall(c *ir.Call, callee *syntax.Node) {
	prop := callee.Child("property")
	obj := callee.Child("object")
	if prop == nil || obj == nil {
		c.Kind, c.Recv = ir.CallDynamic, fc.expr(callee)
		return
	}
	fc.methodCall(c, obj, fc.l.text(prop))
}

// methodCall fills c for obj.name(...): a static call on a global, an
// imported module or member, or a class of the file; a super call; or a
// method call on the value of obj.
func (fc *fnCtx) methodCall(c *ir.Call, obj *syntax.Node, name string) {
	if u := unwrap(obj); u != nil && u.Type == "super" {
		c.Kind, c.Name = ir.CallSuper, name
		return
	}
	st := fc.staticOf(obj)
	switch st.kind {
	case stGlobalObj:
		c.Kind, c.Name = ir.CallFunc, name
		return
	case stGlobal:
		if st.depth == 1 {
			c.Kind, c.Qual, c.Name = ir.CallStatic, st.qual, name
			return
		}
	case stModule, stClass:
		c.Kind, c.Qual, c.Name = ir.CallStatic, st.qual, name
		return
	case stMember:
		// package members are namespaces to models (fs.promises.readFile);
		// a repository module's member is an object unless named like a class
		if !st.rel || isClassName(st.qual) {
			c.Kind, c.Qual, c.Name = ir.CallStatic, st.qual, name
			return
		}
	}
	c.Kind, c.Name = ir.CallMethod, name
	c.Recv = fc.expr(obj)
}

// isClassName reports whether the last component of a qualified name is
// capitalised, the convention for classes.
func isClassName(q string) bool {
	if i := strings.LastIndexByte(q, '.'); i >= 0 {
		q = q[i+1:]
	}
	for _, r := range q {
		return unicode.IsUpper(r)
	}
	return false
}

// args lowers call arguments; a spread argument passes some element of the
// spread value.
func (fc *fnCtx) args(n *syntax.Node) []ir.Value {
	if n == nil {
		return nil
	}
	out, _ := fc.elements(n)
	return out
}

// elements lowers the named children of an argument list or array literal
// in order; a spread element yields some element of the spread value and
// is marked in spread.
func (fc *fnCtx) elements(n *syntax.Node) (vals []ir.Value, spread []bool) {
	for _, c := range n.Children {
		if !c.Named || isComment(c) {
			continue
		}
		if c.Type == "spread_element" {
			vals = append(vals, fc.b.LoadIndex(fc.expr(firstNamed(c)), ir.None, "", pos(c)))
		} else {
			vals = append(vals, fc.expr(c))
		}
		spread = append(spread, c.Type == "spread_element")
	}
	return vals, spread
}

// callName makes c a call of the function the identifier name refers to:
// a local closure, an imported function or a global.
func (fc *fnCtx) callName(c *ir.Call, name string) {
	r := fc.resolve(name)
	switch r.kind {
	case refLocal:
		c.Kind, c.Recv = ir.CallDynamic, ir.V(r.v)
	case refImport:
		c.Kind = ir.CallFunc
		if r.imp.module {
			c.Qual, c.Name = r.imp.qual, "default"
		} else {
			c.Qual, c.Name = r.imp.owner, r.imp.member
		}
	default:
		c.Kind, c.Name = ir.CallFunc, name
	}
}

// templateArgs lowers the template of a tagged template call: the array of
// literal parts, then each substituted value.
func (fc *fnCtx) templateArgs(n *syntax.Node) []ir.Value {
	var parts []ir.Value
	var subs []ir.Value
	var lit strings.Builder
	for _, c := range n.Children {
		if t, ok := fc.templateText(c); ok {
			lit.WriteString(t)
			continue
		}
		if c.Type == "template_substitution" {
			parts = append(parts, ir.C(ir.Str(lit.String())))
			lit.Reset()
			subs = append(subs, fc.expr(firstNamed(c)))
		}
	}
	parts = append(parts, ir.C(ir.Str(lit.String())))
	strs := fc.b.MakeList("Array", parts, pos(n))
	return append([]ir.Value{strs}, subs...)
}

// newExpr lowers `new C(args)`: Qual is the qualified constructor (a class
// of the file, an import, a global).
func (fc *fnCtx) newExpr(n *syntax.Node) ir.Value {
	p := pos(n)
	ctor := unwrap(n.Child("constructor"))
	qual := ""
	var dyn ir.Value
	if st := fc.staticOf(ctor); st.kind != stNone && st.kind != stGlobalObj {
		qual = st.qual
	} else if ctor != nil {
		dyn = fc.expr(ctor)
	}
	c := &ir.Call{Kind: ir.CallNew, Name: "<init>", Qual: qual, Recv: ir.None, Args: fc.args(n.Child("arguments"))}
	if qual == "" && dyn.IsVar() {
		// a constructor held in a variable: call it as a function value
		c.Kind, c.Recv, c.Name = ir.CallDynamic, dyn, ""
	}
	return fc.b.Call(c, qual, p)
}
