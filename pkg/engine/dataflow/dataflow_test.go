package dataflow

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/model"
)

// testModels is a small Java-like library: a request with a tainting getter,
// a statement sink, an HTML encoder, lists, maps, a configurable digest, and
// cookies with a secure flag.
func testConfig(t *testing.T) Config {
	set := &model.Set{
		Language: "java",
		Types: map[string][]string{"lib.HttpRequest": {"lib.Request"}, "java.util.ArrayList": {"java.util.List"}, "java.util.HashMap": {"java.util.Map"},
			"java.security.SecureRandom": {"java.util.Random"}},
		Returns: map[string]string{"lib.Request#getParameter": "java.lang.String", "java.security.SecureRandom#getInstance": "java.security.SecureRandom"},
		Sources: []model.Source{{Kind: "remote", Targets: []string{"lib.Request#getParameter"}}, {Kind: "weakrand", Targets: []string{"java.util.Random#nextInt"}, Classes: []string{"weakrand"}}},
		Sanitizers: []model.Sanitizer{{Targets: []string{"lib.Encoder#html"}, Classes: []string{"xss"}},
			{Targets: []string{"java.lang.Integer#parseInt"}}},
		Propagators: []model.Propagator{{Targets: []string{"java.lang.StringBuilder#append"}, From: []string{"args"}, To: []string{"recv", "ret"}},
			{Targets: []string{"java.security.SecureRandom#nextInt"}, Clean: true},
			{Targets: []string{"java.lang.String#length"}, Clean: true}},
		Containers: []model.Container{
			{Targets: []string{"java.util.ArrayList#<init>", "java.util.HashMap#<init>"}, Op: "new"},
			{Targets: []string{"java.util.List#add"}, Op: "append"},
			{Targets: []string{"java.util.List#get"}, Op: "get_index"},
			{Targets: []string{"java.util.List#remove"}, Op: "remove_index"},
			{Targets: []string{"java.util.Map#put"}, Op: "put"},
			{Targets: []string{"java.util.Map#get"}, Op: "get_key"},
		},
		Setters:     []model.Setter{{Targets: []string{"lib.Cookie#setSecure"}, Field: "secure", Arg: 0}},
		Evaluators:  []model.Evaluator{{Targets: []string{"java.util.Properties#getProperty"}, Fn: "property"}, {Targets: []string{"java.lang.String#charAt"}, Fn: "char_at"}, {Targets: []string{"java.lang.String#equals"}, Fn: "equals"}},
		EntryPoints: []model.EntryPoint{{Name: "Web", Annotations: []string{"GetMapping"}, Params: []string{"all"}}},
	}
	rules := []*model.FlowRule{
		{ID: "sqli", Class: "sqli", Sinks: []model.Sink{{Targets: []string{"lib.Statement#execute"}, Args: []int{0}}}},
		{ID: "xss", Class: "xss", Sinks: []model.Sink{{Targets: []string{"lib.Writer#print"}}}},
		{ID: "rand", Class: "weakrand", Sinks: []model.Sink{{Targets: []string{"lib.Cookie#<init>"}}}},
		{ID: "hash", Const: &model.ConstCall{Targets: []string{"lib.Digest#getInstance"}, Arg: 0, Matches: `(?i)^(md5|sha-?1)$`}},
		{ID: "cookie", Class: "cookie", Sinks: []model.Sink{{Targets: []string{"lib.Response#addCookie"}, Args: []int{0}, UnlessField: &model.FieldCond{Name: "secure", Equals: "true"}}}},
	}
	for _, r := range rules {
		require.NoError(t, r.Compile())
	}
	return Config{Models: map[string]*model.Set{"java": set}, Rules: map[string][]*model.FlowRule{"java": rules},
		Properties: map[string]string{"alg1": "MD5", "alg2": "SHA-256"}}
}

// fb is a small helper over ir.Builder for writing test programs.
type fb struct {
	*ir.Builder
	line int32
}

func (b *fb) pos() ir.Pos {
	b.line++
	return ir.Pos{Line: b.line, EndLine: b.line, Start: uint32(b.line), End: uint32(b.line)}
}

