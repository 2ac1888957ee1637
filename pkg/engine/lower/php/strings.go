package php

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// strPart is one piece of an interpolated string: literal text or a node to
// evaluate.
type strPart struct {
	lit  string
	node *syntax.Node
}

// stringParts splits a string-like node (quoted string, heredoc, nowdoc,
// backticks) into literal text and interpolated expressions.
func (l *lowerer) stringParts(n *syntax.Node) []strPart {
	switch n.Type {
	case "string":
		return []strPart{{lit: singleQuoted(n.Text(l.src))}}
	case "heredoc", "nowdoc":
		body := n.Child("value")
		if body == nil {
			return nil
		}
		return l.heredocParts(body, n.Child("end_tag"), n.Type == "nowdoc")
	}
	var parts []strPart
	for _, c := range n.Children {
		switch c.Type {
		case "string_content", "encapsed_string_chars", "execution_string_chars":
			parts = append(parts, strPart{lit: c.Text(l.src)})
		case "escape_sequence":
			parts = append(parts, strPart{lit: unescape(c.Text(l.src))})
		default:
			if c.Named && c.Type != "comment" {
				parts = append(parts, strPart{node: c})
			}
		}
	}
	return parts
}

// heredocParts reconstructs a heredoc or nowdoc body. The grammar leaves
// out line breaks between the body's pieces and keeps the closing marker's
// indentation, which PHP removes from every line.
func (l *lowerer) heredocParts(body, end *syntax.Node, nowdoc bool) []strPart {
	indent := ""
	if end != nil {
		i := int(end.Start)
		for i > 0 && (l.src[i-1] == ' ' || l.src[i-1] == '\t') {
			i--
		}
		indent = string(l.src[i:end.Start])
	}
	var parts []strPart
	add := func(s string) {
		if len(parts) > 0 && parts[len(parts)-1].node == nil {
			parts[len(parts)-1].lit += s
			return
		}
		parts = append(parts, strPart{lit: s})
	}
	prev := body.Start
	for _, c := range body.Children {
		if c.Start > prev {
			add(strings.Repeat("\n", strings.Count(string(l.src[prev:c.Start]), "\n")))
		}
		prev = c.End
		switch c.Type {
		case "string_content", "nowdoc_string", "encapsed_string_chars_heredoc":
			add(c.Text(l.src))
		case "escape_sequence":
			if nowdoc {
				add(c.Text(l.src))
			} else {
				add(unescape(c.Text(l.src)))
			}
		default:
			if c.Named && c.Type != "comment" {
				parts = append(parts, strPart{node: c})
			}
		}
	}
	if indent != "" {
		for i := range parts {
			if parts[i].node != nil {
				continue
			}
			s := strings.ReplaceAll(parts[i].lit, "\n"+indent, "\n")
			if i == 0 {
				s = strings.TrimPrefix(s, indent)
			}
			parts[i].lit = s
		}
	}
	if len(parts) > 0 && parts[0].node == nil {
		parts[0].lit = strings.TrimPrefix(parts[0].lit, "\n")
	}
	if k := len(parts) - 1; k >= 0 && parts[k].node == nil {
		parts[k].lit = strings.TrimSuffix(parts[k].lit, "\n")
	}
	return parts
}

// literalString returns the value of a string node without interpolation.
func (l *lowerer) literalString(n *syntax.Node) (string, bool) {
	var b strings.Builder
	for _, p := range l.stringParts(n) {
		if p.node != nil {
			return "", false
		}
		b.WriteString(p.lit)
	}
	return b.String(), true
}

// stringExpr lowers a string: a constant, or the concatenation of its
// pieces with the "." operator.
func (f *fnLowerer) stringExpr(n *syntax.Node) ir.Value {
	pos := posOf(n)
	var acc ir.Value
	have := false
	lit, pending := "", false
	flush := func() {
		if !pending {
			return
		}
		c := ir.C(ir.Str(lit))
		if have {
			acc = f.b.Binary(".", acc, c, pos)
		} else {
			acc, have = c, true
		}
		lit, pending = "", false
	}
	for _, p := range f.l.stringParts(n) {
		if p.node == nil {
			lit += p.lit
			pending = true
			continue
		}
		flush()
		v := f.expr(p.node)
		if have {
			acc = f.b.Binary(".", acc, v, pos)
		} else {
			acc, have = v, true
		}
	}
	flush()
	if !have {
		return ir.C(ir.Str(""))
	}
	return acc
}

// singleQuoted decodes a single-quoted PHP string literal (with its quotes
// and an optional b prefix): only \' and \\ are escapes.
func singleQuoted(t string) string {
	t = strings.TrimLeft(t, "bB")
	if len(t) >= 2 && t[0] == '\'' && t[len(t)-1] == '\'' {
		t = t[1 : len(t)-1]
	}
	if !strings.Contains(t, "\\") {
		return t
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] == '\\' && i+1 < len(t) && (t[i+1] == '\'' || t[i+1] == '\\') {
			i++
		}
		b.WriteByte(t[i])
	}
	return b.String()
}

// unescape decodes one escape sequence of a double-quoted string or
// heredoc; an unknown sequence stays as written, as in PHP.
func unescape(e string) string {
	if len(e) < 2 || e[0] != '\\' {
		return e
	}
	if c, ok := lower.ControlEscape(e[1]); ok {
		return string(c)
	}
	switch e[1] {
	case 'e':
		return "\x1b"
	case '\\', '$', '"', '`':
		return e[1:2]
	case 'x':
		if v, err := strconv.ParseUint(e[2:], 16, 8); err == nil && len(e) > 2 {
			return string([]byte{byte(v)})
		}
	case 'u':
		h := strings.TrimSuffix(strings.TrimPrefix(e[2:], "{"), "}")
		if v, err := strconv.ParseUint(h, 16, 32); err == nil && utf8.ValidRune(rune(v)) {
			return string(rune(v))
		}
	case '0', '1', '2', '3', '4', '5', '6', '7':
		if v, err := strconv.ParseUint(e[1:], 8, 16); err == nil {
			return string([]byte{byte(v)})
		}
	}
	return e
}
