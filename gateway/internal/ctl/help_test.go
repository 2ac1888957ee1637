package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func run(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = Main(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

// Help asked for is printed on stdout with exit 0; a command line that is
// incomplete or wrong prints help on stderr with exit 2. Nothing here
// reaches a service.
func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		out, err []string // substrings of stdout and stderr
		notOut   []string
	}{
		{"top-level --help", []string{"--help"}, 0, []string{"Usage:", "key", "Examples:", "vulnscanctl org create --name acme"}, nil, nil},
		{"top-level -h", []string{"-h"}, 0, []string{"Usage:"}, nil, nil},
		{"help word", []string{"help"}, 0, []string{"Usage:"}, nil, nil},
		{"help for a group", []string{"help", "key"}, 0, []string{"vulnscanctl key create", "vulnscanctl key revoke", "vulnscanctl key list"}, nil, nil},
		{"group --help", []string{"key", "--help"}, 0, []string{"vulnscanctl key create --org ORG", "Issue an API key", "vulnscanctl key list --org ORG"}, nil, nil},
		{"subcommand --help", []string{"key", "create", "--help"}, 0,
			[]string{"Issue an API key", "Usage:\n  vulnscanctl key create", "--org ORG", "(required)", "--scopes", "--expires-in", "Examples:", "vulnscanctl key create --org ORG_ID --scopes read,write --name ci"},
			nil, []string{"--auth-addr", "--findings-addr"}},
		{"subcommand -h after flags", []string{"credits", "grant", "--org", "x", "-h"}, 0, []string{"--amount", "(required)"}, nil, []string{"-addr"}},
		{"--help-all shows addresses", []string{"finding", "list", "--help-all"}, 0, []string{"--scan", "--pending", "--auth-addr", "--findings-addr"}, nil, nil},
		{"no arguments", nil, 2, nil, []string{"Usage:"}, nil},
		{"group without verb", []string{"key"}, 2, nil, []string{"a verb is required", "vulnscanctl key create"}, nil},
		{"unknown group", []string{"nope"}, 2, nil, []string{`unknown command "nope"`, "Usage:"}, nil},
		{"unknown verb", []string{"key", "nope"}, 2, nil, []string{`unknown command "key nope"`, "vulnscanctl key create"}, nil},
		{"missing required flag", []string{"key", "revoke"}, 2, nil, []string{"--id is required", "usage: vulnscanctl key revoke --id KEY_ID"}, nil},
		{"unknown flag", []string{"credits", "show", "--bogus"}, 2, nil, []string{"bogus", "usage: vulnscanctl credits show"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(tc.args...)
			require.Equal(t, tc.code, code, "stdout: %s\nstderr: %s", out, errOut)
			for _, s := range tc.out {
				require.Contains(t, out, s)
			}
			for _, s := range tc.err {
				require.Contains(t, errOut, s)
			}
			for _, s := range tc.notOut {
				require.NotContains(t, out, s)
			}
			if tc.code == 0 {
				require.Empty(t, errOut)
			} else {
				require.Empty(t, out)
			}
		})
	}
}

// Every command has a summary and an example in its help.
func TestEveryCommandIsDocumented(t *testing.T) {
	for _, c := range commands {
		d, ok := docs[c.Group+" "+c.Verb]
		require.True(t, ok, "%s %s has no help", c.Group, c.Verb)
		require.NotEmpty(t, d.summary)
		require.NotEmpty(t, d.examples)
		require.NotEmpty(t, groupDocs[c.Group])
	}
}

func TestVersion(t *testing.T) {
	code, out, errOut := run("version")
	require.Equal(t, 0, code, errOut)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	require.Contains(t, v, "version")
	require.Contains(t, v, "commit")
	require.NotEmpty(t, v["go"])
}