func (b *fb) method(recv ir.Value, name string, args ...ir.Value) ir.Value {
	return b.Call(&ir.Call{Kind: ir.CallMethod, Name: name, Recv: recv, Args: args}, "", b.pos())
}

func (b *fb) static(qual, name string, args ...ir.Value) ir.Value {
	return b.Call(&ir.Call{Kind: ir.CallStatic, Qual: qual, Name: name, Args: args}, "", b.pos())
}

func (b *fb) newObj(typ string, args ...ir.Value) ir.Value {
	return b.Call(&ir.Call{Kind: ir.CallNew, Qual: typ, Name: "<init>", Args: args}, typ, b.pos())
}

func (b *fb) local(name, typ string, v ir.Value) ir.Value {
	id := b.Var(name, typ)
	b.Assign(id, v, b.pos())
	return ir.V(id)
}

// handler starts a method m(HttpRequest req, Statement st, Writer w) of class C.
func handler(f *ir.File, cl *ir.Class, name string) (*fb, ir.Value, ir.Value, ir.Value) {
	b := &fb{Builder: ir.NewBuilder(f, name, cl.QName+"."+name)}
	b.Fn.Class = cl
	req := b.Param("req", "lib.HttpRequest", nil)
	st := b.Param("st", "lib.Statement", nil)
	w := b.Param("w", "lib.Writer", nil)
	return b, ir.V(req), ir.V(st), ir.V(w)
}

func file(name string) (*ir.File, *ir.Class) {
	f := &ir.File{Path: name + ".java", Lang: "java", Package: "app"}
	cl := &ir.Class{Name: name, QName: "app." + name, File: f}
	f.Classes = append(f.Classes, cl)
	return f, cl
}

func add(f *ir.File, cl *ir.Class, b *fb) *ir.Func {
	fn := b.Finish(ir.Pos{})
	f.Funcs = append(f.Funcs, fn)
	if cl != nil {
		cl.Methods = append(cl.Methods, fn)
	}
	return fn
}

func run(t *testing.T, files ...*ir.File) map[string][]int32 {
	t.Helper()
	for _, f := range files {
		require.NoError(t, ir.ValidateFile(f))
	}
	res, err := Analyze(context.Background(), files, testConfig(t))
	require.NoError(t, err)
	out := map[string][]int32{}
	for _, f := range res.Findings {
		out[f.Rule.ID] = append(out[f.Rule.ID], f.Pos.Line)
	}
	return out
}

func param(b *fb, req ir.Value) ir.Value {
	return b.local("p", "java.lang.String", b.method(req, "getParameter", ir.C(ir.Str("id"))))
}

func TestDirectFlowAndSanitizer(t *testing.T) {
	f, cl := file("A")
	b, req, st, w := handler(f, cl, "m")
	p := param(b, req)
	q := b.Binary("+", ir.C(ir.Str("select ")), p, b.pos())
	b.method(st, "execute", q) // line 4: sqli
	enc := b.static("lib.Encoder", "html", p)
	b.method(w, "print", enc) // safe for xss
	b.method(st, "execute", enc)
	n := b.static("java.lang.Integer", "parseInt", p)
	b.method(st, "execute", n) // safe
	add(f, cl, b)
	got := run(t, f)
	require.Len(t, got["sqli"], 2)
	require.Empty(t, got["xss"])
}

