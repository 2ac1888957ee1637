package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// shown makes text that comes from a repository, a finding or an
// integration safe to print to a terminal. A snippet or a comment holds
// whatever its author wrote: ESC starts sequences that rewrite the screen,
// set the window title or the clipboard, or hide text; a carriage return
// overwrites the line; the Unicode controls that reorder text (the
// bidirectional overrides and isolates of CVE-2021-42574) make code read
// other than it runs. Those are printed as escapes (\x1b, \r, \u202e), as
// are bytes that are not UTF-8. Line breaks and tabs stay in a block of
// text (multiline) and are escaped in a field printed on one line, where
// they would break the table. The JSON output is left as it is: its encoder
// escapes control characters itself.
func shown(s string, multiline bool) string {
	clean := utf8.ValidString(s)
	for _, r := range s {
		if escaped(r, multiline) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\n' && !multiline:
			b.WriteString(`\n`)
		case r == '\t' && !multiline:
			b.WriteString(`\t`)
		case r < 0x100 && escaped(r, multiline):
			fmt.Fprintf(&b, `\x%02x`, r)
		case escaped(r, multiline):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += max(n, 1)
	}
	return b.String()
}

// escaped reports whether r is printed as an escape.
func escaped(r rune, multiline bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !multiline
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}
