package ir

import (
	"fmt"
	"sort"
	"strings"
)

// Dump renders a file as readable IR text, for golden tests and debugging.
func Dump(f *File) string {
	var b strings.Builder
	fmt.Fprintf(&b, "file %s (%s) package %q\n", f.Path, f.Lang, f.Package)
	imps := append([]Import(nil), f.Imports...)
	sort.Slice(imps, func(i, j int) bool { return imps[i].Alias < imps[j].Alias })
	for _, im := range imps {
		fmt.Fprintf(&b, "import %s = %s\n", im.Alias, im.Path)
	}
	for _, c := range f.Classes {
		kind := "class"
		if c.Interface {
			kind = "interface"
		}
		fmt.Fprintf(&b, "%s %s", kind, c.QName)
		if len(c.Super) > 0 {
			fmt.Fprintf(&b, " : %s", strings.Join(c.Super, ", "))
		}
		b.WriteString("\n")
		for _, fl := range c.Fields {
			st := ""
			if fl.Static {
				st = "static "
			}
			fmt.Fprintf(&b, "  field %s%s %s\n", st, fl.Name, fl.Type)
		}
	}
	for _, fn := range f.Funcs {
		DumpFunc(&b, fn)
	}
	if f.Init != nil {
		DumpFunc(&b, f.Init)
	}
	return b.String()
}