func TestBranchJoinAndDeadBranch(t *testing.T) {
	f, cl := file("B")
	b, req, st, _ := handler(f, cl, "join")
	p := param(b, req)
	x := b.Var("x", "java.lang.String")
	b.Assign(x, ir.C(ir.Str("safe")), b.pos())
	cond := b.Binary("!=", p, ir.C(ir.Null()), b.pos())
	then, join := b.NewBlock(), b.NewBlock()
	b.If(cond, then, join, b.pos())
	b.SetBlock(then)
	b.Assign(x, p, b.pos())
	b.Jump(join, b.pos())
	b.SetBlock(join)
	b.method(st, "execute", ir.V(x)) // tainted on one path
	add(f, cl, b)

	b, req, st, _ = handler(f, cl, "dead")
	p = param(b, req)
	y := b.Var("y", "java.lang.String")
	num := b.local("num", "int", ir.C(ir.Int(86)))
	k := b.Binary("*", ir.C(ir.Int(7)), ir.C(ir.Int(42)), b.pos())
	d := b.Binary("-", k, num, b.pos())
	c := b.Binary(">", d, ir.C(ir.Int(200)), b.pos())
	t1, e1, j1 := b.NewBlock(), b.NewBlock(), b.NewBlock()
	b.If(c, t1, e1, b.pos())
	b.SetBlock(t1)
	b.Assign(y, ir.C(ir.Str("constant")), b.pos())
	b.Jump(j1, b.pos())
	b.SetBlock(e1)
	b.Assign(y, p, b.pos())
	b.Jump(j1, b.pos())
	b.SetBlock(j1)
	b.method(st, "execute", ir.V(y)) // the else branch is dead
	add(f, cl, b)

	b, req, st, _ = handler(f, cl, "switchConst")
	p = param(b, req)
	g := b.local("guess", "java.lang.String", ir.C(ir.Str("ABC")))
	ch := b.method(g, "charAt", ir.C(ir.Int(1)))
	z := b.Var("z", "java.lang.String")
	b.Assign(z, ir.C(ir.Str("none")), b.pos())
	isA := b.Binary("==", ch, ir.C(ir.Str("A")), b.pos())
	caseA, next, end := b.NewBlock(), b.NewBlock(), b.NewBlock()
	b.If(isA, caseA, next, b.pos())
	b.SetBlock(caseA)
	b.Assign(z, p, b.pos())
	b.Jump(end, b.pos())
	b.SetBlock(next)
	b.Assign(z, ir.C(ir.Str("bob")), b.pos())
	b.Jump(end, b.pos())
	b.SetBlock(end)
	b.method(st, "execute", ir.V(z))
	add(f, cl, b)

	got := run(t, f)
	require.Len(t, got["sqli"], 1, "only the join case: %v", got)
}

func TestMapKeysAndListIndexes(t *testing.T) {
	f, cl := file("C")
	b, req, st, _ := handler(f, cl, "maps")
	p := param(b, req)
	m := b.local("m", "java.util.HashMap", b.newObj("java.util.HashMap"))
	b.method(m, "put", ir.C(ir.Str("a")), ir.C(ir.Str("safe")))
	b.method(m, "put", ir.C(ir.Str("b")), p)
	b.method(st, "execute", b.method(m, "get", ir.C(ir.Str("a")))) // safe
	b.method(st, "execute", b.method(m, "get", ir.C(ir.Str("b")))) // line 8: tainted
	add(f, cl, b)

	b, req, st, _ = handler(f, cl, "lists")
	p = param(b, req)
	l := b.local("l", "java.util.ArrayList", b.newObj("java.util.ArrayList"))
	b.method(l, "add", ir.C(ir.Str("safe")))
	b.method(l, "add", p)
	b.method(l, "add", ir.C(ir.Str("moresafe")))
	b.method(l, "remove", ir.C(ir.Int(0)))
	b.method(st, "execute", b.method(l, "get", ir.C(ir.Int(1)))) // safe
	b.method(st, "execute", b.method(l, "get", ir.C(ir.Int(0)))) // tainted
	add(f, cl, b)
	got := run(t, f)
	require.Len(t, got["sqli"], 2, "%v", got)
}

func TestHelpersAcrossFiles(t *testing.T) {
	hf, hcl := file("Helper")
	hb := &fb{Builder: ir.NewBuilder(hf, "id", "app.Helper.id")}
	hb.Fn.Class, hb.Fn.Static = hcl, true
	x := hb.Param("x", "java.lang.String", nil)
	hb.Return(ir.V(x), hb.pos())
	add(hf, hcl, hb)
	// a helper whose parameter reaches a sink
	hb = &fb{Builder: ir.NewBuilder(hf, "run", "app.Helper.run")}
	hb.Fn.Class, hb.Fn.Static = hcl, true
	st := hb.Param("st", "lib.Statement", nil)
	q := hb.Param("q", "java.lang.String", nil)
	hb.method(ir.V(st), "execute", ir.V(q))
	add(hf, hcl, hb)

	f, cl := file("D")
	b, req, stv, _ := handler(f, cl, "m")
	p := param(b, req)
	b.method(stv, "execute", b.static("app.Helper", "id", p))                     // tainted
	b.method(stv, "execute", b.static("app.Helper", "id", ir.C(ir.Str("const")))) // constant at this site
	b.static("app.Helper", "run", stv, p)                                         // the sink inside the helper
	add(f, cl, b)
	res, err := Analyze(context.Background(), []*ir.File{hf, f}, testConfig(t))
	require.NoError(t, err)
	var lines []string
	for _, fd := range res.Findings {
		lines = append(lines, fd.File.Path)
		require.NotEmpty(t, fd.Steps)
	}
	require.ElementsMatch(t, []string{"D.java", "Helper.java"}, lines)
}

