package php

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
)

func TestUnescape(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`\n`: "\n", `\t`: "\t", `\\`: `\`, `\$`: "$", `\"`: `"`, `\e`: "\x1b",
		`\x41`: "A", `\101`: "A", `\0`: "\x00", `\u{1F600}`: "😀", `\q`: `\q`, `\u{zz}`: `\u{zz}`,
	}
	for in, want := range cases {
		require.Equal(t, want, unescape(in), in)
	}
}

func TestSingleQuoted(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`'plain'`: "plain", `'it\'s'`: "it's", `'a\\b'`: `a\b`, `'keep \n'`: `keep \n`, `b'bin'`: "bin", `''`: "",
	}
	for in, want := range cases {
		require.Equal(t, want, singleQuoted(in), in)
	}
}

func TestParseInt(t *testing.T) {
	t.Parallel()
	cases := map[string]*ir.Const{
		"42": ir.Int(42), "0x1F": ir.Int(31), "0b101": ir.Int(5), "017": ir.Int(15), "0o17": ir.Int(15),
		"1_000": ir.Int(1000), "99999999999999999999": ir.Float(1e20),
	}
	for in, want := range cases {
		require.Equal(t, want, parseInt(in), in)
	}
}