// DumpFunc writes one function.
func DumpFunc(b *strings.Builder, fn *Func) {
	var ps []string
	for _, p := range fn.Params {
		s := fn.Vars[p.Var].Name
		if t := fn.Vars[p.Var].Type; t != "" {
			s += " " + t
		}
		for _, a := range p.Annotations {
			s = "@" + a.Name + " " + s
		}
		ps = append(ps, s)
	}
	mods := ""
	if fn.Static {
		mods += "static "
	}
	if fn.Abstract {
		mods += "abstract "
	}
	fmt.Fprintf(b, "func %s%s(%s)", mods, fn.QName, strings.Join(ps, ", "))
	if fn.Result != "" {
		fmt.Fprintf(b, " %s", fn.Result)
	}
	if fn.This != NoVar {
		fmt.Fprintf(b, " this=%s", fn.Vars[fn.This].Name)
	}
	if fn.Parent != nil {
		fmt.Fprintf(b, " in %s", fn.Parent.QName)
	}
	for _, a := range fn.Annotations {
		fmt.Fprintf(b, " @%s", a.Name)
		if len(a.Args) > 0 {
			keys := make([]string, 0, len(a.Args))
			for k := range a.Args {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var kv []string
			for _, k := range keys {
				kv = append(kv, fmt.Sprintf("%s=%q", k, a.Args[k]))
			}
			fmt.Fprintf(b, "(%s)", strings.Join(kv, ","))
		}
	}
	b.WriteString("\n")
	for _, blk := range fn.Blocks {
		fmt.Fprintf(b, "  b%d:", blk.ID)
		if len(blk.Handlers) > 0 {
			fmt.Fprintf(b, " handlers %v", blk.Handlers)
		}
		b.WriteString("\n")
		for _, in := range blk.Instrs {
			fmt.Fprintf(b, "    %s\n", InstrString(fn, &in))
		}
		v := fn.ValueString
		switch blk.Term {
		case TermJump:
			fmt.Fprintf(b, "    jump b%d\n", blk.Succs[0])
		case TermIf:
			fmt.Fprintf(b, "    if %s b%d b%d\n", v(blk.Cond), blk.Succs[0], blk.Succs[1])
		case TermReturn:
			fmt.Fprintf(b, "    return %s", v(blk.Val))
			for _, m := range blk.More {
				fmt.Fprintf(b, ", %s", v(m))
			}
			b.WriteString("\n")
		case TermThrow:
			fmt.Fprintf(b, "    throw %s %v\n", v(blk.Val), blk.Succs)
		case TermEnd:
			b.WriteString("    end\n")
		}
	}
}

// InstrString renders one instruction.
func InstrString(fn *Func, in *Instr) string {
	v := fn.ValueString
	dst := ""
	if in.Dst != NoVar {
		dst = v(V(in.Dst))
		if t := fn.Vars[in.Dst].Type; t != "" {
			dst += ":" + t
		}
		dst += " = "
	}
	args := func(vs []Value) string {
		var s []string
		for _, x := range vs {
			s = append(s, v(x))
		}
		return strings.Join(s, ", ")
	}
	switch in.Op {
	case OpAssign:
		if in.Name != "" {
			return dst + in.Name + " " + v(in.Args[0])
		}
		return dst + v(in.Args[0])
	case OpUnary:
		return dst + in.Name + " " + v(in.Args[0])
	case OpBinary:
		return fmt.Sprintf("%s%s %s %s", dst, v(in.Args[0]), in.Name, v(in.Args[1]))
	case OpCall:
		c := in.Call
		var as []string
		for i, a := range c.Args {
			s := v(a)
			if i < len(c.Names) && c.Names[i] != "" {
				s = c.Names[i] + "=" + s
			}
			as = append(as, s)
		}
		kind := map[CallKind]string{CallFunc: "func", CallMethod: "method", CallStatic: "static", CallNew: "new", CallDynamic: "dynamic", CallSuper: "super"}[c.Kind]
		target := c.Name
		if c.Qual != "" {
			target = c.Qual + "#" + c.Name
		}
		if !c.Recv.IsNone() {
			target = v(c.Recv) + "." + target
		}
		return fmt.Sprintf("%scall.%s %s(%s)", dst, kind, target, strings.Join(as, ", "))
	case OpLoadField:
		return dst + v(in.Args[0]) + "." + in.Name
	case OpStoreField:
		return v(in.Args[0]) + "." + in.Name + " = " + v(in.Args[1])
	case OpLoadIndex:
		return dst + v(in.Args[0]) + "[" + v(in.Args[1]) + "]"
	case OpStoreIndex:
		return v(in.Args[0]) + "[" + v(in.Args[1]) + "] = " + v(in.Args[2])
	case OpLoadGlobal:
		return dst + "global " + in.Name
	case OpStoreGlobal:
		return "global " + in.Name + " = " + v(in.Args[0])
	case OpMakeList:
		return dst + "list " + in.Name + " [" + args(in.Args) + "]"
	case OpMakeMap:
		return dst + "map " + in.Name + " {" + args(in.Args) + "}"
	case OpFunc:
		return dst + "func " + in.Fn.QName
	case OpCast:
		return dst + "(" + in.Name + ") " + v(in.Args[0])
	case OpCatch:
		return dst + "catch " + in.Name
	case OpOpaque:
		return dst + "opaque(" + args(in.Args) + ")"
	}
	return dst + in.Op.String()
}

// Validate checks that a function is well formed: block ids and successors
// in range, every block terminated, operands referring to existing
// variables, calls carrying a Call. Front-end tests and fuzz targets use it.
func Validate(fn *Func) error {
	if len(fn.Blocks) == 0 {
		return fmt.Errorf("%s: no blocks", fn.QName)
	}
	nv := VarID(len(fn.Vars))
	okVal := func(v Value) bool { return v.Const != nil || v.Var == NoVar || (v.Var >= 0 && v.Var < nv) }
	for i, blk := range fn.Blocks {
		if blk.ID != i {
			return fmt.Errorf("%s: block %d has id %d", fn.QName, i, blk.ID)
		}
		if blk.Term == 0 {
			return fmt.Errorf("%s: block %d not terminated", fn.QName, i)
		}
		want := map[TermKind]int{TermJump: 1, TermIf: 2}
		if n, ok := want[blk.Term]; ok && len(blk.Succs) != n {
			return fmt.Errorf("%s: block %d has %d successors", fn.QName, i, len(blk.Succs))
		}
		for _, s := range append(append([]int(nil), blk.Succs...), blk.Handlers...) {
			if s < 0 || s >= len(fn.Blocks) {
				return fmt.Errorf("%s: block %d jumps to missing block %d", fn.QName, i, s)
			}
		}
		if !okVal(blk.Cond) || !okVal(blk.Val) {
			return fmt.Errorf("%s: block %d terminator uses a missing variable", fn.QName, i)
		}
		for _, m := range blk.More {
			if !okVal(m) {
				return fmt.Errorf("%s: block %d terminator uses a missing variable", fn.QName, i)
			}
		}
		for j, in := range blk.Instrs {
			if in.Op == 0 {
				return fmt.Errorf("%s: b%d[%d] has no opcode", fn.QName, i, j)
			}
			if in.Dst < NoVar || in.Dst >= nv {
				return fmt.Errorf("%s: b%d[%d] defines missing variable %d", fn.QName, i, j, in.Dst)
			}
			for _, a := range in.Args {
				if !okVal(a) {
					return fmt.Errorf("%s: b%d[%d] uses a missing variable", fn.QName, i, j)
				}
			}
			switch in.Op {
			case OpCall:
				if in.Call == nil {
					return fmt.Errorf("%s: b%d[%d] call without target", fn.QName, i, j)
				}
				for _, a := range in.Call.Args {
					if !okVal(a) {
						return fmt.Errorf("%s: b%d[%d] call uses a missing variable", fn.QName, i, j)
					}
				}
				if !okVal(in.Call.Recv) {
					return fmt.Errorf("%s: b%d[%d] call receiver is a missing variable", fn.QName, i, j)
				}
			case OpFunc:
				if in.Fn == nil {
					return fmt.Errorf("%s: b%d[%d] closure without function", fn.QName, i, j)
				}
			case OpAssign, OpUnary, OpCast, OpStoreGlobal:
				if len(in.Args) != 1 {
					return fmt.Errorf("%s: b%d[%d] %s needs 1 operand", fn.QName, i, j, in.Op)
				}
			case OpBinary, OpStoreField, OpLoadIndex:
				if len(in.Args) != 2 {
					return fmt.Errorf("%s: b%d[%d] %s needs 2 operands", fn.QName, i, j, in.Op)
				}
			case OpStoreIndex:
				if len(in.Args) != 3 {
					return fmt.Errorf("%s: b%d[%d] %s needs 3 operands", fn.QName, i, j, in.Op)
				}
			case OpLoadField:
				if len(in.Args) != 1 {
					return fmt.Errorf("%s: b%d[%d] %s needs 1 operand", fn.QName, i, j, in.Op)
				}
			}
		}
	}
	return nil
}

// ValidateFile validates every function of f.
func ValidateFile(f *File) error {
	for _, fn := range f.Funcs {
		if err := Validate(fn); err != nil {
			return err
		}
	}
	if f.Init != nil {
		return Validate(f.Init)
	}
	return nil
}
