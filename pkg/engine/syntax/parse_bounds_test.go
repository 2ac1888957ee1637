package syntax_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

func TestParseHonoursTheContextDeadline(t *testing.T) {
	t.Parallel()
	p := syntax.NewParser(syntax.Limits{})
	defer p.Close()
	past, cancelPast := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelPast()
	future, cancelFuture := context.WithTimeout(context.Background(), time.Hour)
	defer cancelFuture()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		wantErr error
	}{
		{name: "deadline passed", ctx: past, wantErr: syntax.ErrTimeout},
		{name: "distant deadline", ctx: future},
		{name: "no deadline", ctx: context.Background()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, parse := range []func(context.Context, *syntax.Lang, []byte) (*syntax.Node, int, error){p.Parse, p.ParseTransient} {
				root, n, err := parse(tc.ctx, syntax.Go, []byte("package p\n\nfunc f() {}\n"))
				if tc.wantErr != nil {
					require.ErrorIs(t, err, tc.wantErr)
					require.Nil(t, root)
					continue
				}
				require.NoError(t, err)
				require.Equal(t, "source_file", root.Type)
				require.NotNil(t, root.FirstOfType("function_declaration"))
				require.Positive(t, n)
			}
		})
	}
}

func TestParseDefaultLimits(t *testing.T) {
	t.Parallel()
	p := syntax.NewParser(syntax.Limits{}) // depth 400 and 1.5M nodes apply
	defer p.Close()
	for _, tc := range []struct {
		name    string
		depth   int
		wantErr error
	}{
		{name: "shallow enough", depth: 50},
		{name: "past the default depth", depth: 1000, wantErr: syntax.ErrTooDeep},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "x = " + strings.Repeat("(", tc.depth) + "1" + strings.Repeat(")", tc.depth) + "\n"
			root, _, err := p.Parse(context.Background(), syntax.Python, []byte(src))
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "module", root.Type)
		})
	}
}

// A file larger than the record buffer a parser keeps between files is
// copied in full, and the parser still serves the files after it.
func TestParseVeryLargeFileThenSmallOnes(t *testing.T) {
	t.Parallel()
	const stmts = 70_000 // about 5 nodes each: past the kept buffer of 1<<18 records
	var sb strings.Builder
	for i := range stmts {
		fmt.Fprintf(&sb, "v%d = %d\n", i, i)
	}
	big := []byte(sb.String())
	p := syntax.NewParser(syntax.Limits{})
	defer p.Close()
	for _, transient := range []bool{false, true} {
		t.Run(fmt.Sprintf("transient=%v", transient), func(t *testing.T) {
			parse := p.Parse
			if transient {
				parse = p.ParseTransient
			}
			root, n, err := parse(context.Background(), syntax.Python, big)
			require.NoError(t, err)
			require.Greater(t, n, 1<<18)
			require.Len(t, root.Children, stmts)
			last := root.Children[stmts-1]
			require.Equal(t, stmts, last.Line())
			require.Equal(t, fmt.Sprintf("v%d = %d", stmts-1, stmts-1), last.Text(big))
			var lastText string
			if !transient {
				lastText = last.Text(big)
			}

			small := []byte("def f(a):\n    return a\n")
			sroot, sn, err := parse(context.Background(), syntax.Python, small)
			require.NoError(t, err)
			require.Less(t, sn, 20)
			fn := sroot.FirstOfType("function_definition")
			require.NotNil(t, fn)
			require.Equal(t, "f", fn.Child("name").Text(small))
			if !transient {
				// A tree from Parse is not overwritten by later parses.
				require.Equal(t, lastText, root.Children[stmts-1].Text(big))
				require.Len(t, root.Children, stmts)
			}
		})
	}
}