func TestVirtualCallsFieldsAndClosures(t *testing.T) {
	f := &ir.File{Path: "E.java", Lang: "java", Package: "app"}
	iface := &ir.Class{Name: "Thing", QName: "app.Thing", Interface: true, File: f}
	impl := &ir.Class{Name: "Impl", QName: "app.Impl", Super: []string{"app.Thing"}, File: f}
	holder := &ir.Class{Name: "Holder", QName: "app.Holder", File: f, Fields: []ir.Field{{Name: "v", Type: "java.lang.String"}}}
	cl := &ir.Class{Name: "E", QName: "app.E", File: f}
	f.Classes = []*ir.Class{iface, impl, holder, cl}
	ab := &fb{Builder: ir.NewBuilder(f, "run", "app.Thing.run")}
	ab.Fn.Class, ab.Fn.Abstract = iface, true
	ab.Param("s", "java.lang.String", nil)
	add(f, iface, ab)
	ib := &fb{Builder: ir.NewBuilder(f, "run", "app.Impl.run")}
	ib.Fn.Class = impl
	ib.This("this", "app.Impl")
	s := ib.Param("s", "java.lang.String", nil)
	ib.Return(ib.Binary("+", ir.V(s), ir.C(ir.Str("!")), ib.pos()), ib.pos())
	add(f, impl, ib)
	// Holder(String v) { this.v = v; }  String get() { return this.v; }
	cb := &fb{Builder: ir.NewBuilder(f, "<init>", "app.Holder.<init>")}
	cb.Fn.Class = holder
	th := cb.This("this", "app.Holder")
	v := cb.Param("v", "java.lang.String", nil)
	cb.StoreField(ir.V(th), "v", ir.V(v), cb.pos())
	add(f, holder, cb)
	gb := &fb{Builder: ir.NewBuilder(f, "get", "app.Holder.get")}
	gb.Fn.Class = holder
	th = gb.This("this", "app.Holder")
	gb.Return(gb.LoadField(ir.V(th), "v", "java.lang.String", gb.pos()), gb.pos())
	add(f, holder, gb)

	b, req, st, _ := handler(f, cl, "m")
	p := param(b, req)
	thing := b.local("t", "app.Thing", b.newObj("app.Impl"))
	b.method(st, "execute", b.method(thing, "run", p)) // through the interface
	h := b.local("h", "app.Holder", b.newObj("app.Holder", p))
	b.method(st, "execute", b.method(h, "get")) // through a field
	// a lambda capturing p, called later
	lb := &fb{Builder: ir.NewBuilder(f, "<lambda>", "app.E.m$lambda1")}
	lb.Fn.Class = cl
	stc := lb.Captured("st", "lib.Statement")
	pc := lb.Captured("p", "java.lang.String")
	lb.method(ir.V(stc), "execute", ir.V(pc))
	lam := add(f, nil, lb)
	lam.Parent = b.Fn
	b.Closure(lam, b.pos())
	add(f, cl, b)
	got := run(t, f)
	require.Len(t, got["sqli"], 3, "%v", got)
}

