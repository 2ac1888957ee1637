package java

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vulnscan/vulnscan/pkg/engine/lower"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// stringLit returns the value of a string literal or text block.
func (l *lowerer) stringLit(n *syntax.Node) string {
	s := l.text(n)
	if strings.HasPrefix(s, `"""`) && len(s) >= 6 {
		return unescape(textBlock(s[3 : len(s)-3]))
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return unescape(s[1 : len(s)-1])
	}
	return s
}

// textBlock removes the opening line and the common indentation of a text
// block's lines, and trailing spaces of each line.
func textBlock(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	lines := strings.Split(s, "\n")
	indent := -1
	for i, ln := range lines {
		t := strings.TrimLeft(ln, " \t")
		if t == "" && i != len(lines)-1 {
			continue
		}
		if d := len(ln) - len(t); indent < 0 || d < indent {
			indent = d
		}
	}
	for i, ln := range lines {
		if len(ln) >= indent && indent > 0 {
			ln = ln[indent:]
		} else {
			ln = strings.TrimLeft(ln, " \t")
		}
		lines[i] = strings.TrimRight(ln, " \t")
	}
	return strings.Join(lines, "\n")
}

// charLit returns the value of a character literal as a one-character string.
func charLit(s string) string {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return unescape(s[1 : len(s)-1])
	}
	return s
}

// unescape resolves Java escape sequences.
func unescape(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		if c, ok := lower.ControlEscape(s[i]); ok {
			b.WriteByte(c)
			continue
		}
		switch e := s[i]; e {
		case 'b':
			b.WriteByte('\b')
		case 's':
			b.WriteByte(' ')
		case '\n': // line continuation in text blocks
		case 'u':
			for i < len(s) && s[i] == 'u' {
				i++
			}
			if i+4 <= len(s) {
				if r, err := strconv.ParseUint(s[i:i+4], 16, 32); err == nil {
					b.WriteRune(rune(r))
					i += 3
					continue
				}
			}
			b.WriteString(`\u`)
			i--
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			r, _ := strconv.ParseUint(s[i:j], 8, 32)
			if r > 0xff {
				j--
				r, _ = strconv.ParseUint(s[i:j], 8, 32)
			}
			b.WriteRune(rune(r))
			i = j - 1
		default:
			b.WriteByte(e)
		}
	}
	out := b.String()
	if !utf8.ValidString(out) {
		return strings.ToValidUTF8(out, "\uFFFD")
	}
	return out
}

// intLit parses an integer literal with underscores, a long suffix, and
// hex, octal or binary prefixes; overflowing values wrap like Java's.
func intLit(s string) int64 {
	s = strings.ReplaceAll(s, "_", "")
	s = strings.TrimRight(s, "lL")
	if u, err := strconv.ParseUint(s, 0, 64); err == nil {
		return int64(u)
	}
	if len(s) > 1 && s[0] == '0' && s[1] >= '0' && s[1] <= '9' {
		if u, err := strconv.ParseUint(s[1:], 8, 64); err == nil {
			return int64(u)
		}
	}
	return 0
}

// floatLit parses a floating-point literal with its optional f/d suffix.
func floatLit(s string) float64 {
	s = strings.ReplaceAll(s, "_", "")
	if !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") {
		s = strings.TrimRight(s, "fFdD")
	} else {
		s = strings.TrimRight(s, "fFdD")
		if !strings.ContainsAny(s, "pP") {
			s += "p0"
		}
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}
