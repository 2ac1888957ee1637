package service

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCellNeutralizesFormulas(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"equals", "=1+1", "'=1+1"},
		{"plus", "+1+1", "'+1+1"},
		{"minus", "-2+3", "'-2+3"},
		{"at", "@SUM(A1:A2)", "'@SUM(A1:A2)"},
		{"tab", "\t=1", "'\t=1"},
		{"carriage return", "\r=1", "'\r=1"},
		{"leading spaces", "   =HYPERLINK(\"http://evil\")", "'   =HYPERLINK(\"http://evil\")"},
		{"leading newline", "\n=cmd|' /C calc'!A0", "'\n=cmd|' /C calc'!A0"},
		{"leading CRLF and spaces", "\r\n  @SUM(1)", "'\r\n  @SUM(1)"},
		{"leading newlines then plus", "\n\n+1", "'\n\n+1"},
		{"non-breaking space", "\u00a0=1", "'\u00a0=1"},
		{"dde", "=cmd|'/C calc'!A0", "'=cmd|'/C calc'!A0"},
		{"plain text", "SQL injection in login", "SQL injection in login"},
		{"formula later in text", "a=b", "a=b"},
		{"only spaces", "   ", "   "},
		{"empty", "", ""},
		{"quote inside", `say "hi"`, `say "hi"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, cell(tc.in))
			// Through the CSV writer and back, the cell is unchanged and
			// embedded quotes are escaped, not cell-breaking.
			var buf bytes.Buffer
			w := csv.NewWriter(&buf)
			require.NoError(t, w.Write([]string{cell(tc.in), "next"}))
			w.Flush()
			rows, err := csv.NewReader(&buf).ReadAll()
			require.NoError(t, err)
			require.Equal(t, [][]string{{normalizeCRLF(tc.want), "next"}}, rows)
		})
	}
}

// normalizeCRLF mirrors encoding/csv, which reads a quoted \r\n as \n.
func normalizeCRLF(s string) string {
	return string(bytes.ReplaceAll([]byte(s), []byte("\r\n"), []byte("\n")))
}