func TestConstantAndPropertyRules(t *testing.T) {
	f, cl := file("F")
	b, _, _, _ := handler(f, cl, "m")
	b.static("lib.Digest", "getInstance", ir.C(ir.Str("SHA1")), ir.C(ir.Str("SUN"))) // weak
	props := b.local("props", "java.util.Properties", b.newObj("java.util.Properties"))
	alg := b.method(props, "getProperty", ir.C(ir.Str("alg1")), ir.C(ir.Str("SHA512")))
	b.static("lib.Digest", "getInstance", alg) // weak, from configuration
	alg2 := b.method(props, "getProperty", ir.C(ir.Str("alg2")), ir.C(ir.Str("MD5")))
	b.static("lib.Digest", "getInstance", alg2) // strong
	resp := b.local("resp", "lib.Response", ir.C(ir.Null()))
	c1 := b.local("c1", "lib.Cookie", b.newObj("lib.Cookie", ir.C(ir.Str("a")), ir.C(ir.Str("b"))))
	b.method(c1, "setSecure", ir.C(ir.Bool(true)))
	b.method(resp, "addCookie", c1) // secure
	c2 := b.local("c2", "lib.Cookie", b.newObj("lib.Cookie", ir.C(ir.Str("a")), ir.C(ir.Str("b"))))
	b.method(c2, "setSecure", ir.C(ir.Bool(false)))
	b.method(resp, "addCookie", c2) // insecure
	r := b.method(b.newObj("java.util.Random"), "nextInt")
	b.newObj("lib.Cookie", ir.C(ir.Str("remember")), b.Binary("+", ir.C(ir.Str("")), r, b.pos())) // weak random in a cookie
	add(f, cl, b)
	got := run(t, f)
	require.Len(t, got["hash"], 2, "%v", got)
	require.Len(t, got["cookie"], 1, "%v", got)
	require.Len(t, got["rand"], 1, "%v", got)
}

func TestEntryPointsRecursionAndExceptions(t *testing.T) {
	f, cl := file("G")
	// @GetMapping String show(String name, Statement st) { st.execute(name) }
	b := &fb{Builder: ir.NewBuilder(f, "show", "app.G.show")}
	b.Fn.Class = cl
	b.Fn.Annotations = []ir.Annotation{{Name: "org.springframework.web.bind.annotation.GetMapping"}}
	name := b.Param("name", "java.lang.String", nil)
	st := b.Param("st", "lib.Statement", nil)
	b.method(ir.V(st), "execute", ir.V(name))
	add(f, cl, b)
	// String rec(String s, int n) { if (n > 0) return rec(s, n-1); return s; }
	rb := &fb{Builder: ir.NewBuilder(f, "rec", "app.G.rec")}
	rb.Fn.Class, rb.Fn.Static = cl, true
	s := rb.Param("s", "java.lang.String", nil)
	n := rb.Param("n", "int", nil)
	c := rb.Binary(">", ir.V(n), ir.C(ir.Int(0)), rb.pos())
	t1, e1 := rb.NewBlock(), rb.NewBlock()
	rb.If(c, t1, e1, rb.pos())
	rb.SetBlock(t1)
	m1 := rb.Binary("-", ir.V(n), ir.C(ir.Int(1)), rb.pos())
	rb.Return(rb.Call(&ir.Call{Kind: ir.CallFunc, Name: "rec", Args: []ir.Value{ir.V(s), m1}}, "", rb.pos()), rb.pos())
	rb.SetBlock(e1)
	rb.Return(ir.V(s), rb.pos())
	add(f, cl, rb)
	// try { x = "safe"; throwing call; } catch { x = p }  sink(x)
	hb, req, stv, _ := handler(f, cl, "m")
	p := param(hb, req)
	hb.method(stv, "execute", hb.Call(&ir.Call{Kind: ir.CallFunc, Name: "rec", Args: []ir.Value{p, ir.C(ir.Int(3))}}, "", hb.pos()))
	x := hb.Var("x", "java.lang.String")
	catch, after := hb.NewBlock(), hb.NewBlock()
	hb.PushHandlers([]int{catch}, hb.pos())
	hb.Assign(x, ir.C(ir.Str("safe")), hb.pos())
	hb.static("lib.Io", "read")
	hb.PopHandlers(hb.pos())
	hb.Jump(after, hb.pos())
	hb.SetBlock(catch)
	e := hb.Var("e", "java.lang.Exception")
	hb.Catch(e, "java.lang.Exception", hb.pos())
	hb.Assign(x, p, hb.pos())
	hb.Jump(after, hb.pos())
	hb.SetBlock(after)
	hb.method(stv, "execute", ir.V(x))
	add(f, cl, hb)
	got := run(t, f)
	require.Len(t, got["sqli"], 3, "%v", got)
}

