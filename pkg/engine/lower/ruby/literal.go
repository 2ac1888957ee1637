package ruby

import (
	"strconv"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// literal converts a scalar literal node to a constant.
func (fs *fnState) literal(n *syntax.Node) *ir.Const {
	t := fs.l.text(n)
	switch n.Type {
	case "integer":
		s := strings.ReplaceAll(t, "_", "")
		base := 10
		switch {
		case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
			s, base = s[2:], 16
		case strings.HasPrefix(s, "0b") || strings.HasPrefix(s, "0B"):
			s, base = s[2:], 2
		case strings.HasPrefix(s, "0o") || strings.HasPrefix(s, "0O"):
			s, base = s[2:], 8
		case strings.HasPrefix(s, "0d") || strings.HasPrefix(s, "0D"):
			s = s[2:]
		case len(s) > 1 && s[0] == '0':
			s, base = s[1:], 8
		}
		if i, err := strconv.ParseInt(s, base, 64); err == nil {
			return ir.Int(i)
		}
		return ir.Str(t)
	case "float":
		if f, err := strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64); err == nil {
			return ir.Float(f)
		}
		return ir.Str(t)
	case "nil":
		return ir.Null()
	case "true":
		return ir.Bool(true)
	case "false":
		return ir.Bool(false)
	case "simple_symbol":
		return ir.Str(strings.TrimPrefix(t, ":"))
	case "hash_key_symbol":
		return ir.Str(t)
	case "character":
		return ir.Str(strings.TrimPrefix(t, "?"))
	case "file":
		return ir.Str(fs.l.path)
	case "line":
		return ir.Int(int64(n.Row + 1))
	}
	return ir.Str(t)
}

// stringParts returns the content nodes of a string-like literal (for a
// heredoc, of its body).
func (fs *fnState) stringParts(n *syntax.Node) []*syntax.Node {
	if n.Type == "heredoc_beginning" {
		body := fs.l.heredocs[n]
		if body == nil {
			return nil
		}
		var out []*syntax.Node
		for _, c := range body.Children {
			if c.Type != "heredoc_end" {
				out = append(out, c)
			}
		}
		return out
	}
	if n.Type == "chained_string" {
		var out []*syntax.Node
		for _, c := range n.NamedChildren() {
			out = append(out, fs.stringParts(c)...)
		}
		return out
	}
	return n.Children
}

// heredocIndent returns the indentation a squiggly heredoc (<<~) removes
// from its lines, or "" for other literals.
func (fs *fnState) heredocIndent(n *syntax.Node) string {
	if n.Type != "heredoc_beginning" || !strings.HasPrefix(fs.l.text(n), "<<~") {
		return ""
	}
	body := fs.l.heredocs[n]
	if body == nil {
		return ""
	}
	indent := -1
	lines := strings.Split(fs.l.text(body), "\n")
	for _, line := range lines[:max(len(lines)-1, 0)] {
		if strings.TrimSpace(line) == "" {
			continue
		}
		k := len(line) - len(strings.TrimLeft(line, " \t"))
		if indent < 0 || k < indent {
			indent = k
		}
	}
	if indent <= 0 {
		return ""
	}
	return strings.Repeat(" ", indent)
}

// content returns the text of a literal's content part: for heredocs
// without the newline that ends the opening line and the indentation of the
// end marker, and for squiggly ones without the common indentation.
func (fs *fnState) content(c *syntax.Node, first, last bool, indent string) string {
	t := fs.l.text(c)
	if c.Type != "heredoc_content" {
		return t
	}
	if last {
		// the indentation of an indented end marker (<<~, <<-)
		if i := strings.LastIndexByte(t, '\n'); i >= 0 && strings.TrimLeft(t[i+1:], " \t") == "" {
			t = t[:i+1]
		}
	}
	if first {
		t = strings.TrimPrefix(t, "\n")
		if indent != "" {
			t = strings.TrimPrefix(t, indent)
		}
	}
	if indent != "" {
		t = strings.ReplaceAll(t, "\n"+indent, "\n")
	}
	return t
}

