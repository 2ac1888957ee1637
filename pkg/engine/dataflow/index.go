package dataflow

import (
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
)

// program indexes the repository's classes and functions for call
// resolution, and the models of each language.
type program struct {
	files     []*ir.File
	classes   map[string]*ir.Class   // by QName
	funcs     map[string][]*ir.Func  // by QName
	subs      map[string][]*ir.Class // direct subclasses by superclass QName
	byName    map[string][]*ir.Func  // methods and functions by simple name (unknown receivers)
	langs     map[string]*langModels // by model language
	superMemo map[string][]string
	props     map[string]string
	packages  map[string]bool   // every file's package or module
	canonMemo map[string]string // qualified names as imported -> as declared
}

// modelLang maps a file language to the language of its models and rules.
func modelLang(lang string) string {
	if lang == "typescript" {
		return "javascript"
	}
	return lang
}

func newProgram(files []*ir.File, cfg *Config) *program {
	p := &program{files: files, classes: map[string]*ir.Class{}, funcs: map[string][]*ir.Func{}, subs: map[string][]*ir.Class{},
		byName: map[string][]*ir.Func{}, langs: map[string]*langModels{}, superMemo: map[string][]string{}, props: cfg.Properties,
		packages: map[string]bool{}, canonMemo: map[string]string{}}
	for _, f := range files {
		if f.Package != "" {
			p.packages[f.Package] = true
		}
		for _, c := range f.Classes {
			if first, dup := p.classes[c.QName]; dup {
				// one type declared across files (Go methods, Ruby reopened
				// classes, partial classes): one class with every member
				if first != c {
					first.Methods = append(first.Methods, c.Methods...)
					first.Fields = append(first.Fields, c.Fields...)
					first.Super = append(first.Super, c.Super...)
				}
				continue
			}
			p.classes[c.QName] = c
		}
		for _, fn := range f.Funcs {
			p.funcs[fn.QName] = append(p.funcs[fn.QName], fn)
			if fn.Parent == nil {
				p.byName[fn.Name] = append(p.byName[fn.Name], fn)
			}
		}
		if f.Init != nil {
			p.funcs[f.Init.QName] = append(p.funcs[f.Init.QName], f.Init)
		}
	}
	for _, c := range p.classes {
		for _, s := range c.Super {
			p.subs[s] = append(p.subs[s], c)
		}
	}
	for lang, set := range cfg.Models {
		p.langs[lang] = buildLangModels(set, cfg.Rules[lang])
	}
	return p
}

func (p *program) models(f *ir.File) *langModels {
	if lm := p.langs[modelLang(f.Lang)]; lm != nil {
		return lm
	}
	return emptyModels
}

// canon maps a qualified name as code imports it to the name the
// repository declares it under, when they differ by a leading path: a Go
// import path "github.com/org/app/internal/db.Store" for the package
// "internal/db", or a Python module "app.views" that lives in "src.app.views".
func (p *program) canon(q string) string {
	if p.classes[q] != nil || len(p.funcs[q]) > 0 || p.packages[q] {
		return q
	}
	if c, ok := p.canonMemo[q]; ok {
		return c
	}
	out := q
	pkg, name := q, ""
	if i := strings.LastIndexByte(q, '.'); i > 0 && !p.packages[q] {
		pkg, name = q[:i], q[i:]
	}
	best := ""
	for cand := range p.packages {
		// a one-component import ("json") is never taken for a repository
		// module that merely ends with the same name ("app.json")
		multi := strings.ContainsAny(pkg, "./")
		if cand == pkg || strings.HasSuffix(pkg, "/"+cand) || strings.HasSuffix(pkg, "."+cand) ||
			multi && (strings.HasSuffix(cand, "."+pkg) || strings.HasSuffix(cand, "/"+pkg)) {
			if len(cand) > len(best) {
				best = cand
			}
		}
	}
	if best != "" {
		out = best + name
	}
	p.canonMemo[q] = out
	return out
}

