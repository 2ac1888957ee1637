package javascript

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/lower"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// decodeString returns the value of a string or template literal without
// substitutions: its fragments with escape sequences decoded.
func decodeString(src []byte, n *syntax.Node) string {
	var b strings.Builder
	for _, c := range n.Children {
		switch c.Type {
		case "string_fragment":
			b.WriteString(c.Text(src))
		case "escape_sequence":
			b.WriteString(decodeEscape(c.Text(src)))
		}
	}
	return b.String()
}

// decodeEscape decodes one JavaScript escape sequence (with its backslash).
func decodeEscape(e string) string {
	if len(e) < 2 {
		return e
	}
	if c, ok := lower.ControlEscape(e[1]); ok {
		return string(c)
	}
	switch e[1] {
	case 'b':
		return "\b"
	case '0':
		if len(e) == 2 {
			return "\x00"
		}
	case 'x':
		if v, err := strconv.ParseUint(e[2:], 16, 32); err == nil {
			return string(rune(v))
		}
	case 'u':
		h := strings.Trim(e[2:], "{}")
		if v, err := strconv.ParseUint(h, 16, 32); err == nil && utf8.ValidRune(rune(v)) {
			return string(rune(v))
		}
	case '\n', '\r':
		return "" // line continuation
	}
	return e[1:]
}

// numberConst parses a numeric literal (decimal, hex, octal, binary,
// separators, BigInt suffix).
func numberConst(text string) *ir.Const {
	t := strings.ReplaceAll(text, "_", "")
	t = strings.TrimSuffix(t, "n")
	lower := strings.ToLower(t)
	base := 0
	switch {
	case strings.HasPrefix(lower, "0x"), strings.HasPrefix(lower, "0b"):
		base = 0
	case strings.HasPrefix(lower, "0o"):
		t, base = t[2:], 8
	}
	if !strings.ContainsAny(lower, ".e") || strings.HasPrefix(lower, "0x") {
		if v, err := strconv.ParseInt(t, base, 64); err == nil {
			return ir.Int(v)
		}
		if v, err := strconv.ParseUint(t, base, 64); err == nil && v <= math.MaxInt64 {
			return ir.Int(int64(v))
		}
	}
	if v, err := strconv.ParseFloat(t, 64); err == nil {
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 && !strings.ContainsAny(lower, ".e") {
			return ir.Int(int64(v))
		}
		return ir.Float(v)
	}
	return ir.Float(math.NaN())
}