// constString returns the value of a string literal without interpolation.
func (fs *fnState) constString(n *syntax.Node) (string, bool) {
	var sb strings.Builder
	constant := fs.eachStringPart(n, func(text string) { sb.WriteString(text) }, func(*syntax.Node) bool { return false })
	if !constant {
		return "", false
	}
	return sb.String(), true
}

// eachStringPart walks the parts of a string literal in order: text gets
// the literal text (escapes decoded, heredoc indentation removed), interp
// each interpolation, and the walk stops with false when interp returns
// false.
func (fs *fnState) eachStringPart(n *syntax.Node, text func(string), interp func(*syntax.Node) bool) bool {
	indent := fs.heredocIndent(n)
	parts := fs.stringParts(n)
	open, close, single := fs.singleQuoted(n)
	for i, c := range parts {
		switch c.Type {
		case "string_content", "heredoc_content":
			t := fs.content(c, i == 0, i == len(parts)-1, indent)
			if single {
				t = unescapeSingle(t, open, close)
			}
			text(t)
		case "escape_sequence":
			text(unescape(fs.l.text(c)))
		case "interpolation":
			if !interp(c) {
				return false
			}
		}
	}
	return true
}

// singleQuoted reports a single-quoted literal ('...' or %q(...)) and its
// delimiters: its only escapes are \\ and the escaped delimiters.
func (fs *fnState) singleQuoted(n *syntax.Node) (open, close byte, ok bool) {
	if n.Type != "string" {
		return 0, 0, false
	}
	t := fs.l.text(n)
	switch {
	case strings.HasPrefix(t, "'"):
		return '\'', '\'', true
	case strings.HasPrefix(t, "%q") && len(t) > 2:
		open = t[2]
		close = open
		switch open {
		case '(':
			close = ')'
		case '[':
			close = ']'
		case '{':
			close = '}'
		case '<':
			close = '>'
		}
		return open, close, true
	}
	return 0, 0, false
}

// unescapeSingle decodes the escapes of a single-quoted literal's text: a
// backslash before another backslash or a delimiter is dropped, any other
// backslash is kept.
func unescapeSingle(s string, open, close byte) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == open || s[i+1] == close) {
			i++
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// stringValue lowers a string-like literal: a constant, or a "+" chain of
// its parts when it interpolates.
func (fs *fnState) stringValue(n *syntax.Node) ir.Value {
	if n.Type == "simple_symbol" || n.Type == "hash_key_symbol" {
		return ir.C(fs.literal(n))
	}
	if n.Type == "heredoc_beginning" && fs.l.heredocs[n] == nil {
		return ir.C(ir.Str(""))
	}
	str := lower.NewInterpolation(fs.b)
	fs.eachStringPart(n, str.Text, func(c *syntax.Node) bool {
		str.Value(pos(c), func() ir.Value {
			if len(c.NamedChildren()) > 0 {
				return fs.body(c.Children, true)
			}
			return ir.C(ir.Str(""))
		})
		return true
	})
	return str.Done(pos(n))
}

// unescape decodes one escape sequence of a double-quoted string.
func unescape(s string) string {
	if len(s) < 2 || s[0] != '\\' {
		return s
	}
	if c, ok := lower.ControlEscape(s[1]); ok {
		return string(c)
	}
	switch s[1] {
	case '0', '1', '2', '3', '4', '5', '6', '7':
		// up to three octal digits
		v, i := 0, 1
		for ; i < len(s) && i < 4 && s[i] >= '0' && s[i] <= '7'; i++ {
			v = v*8 + int(s[i]-'0')
		}
		return string([]byte{byte(v)}) + s[i:]
	case 'x':
		// one or two hex digits
		v, i := 0, 2
		for ; i < len(s) && i < 4 && isHex(s[i]); i++ {
			v = v*16 + hexVal(s[i])
		}
		if i > 2 {
			return string([]byte{byte(v)}) + s[i:]
		}
	case 's':
		return " "
	case 'e':
		return "\x1b"
	case 'u':
		if u, err := strconv.Unquote(`"` + s + `"`); err == nil {
			return u
		}
	}
	return s[1:]
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= 'a':
		return int(c-'a') + 10
	case c >= 'A':
		return int(c-'A') + 10
	}
	return int(c - '0')
}