func TestOverridingModelsAndCallerTypes(t *testing.T) {
	f, cl := file("H")
	// int draw(java.util.Random g) { return g.nextInt(); }
	hb := &fb{Builder: ir.NewBuilder(f, "draw", "app.H.draw")}
	hb.Fn.Class, hb.Fn.Static = cl, true
	g := hb.Param("g", "java.util.Random", nil)
	hb.Return(hb.method(ir.V(g), "nextInt"), hb.pos())
	add(f, cl, hb)
	b, _, _, _ := handler(f, cl, "strong")
	sr := b.local("sr", "java.util.Random", b.static("java.security.SecureRandom", "getInstance", ir.C(ir.Str("SHA1PRNG"))))
	b.newObj("lib.Cookie", ir.C(ir.Str("k")), b.method(sr, "nextInt")) // a SecureRandom declared as Random
	v := b.Call(&ir.Call{Kind: ir.CallFunc, Name: "draw", Args: []ir.Value{sr}}, "int", b.pos())
	b.newObj("lib.Cookie", ir.C(ir.Str("k")), v) // through a helper typed with the supertype
	add(f, cl, b)
	require.Empty(t, run(t, f)["rand"])

	f2, cl2 := file("I")
	b, _, _, _ = handler(f2, cl2, "weak")
	r := b.local("r", "java.util.Random", b.newObj("java.util.Random"))
	b.newObj("lib.Cookie", ir.C(ir.Str("k")), b.method(r, "nextInt"))
	add(f2, cl2, b)
	require.Len(t, run(t, f2)["rand"], 1)
}

func TestFieldsOfOneObjectStayApart(t *testing.T) {
	f := &ir.File{Path: "J.java", Lang: "java", Package: "app"}
	doc := &ir.Class{Name: "Doc", QName: "app.Doc", File: f, Fields: []ir.Field{{Name: "label"}, {Name: "path"}}}
	cl := &ir.Class{Name: "J", QName: "app.J", File: f}
	f.Classes = []*ir.Class{doc, cl}
	// Doc(String label) { this.label = label; this.path = "/srv/x.pdf"; }
	cb := &fb{Builder: ir.NewBuilder(f, "<init>", "app.Doc.<init>")}
	cb.Fn.Class = doc
	th := cb.This("this", "app.Doc")
	lv := cb.Param("label", "java.lang.String", nil)
	cb.StoreField(ir.V(th), "label", ir.V(lv), cb.pos())
	cb.StoreField(ir.V(th), "path", ir.C(ir.Str("/srv/x.pdf")), cb.pos())
	add(f, doc, cb)
	// void send(Statement st) { st.execute(this.path); }  void show(Statement st) { st.execute(this.label); }
	for _, fld := range []string{"path", "label"} {
		sb := &fb{Builder: ir.NewBuilder(f, "send_"+fld, "app.Doc.send_"+fld), line: int32(100 * len(fld))}
		sb.Fn.Class = doc
		th := sb.This("this", "app.Doc")
		st := sb.Param("st", "lib.Statement", nil)
		sb.method(ir.V(st), "execute", sb.LoadField(ir.V(th), fld, "", sb.pos()))
		add(f, doc, sb)
	}
	b, req, st, _ := handler(f, cl, "m")
	p := param(b, req)
	d := b.local("d", "app.Doc", b.newObj("app.Doc", p))
	b.method(d, "send_path", st)
	b.method(d, "send_label", st)
	add(f, cl, b)
	res, err := Analyze(context.Background(), []*ir.File{f}, testConfig(t))
	require.NoError(t, err)
	require.Len(t, res.Findings, 1)
	require.Equal(t, "send_label", res.Findings[0].Func.Name)
}

