package python

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// str lowers a string literal: a constant, or for an f-string the
// concatenation of its constant parts and formatted values.
func (l *lowerer) str(s *scope, n *syntax.Node) ir.Value {
	return l.joinParts(s, l.stringParts(s, n, nil), pos(n))
}

// concatenated lowers implicitly concatenated literals ('a' f'{b}').
func (l *lowerer) concatenated(s *scope, n *syntax.Node) ir.Value {
	var parts []ir.Value
	for _, c := range n.Children {
		if c.Type == "string" {
			parts = l.stringParts(s, c, parts)
		}
	}
	return l.joinParts(s, parts, pos(n))
}

// stringParts appends the constant runs and formatted values of a string.
func (l *lowerer) stringParts(s *scope, n *syntax.Node, parts []ir.Value) []ir.Value {
	raw, fstr := false, false
	if st := n.FirstOfType("string_start"); st != nil {
		for _, c := range l.text(st) {
			switch c {
			case 'r', 'R':
				raw = true
			case 'f', 'F':
				fstr = true
			}
		}
	}
	var sb strings.Builder
	flush := func() {
		if sb.Len() > 0 {
			parts = append(parts, ir.C(ir.Str(sb.String())))
			sb.Reset()
		}
	}
	for _, c := range n.Children {
		switch c.Type {
		case "string_content":
			t := l.text(c)
			if !raw && strings.IndexByte(t, '\\') >= 0 {
				t = decodeEscapes(t)
			}
			if fstr {
				t = strings.ReplaceAll(strings.ReplaceAll(t, "{{", "{"), "}}", "}")
			}
			sb.WriteString(t)
		case "interpolation":
			flush()
			parts = append(parts, l.interpolation(s, c))
		}
	}
	flush()
	if len(parts) == 0 {
		parts = append(parts, ir.C(ir.Str("")))
	}
	return parts
}

// interpolation lowers {expr!conv:spec}: a conversion is a call of repr,
// str or ascii, a format specification a call of format.
func (l *lowerer) interpolation(s *scope, n *syntax.Node) ir.Value {
	b := s.b
	v := l.expr(s, n.Child("expression"))
	if conv := n.Child("type_conversion"); conv != nil {
		name := "str"
		switch strings.TrimPrefix(l.text(conv), "!") {
		case "r":
			name = "repr"
		case "a":
			name = "ascii"
		}
		v = b.Call(&ir.Call{Kind: ir.CallFunc, Recv: ir.None, Name: name, Args: []ir.Value{v}}, "str", pos(conv))
	}
	if spec := n.Child("format_specifier"); spec != nil {
		specV := ir.C(ir.Str(strings.TrimPrefix(l.text(spec), ":")))
		if spec.FirstOfType("format_expression") != nil {
			var args []ir.Value
			for _, fe := range named(spec) {
				if fe.Type == "format_expression" {
					args = append(args, l.expr(s, fe.Child("expression")))
				}
			}
			specV = b.Opaque(args, pos(spec))
		}
		v = b.Call(&ir.Call{Kind: ir.CallFunc, Recv: ir.None, Name: "format", Args: []ir.Value{v, specV}}, "str", pos(spec))
	}
	return v
}

// joinParts concatenates string parts left to right, folding adjacent
// constants.
func (l *lowerer) joinParts(s *scope, parts []ir.Value, p ir.Pos) ir.Value {
	merged := parts[:0:0]
	for _, v := range parts {
		if n := len(merged); n > 0 && v.IsConst() && merged[n-1].IsConst() && merged[n-1].Const.IsStr() && v.Const.IsStr() {
			merged[n-1] = ir.C(ir.Str(merged[n-1].Const.Str + v.Const.Str))
			continue
		}
		merged = append(merged, v)
	}
	if len(merged) == 1 && merged[0].IsConst() {
		return merged[0]
	}
	acc := merged[0]
	rest := merged[1:]
	if len(rest) == 0 {
		acc, rest = ir.C(ir.Str("")), merged
	}
	for _, v := range rest {
		acc = s.b.Binary("+", acc, v, p)
		s.b.SetType(acc.Var, "str")
	}
	return acc
}

// decodeEscapes interprets the backslash escapes of a Python string body.
func decodeEscapes(t string) string {
	var sb strings.Builder
	sb.Grow(len(t))
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c != '\\' || i+1 >= len(t) {
			sb.WriteByte(c)
			continue
		}
		i++
		if c, ok := lower.ControlEscape(t[i]); ok {
			sb.WriteByte(c)
			continue
		}
		switch e := t[i]; e {
		case '\\', '\'', '"':
			sb.WriteByte(e)
		case 'a':
			sb.WriteByte('\a')
		case 'b':
			sb.WriteByte('\b')
		case '\n':
		case 'x', 'u', 'U':
			width := 2
			switch e {
			case 'u':
				width = 4
			case 'U':
				width = 8
			}
			if end := i + 1 + width; end <= len(t) {
				if r, err := strconv.ParseUint(t[i+1:end], 16, 32); err == nil {
					if e == 'x' {
						sb.WriteByte(byte(r))
					} else if utf8.ValidRune(rune(r)) {
						sb.WriteRune(rune(r))
					}
					i = end - 1
					continue
				}
			}
			sb.WriteByte('\\')
			sb.WriteByte(e)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(t) && j < i+3 && t[j] >= '0' && t[j] <= '7' {
				j++
			}
			r, _ := strconv.ParseUint(t[i:j], 8, 32)
			sb.WriteByte(byte(r))
			i = j - 1
		default:
			sb.WriteByte('\\')
			sb.WriteByte(e)
		}
	}
	return sb.String()
}