// class finds a repository class by qualified name.
func (p *program) class(q string) *ir.Class {
	if c := p.classes[q]; c != nil || q == "" {
		return c
	}
	return p.classes[p.canon(q)]
}

// funcsOf finds repository functions by qualified name.
func (p *program) funcsOf(q string) []*ir.Func {
	if fs := p.funcs[q]; len(fs) > 0 || q == "" {
		return fs
	}
	return p.funcs[p.canon(q)]
}

// supers returns t followed by all its supertypes, from repository classes
// and from the language's model type table.
func (p *program) supers(lm *langModels, t string) []string {
	if t == "" {
		return nil
	}
	key := lm.lang + "\x00" + t
	if s, ok := p.superMemo[key]; ok {
		return s
	}
	p.superMemo[key] = []string{t} // cycle guard
	out := []string{t}
	seen := map[string]bool{t: true}
	queue := []string{t}
	for len(queue) > 0 && len(out) < 64 {
		cur := queue[0]
		queue = queue[1:]
		var next []string
		if c := p.classes[cur]; c != nil {
			next = append(next, c.Super...)
		}
		next = append(next, lm.types[cur]...)
		for _, n := range next {
			if n = lm.alias(n); !seen[n] {
				seen[n] = true
				out = append(out, n)
				queue = append(queue, n)
			}
		}
	}
	p.superMemo[key] = out
	return out
}

// method finds a method by name in class t or its superclasses.
func (p *program) method(t, name string, nargs int) *ir.Func { return p.methodIn(t, name, nargs, 0) }

func (p *program) methodIn(t, name string, nargs, depth int) *ir.Func {
	c := p.class(t)
	if c == nil || depth > 16 {
		return nil
	}
	if m := pickMethod(c.Methods, name, nargs); m != nil {
		return m
	}
	for _, s := range c.Super {
		if m := p.methodIn(s, name, nargs, depth+1); m != nil {
			return m
		}
	}
	return nil
}

func pickMethod(ms []*ir.Func, name string, nargs int) *ir.Func {
	var any *ir.Func
	for _, m := range ms {
		if m.Name != name {
			continue
		}
		if len(m.Params) == nargs {
			return m
		}
		if any == nil || (nargs > len(any.Params) && len(m.Params) > len(any.Params)) {
			any = m
		}
	}
	return any
}

// overriders returns the methods that override name in subclasses of t.
func (p *program) overriders(t, name string, nargs int, out []*ir.Func, seen map[string]bool) []*ir.Func {
	for _, sub := range p.subs[t] {
		if seen[sub.QName] {
			continue
		}
		seen[sub.QName] = true
		if m := pickMethod(sub.Methods, name, nargs); m != nil && !m.Abstract {
			out = append(out, m)
		}
		if len(out) < 16 {
			out = p.overriders(sub.QName, name, nargs, out, seen)
		}
	}
	return out
}

// constructorNames are the names front ends give constructors.
var constructorNames = []string{"<init>", "__init__", "initialize", "__construct", "constructor"}

// constructor finds the constructor of class t (or of its superclasses).
func (p *program) constructor(t string, nargs int) []*ir.Func {
	for _, n := range constructorNames {
		if m := p.method(t, n, nargs); m != nil {
			return []*ir.Func{m}
		}
	}
	return nil
}