func TestRecursionKeepsSanitizers(t *testing.T) {
	f, cl := file("K")
	// String join(String s, int n) { if (n > 0) return Encoder.html(s) + join(s, n-1); return ""; }
	rb := &fb{Builder: ir.NewBuilder(f, "join", "app.K.join")}
	rb.Fn.Class, rb.Fn.Static = cl, true
	s := rb.Param("s", "java.lang.String", nil)
	n := rb.Param("n", "int", nil)
	c := rb.Binary(">", ir.V(n), ir.C(ir.Int(0)), rb.pos())
	t1, e1 := rb.NewBlock(), rb.NewBlock()
	rb.If(c, t1, e1, rb.pos())
	rb.SetBlock(t1)
	enc := rb.static("lib.Encoder", "html", ir.V(s))
	rec := rb.Call(&ir.Call{Kind: ir.CallFunc, Name: "join", Args: []ir.Value{ir.V(s), rb.Binary("-", ir.V(n), ir.C(ir.Int(1)), rb.pos())}}, "", rb.pos())
	rb.Return(rb.Binary("+", enc, rec, rb.pos()), rb.pos())
	rb.SetBlock(e1)
	rb.Return(ir.C(ir.Str("")), rb.pos())
	add(f, cl, rb)
	b, req, _, w := handler(f, cl, "m")
	p := param(b, req)
	b.method(w, "print", b.Call(&ir.Call{Kind: ir.CallFunc, Name: "join", Args: []ir.Value{p, ir.C(ir.Int(3))}}, "", b.pos()))
	add(f, cl, b)
	require.Empty(t, run(t, f)["xss"])
}

func TestGuardsAndEqualityRefine(t *testing.T) {
	f, cl := file("L")
	b, req, st, _ := handler(f, cl, "m")
	p := param(b, req)
	// if (p.equals("asc")) st.execute(p);   — p is the constant there
	eq := b.method(p, "equals", ir.C(ir.Str("asc")))
	t1, j1 := b.NewBlock(), b.NewBlock()
	b.If(eq, t1, j1, b.pos())
	b.SetBlock(t1)
	b.method(st, "execute", p)
	b.Jump(j1, b.pos())
	b.SetBlock(j1)
	// if (!allowed.contains(p)) return; st.execute(p);
	allowed := b.local("allowed", "java.util.ArrayList", b.MakeList("java.util.List", []ir.Value{ir.C(ir.Str("a")), ir.C(ir.Str("b"))}, b.pos()))
	in := b.method(allowed, "contains", p)
	not := b.Unary("!", in, b.pos())
	ret, ok := b.NewBlock(), b.NewBlock()
	b.If(not, ret, ok, b.pos())
	b.SetBlock(ret)
	b.Return(ir.None, b.pos())
	b.SetBlock(ok)
	b.method(st, "execute", p)
	add(f, cl, b)
	require.Empty(t, run(t, f)["sqli"])
}

func TestImportPathsAndTypesAcrossFiles(t *testing.T) {
	// package internal/db, split over two files: Store.exec in one, run in the other
	f1 := &ir.File{Path: "internal/db/store.go", Lang: "java", Package: "internal/db"}
	s1 := &ir.Class{Name: "Store", QName: "internal/db.Store", File: f1}
	f1.Classes = []*ir.Class{s1}
	eb := &fb{Builder: ir.NewBuilder(f1, "exec", "internal/db.Store.exec"), line: 100}
	eb.Fn.Class = s1
	eb.This("s", "internal/db.Store")
	st := eb.Param("st", "lib.Statement", nil)
	q := eb.Param("q", "java.lang.String", nil)
	eb.method(ir.V(st), "execute", ir.V(q))
	add(f1, s1, eb)
	f2 := &ir.File{Path: "internal/db/run.go", Lang: "java", Package: "internal/db"}
	s2 := &ir.Class{Name: "Store", QName: "internal/db.Store", File: f2}
	f2.Classes = []*ir.Class{s2}
	rb := &fb{Builder: ir.NewBuilder(f2, "Run", "internal/db.Run"), line: 200}
	rst := rb.Param("st", "lib.Statement", nil)
	rq := rb.Param("q", "java.lang.String", nil)
	rb.method(ir.V(rst), "execute", ir.V(rq))
	add(f2, nil, rb)

	f3, cl := file("Main")
	b, req, stv, _ := handler(f3, cl, "m")
	p := param(b, req)
	b.static("github.com/org/app/internal/db", "Run", stv, p) // a function of the package by import path
	store := b.local("store", "github.com/org/app/internal/db.Store", ir.C(ir.Null()))
	b.method(store, "exec", stv, p) // a method declared in the other file of the type
	add(f3, cl, b)
	res, err := Analyze(context.Background(), []*ir.File{f1, f2, f3}, testConfig(t))
	require.NoError(t, err)
	var where []string
	for _, f := range res.Findings {
		where = append(where, f.File.Path)
	}
	require.ElementsMatch(t, []string{"internal/db/store.go", "internal/db/run.go"}, where)
}

