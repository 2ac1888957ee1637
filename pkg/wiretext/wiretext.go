// Package wiretext makes text taken from users' repositories fit to send
// and store.
package wiretext

import (
	"strings"
	"unicode/utf8"
)

// Clean returns s as valid UTF-8 without the NUL character: protobuf cannot
// carry anything else in a string field, nor PostgreSQL store it in text or
// jsonb. A snippet, file path, application name or message taken from a
// repository holds whatever bytes its files hold, and much code is written
// in a legacy single-byte encoding: a byte that does not belong to a valid
// UTF-8 sequence is read as Windows-1252 (which agrees with ISO-8859-1 on
// every printable character), so "r\xe9pertoire" reads "répertoire" rather
// than losing the letter; its five unassigned bytes, and NUL, become U+FFFD.
// Valid UTF-8 without NUL is returned as it is.
func Clean(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0:
			r = utf8.RuneError
		case r == utf8.RuneError && n <= 1:
			r = windows1252(s[i])
		}
		b.WriteRune(r)
		i += max(n, 1)
	}
	return b.String()
}

// windows1252 decodes one byte of Windows-1252 that is not ASCII.
func windows1252(c byte) rune {
	if c >= 0xa0 {
		return rune(c)
	}
	if r := cp1252High[c-0x80]; r != 0 {
		return r
	}
	return utf8.RuneError
}

// cp1252High maps 0x80–0x9f; zero marks the unassigned bytes.
var cp1252High = [32]rune{
	'€', 0, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0, 'Ž', 0,
	0, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0, 'ž', 'Ÿ',
}

// Cut returns Clean(s) cut to at most max bytes, at a character boundary:
// a cut through a multi-byte character would leave bytes that are not
// UTF-8, which PostgreSQL refuses.
func Cut(s string, max int) string {
	s = Clean(s)
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}