// resolve returns the repository functions a call may reach.
func (p *program) resolve(fn *ir.Func, c *ir.Call, recv Val) []*ir.Func {
	nargs := len(c.Args)
	switch c.Kind {
	case ir.CallNew:
		if cl := p.class(c.Qual); cl != nil {
			return p.constructor(cl.QName, nargs)
		}
		return nil
	case ir.CallStatic:
		if p.class(c.Qual) != nil {
			if m := p.method(c.Qual, c.Name, nargs); m != nil {
				return []*ir.Func{m}
			}
		}
		return p.funcsOf(c.Qual + "." + c.Name)
	case ir.CallFunc:
		if c.Qual != "" {
			if fs := p.funcsOf(c.Qual + "." + c.Name); len(fs) > 0 {
				return fs
			}
			if p.class(c.Qual) != nil {
				if m := p.method(c.Qual, c.Name, nargs); m != nil {
					return []*ir.Func{m}
				}
			}
			if cl := p.class(c.Qual + "." + c.Name); cl != nil { // imported class called like a function
				return p.constructor(cl.QName, nargs)
			}
			return nil
		}
		// lexical scope: the classes enclosing the function and the
		// functions around it, then the file and its package
		for f := fn; f != nil; f = f.Parent {
			for cl := f.Class; cl != nil; cl = cl.Outer {
				if m := p.method(cl.QName, c.Name, nargs); m != nil {
					return []*ir.Func{m}
				}
			}
		}
		if f := fn.File; f != nil {
			if fs := p.funcsOf(qualify(f.Package, c.Name)); len(fs) > 0 {
				return fs
			}
			for _, g := range f.Funcs {
				if g.Name == c.Name && g.Class == nil && g.Parent == nil {
					return []*ir.Func{g}
				}
			}
			if f.Lang == "php" && f.Package != "" {
				// PHP falls back from the current namespace to the global one
				return p.funcsOf(c.Name)
			}
		}
		return nil
	case ir.CallSuper:
		if fn.Class != nil {
			for _, s := range fn.Class.Super {
				if c.Name == "<init>" {
					if ms := p.constructor(s, nargs); ms != nil {
						return ms
					}
				} else if m := p.method(s, c.Name, nargs); m != nil {
					return []*ir.Func{m}
				}
			}
		}
		return nil
	case ir.CallDynamic:
		return recv.Fns
	case ir.CallMethod:
		if recv.Type != "" && p.packages[p.canon(recv.Type)] {
			// a module used as a value: `from pkg import mod; mod.f(x)`
			if fs := p.funcsOf(recv.Type + "." + c.Name); len(fs) > 0 {
				return fs
			}
		}
		if len(recv.Fns) > 0 && (c.Name == "call" || c.Name == "apply" || c.Name == "invoke" || c.Name == "run" || c.Name == "accept" || c.Name == "get") {
			// calling a closure value through its functional interface
			return recv.Fns
		}
		t := recv.Type
		if t == "" || p.class(t) == nil {
			// a constant or untyped receiver: a method only one class of the
			// repository declares is the likely target
			if t != "" {
				if _, lib := p.langs[modelLang(fn.File.Lang)]; lib && p.class(t) == nil && !strings.Contains(t, "$") {
					// a library type: its methods are models, not repository code
					if len(p.byName[c.Name]) == 0 || strings.Contains(t, ".") || strings.Contains(t, "/") || strings.Contains(t, "\\") {
						return nil
					}
				}
			}
			var cands []*ir.Func
			for _, m := range p.byName[c.Name] {
				if m.Class != nil && !m.Abstract && (len(m.Params) == nargs || (len(m.Params) > nargs && hasDefaults(m, nargs))) {
					cands = append(cands, m)
				}
			}
			if len(cands) == 1 {
				return cands
			}
			return nil
		}
		var out []*ir.Func
		if m := p.method(t, c.Name, nargs); m != nil && !m.Abstract {
			out = append(out, m)
		}
		out = p.overriders(t, c.Name, nargs, out, map[string]bool{})
		return out
	}
	return nil
}

func hasDefaults(m *ir.Func, nargs int) bool {
	for _, p := range m.Params[nargs:] {
		if !p.Default && !p.Rest {
			return false
		}
	}
	return true
}

func qualify(pkg, name string) string {
	if pkg == "" {
		return name
	}
	return pkg + "." + name
}