func TestClosuresPassedToCalls(t *testing.T) {
	f, cl := file("M")
	// void run(String v, Function cb) { cb.call(v); }
	rb := &fb{Builder: ir.NewBuilder(f, "run", "app.M.run"), line: 300}
	rb.Fn.Class, rb.Fn.Static = cl, true
	v := rb.Param("v", "java.lang.String", nil)
	cb := rb.Param("cb", "", nil)
	rb.method(ir.V(cb), "call", ir.V(v))
	add(f, cl, rb)
	b, req, _, _ := handler(f, cl, "m")
	p := param(b, req)
	// a callback whose parameter reaches a sink, handed to a repository function…
	lb := &fb{Builder: ir.NewBuilder(f, "<lambda>", "app.M.m$1"), line: 400}
	stc := lb.Captured("st", "lib.Statement")
	x := lb.Param("x", "java.lang.String", nil)
	lb.method(ir.V(stc), "execute", ir.V(x))
	lam := add(f, nil, lb)
	lam.Parent = b.Fn
	fv := b.Closure(lam, b.pos())
	b.static("app.M", "run", p, fv)
	// …and one handed to a library iteration over tainted elements
	lb2 := &fb{Builder: ir.NewBuilder(f, "<lambda>", "app.M.m$2"), line: 500}
	stc2 := lb2.Captured("st", "lib.Statement")
	y := lb2.Param("y", "java.lang.String", nil)
	lb2.method(ir.V(stc2), "execute", ir.V(y))
	lam2 := add(f, nil, lb2)
	lam2.Parent = b.Fn
	items := b.local("items", "java.util.ArrayList", b.newObj("java.util.ArrayList"))
	b.method(items, "add", p)
	b.method(items, "forEach", b.Closure(lam2, b.pos()))
	add(f, cl, b)
	got := run(t, f)
	require.Len(t, got["sqli"], 2, "%v", got)
}

func TestBudgetsDegradeWithoutFailing(t *testing.T) {
	f, cl := file("N")
	b, req, st, _ := handler(f, cl, "m")
	p := param(b, req)
	for range 50 {
		b.method(st, "execute", p)
	}
	add(f, cl, b)
	cfg := testConfig(t)
	cfg.Budget.StepsPerFunc = 10
	res, err := Analyze(context.Background(), []*ir.File{f}, cfg)
	require.NoError(t, err)
	require.Positive(t, res.Stats.OverBudget, "the function over budget is counted")

	cfg = testConfig(t)
	cfg.Budget.Timeout = time.Nanosecond
	res, err = Analyze(context.Background(), []*ir.File{f}, cfg)
	require.NoError(t, err, "a spent repository budget ends the analysis, not the scan")
	require.Positive(t, res.Stats.NotAnalyzed)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Analyze(ctx, []*ir.File{f}, testConfig(t))
	require.ErrorIs(t, err, context.Canceled, "a cancelled scan is not a budget")
}

func TestPropertiesDropConflictingKeys(t *testing.T) {
	p := NewProperties()
	p.Add([]byte("# comment\nhashAlg=MD5\ncipher: \"AES/GCM/NoPadding\"\nshared=1\n"))
	p.Add([]byte("[section]\nshared = 2\nexport TOKEN_ALG=SHA-256\n"))
	require.Equal(t, map[string]string{"hashAlg": "MD5", "cipher": "AES/GCM/NoPadding", "TOKEN_ALG": "SHA-256"}, p.Map())
	require.True(t, IsConfigFile("src/main/resources/app.properties"))
	require.True(t, IsConfigFile(".env.local"))
	require.False(t, IsConfigFile("app.py"))
}
