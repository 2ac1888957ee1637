package wiretext

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestClean(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"ASCII", "db.Query(\"SELECT \" + id)\n\tx", "db.Query(\"SELECT \" + id)\n\tx"},
		{"UTF-8 is kept", "répertoire ✓ 日本 \U0001F600", "répertoire ✓ 日本 \U0001F600"},
		{"a replacement character already there", "a\uFFFDb", "a\uFFFDb"},
		{"ISO-8859-1", "# r\xe9pertoire choisi par l'utilisateur", "# répertoire choisi par l'utilisateur"},
		{"a Latin-1 file name", "caf\xe9.py", "café.py"},
		{"Windows-1252 punctuation", "\x93quoted\x94 \x80 5\x85", "“quoted” € 5…"},
		{"unassigned Windows-1252 bytes", "a\x81b\x8dc\x8fd\x90e\x9df", "a\uFFFDb\uFFFDc\uFFFDd\uFFFDe\uFFFDf"},
		{"NUL", "a\x00b", "a\uFFFDb"},
		{"NUL beside a bad byte", "\x00\xff", "\uFFFDÿ"},
		{"UTF-8 and Latin-1 mixed", "ü=\xfc", "ü=ü"},
		{"a truncated sequence at the end", "euro \xe2\x82", "euro â‚"},
		{"an encoded surrogate", "\xed\xa0\x80", "í\u00a0€"},
		{"an overlong encoding", "\xc0\xaf", "À¯"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Clean(tc.in)
			require.Equal(t, tc.want, got)
			require.True(t, utf8.ValidString(got))
			require.NotContains(t, got, "\x00")
			require.Equal(t, got, Clean(got), "cleaning twice changes nothing")
		})
	}
}

func TestCut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		max      int
		want     string
	}{
		{"short", "abc", 5, "abc"},
		{"exact", "abcde", 5, "abcde"},
		{"ASCII", "abcdef", 5, "abcde"},
		{"at a boundary", "aéé", 3, "aé"},
		{"inside a character", "aéé", 4, "aé"},
		{"inside a four-byte character", "ab\U0001F600", 5, "ab"},
		{"cleaned first", "caf\xe9s", 5, "café"},
		{"NUL", "a\x00bc", 4, "a\uFFFD"},
		{"nothing left", "é", 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Cut(tc.in, tc.max)
			require.Equal(t, tc.want, got)
			require.LessOrEqual(t, len(got), tc.max)
			require.True(t, utf8.ValidString(got))
		})
	}
}
