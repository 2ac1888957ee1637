package php

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScopeResolution(t *testing.T) {
	t.Parallel()
	s := newScope()
	s.ns = `App\Http`
	s.class["request"] = `Illuminate\Http\Request`
	s.class["models"] = `App\Models`
	s.fn["helper"] = `Lib\Util\helper`
	s.consts["limit"] = `Lib\LIMIT`

	classes := []struct{ written, want string }{
		{`Request`, `Illuminate\Http\Request`},
		{`request`, `Illuminate\Http\Request`},
		{`Models\User`, `App\Models\User`},
		{`\PDO`, `PDO`},
		{`\Root\Abs`, `Root\Abs`},
		{`Local`, `App\Http\Local`},
		{`namespace\Local`, `App\Http\Local`},
		{`Sub\Thing`, `App\Http\Sub\Thing`},
	}
	for _, tc := range classes {
		require.Equal(t, tc.want, s.qualify(tc.written), tc.written)
	}

	funcs := []struct{ written, qual, name string }{
		{`strlen`, ``, `strlen`},
		{`helper`, `Lib\Util`, `helper`},
		{`\Foo\bar`, `Foo`, `bar`},
		{`\strlen`, ``, `strlen`},
		{`Models\make`, `App\Models`, `make`},
	}
	for _, tc := range funcs {
		q, n := s.function(tc.written)
		require.Equal(t, tc.qual, q, tc.written)
		require.Equal(t, tc.name, n, tc.written)
	}

	require.Equal(t, "LIMIT", s.constant("limit"))
	require.Equal(t, "PHP_EOL", s.constant(`\PHP_EOL`))
	require.Equal(t, "X", s.constant(`\App\X`))

	global := newScope()
	require.Equal(t, "PDO", global.qualify("PDO"))
}
