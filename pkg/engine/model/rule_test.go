package model_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/model"
)

func TestFlowRuleCompile(t *testing.T) {
	t.Parallel()
	sink := func(s model.Sink) []model.Sink { return []model.Sink{s} }
	cases := []struct {
		name string
		rule model.FlowRule
		err  string
	}{
		{"taint rule", model.FlowRule{ID: "r", Class: "sqli", Sinks: sink(model.Sink{Targets: []string{"a#b"}, Args: []int{0}})}, ""},
		{"store sink", model.FlowRule{ID: "r", Class: "trustbound", Sinks: sink(model.Sink{Stores: []string{"flask.session"}})}, ""},
		{"const rule", model.FlowRule{ID: "r", Const: &model.ConstCall{Targets: []string{"md#get"}, Matches: "(?i)^md5$"}}, ""},
		{"const rule needs no class", model.FlowRule{ID: "r", Class: "nonsense", Const: &model.ConstCall{Targets: []string{"md#get"}, Matches: "x"}}, ""},
		{"neither sinks nor call", model.FlowRule{ID: "r0", Class: "sqli"}, "rule r0: exactly one of sinks and call"},
		{"both sinks and call", model.FlowRule{ID: "r1", Class: "sqli", Sinks: sink(model.Sink{Targets: []string{"a#b"}}),
			Const: &model.ConstCall{Targets: []string{"c#d"}, Matches: "x"}}, "rule r1: exactly one of sinks and call"},
		{"sink without targets", model.FlowRule{ID: "r2", Class: "sqli", Sinks: sink(model.Sink{Args: []int{0}})}, "rule r2: sink without targets or stores"},
		{"unknown class", model.FlowRule{ID: "r3", Class: "rce", Sinks: sink(model.Sink{Targets: []string{"a#b"}})}, `rule r3: unknown class "rce"`},
		{"empty class", model.FlowRule{ID: "r4", Sinks: sink(model.Sink{Targets: []string{"a#b"}})}, `unknown class ""`},
		{"when with bad pattern", model.FlowRule{ID: "r5", Class: "ssrf", Sinks: sink(model.Sink{Targets: []string{"a#b"}, When: &model.ArgCond{Arg: 1, Matches: "("}})},
			"rule r5: condition needs a valid matches or a type"},
		{"unless with empty pattern and no type", model.FlowRule{ID: "r6", Class: "ssrf", Sinks: sink(model.Sink{Targets: []string{"a#b"}, Unless: &model.ArgCond{Arg: 1}})},
			"rule r6: condition needs a valid matches or a type"},
		{"condition on type only", model.FlowRule{ID: "r", Class: "xss", Sinks: sink(model.Sink{Targets: []string{"a#b"}, When: &model.ArgCond{Arg: 0, Type: "net/http.ResponseWriter"}})}, ""},
		{"const without targets", model.FlowRule{ID: "r7", Const: &model.ConstCall{Matches: "x"}}, "rule r7: call needs targets and matches"},
		{"const without pattern", model.FlowRule{ID: "r8", Const: &model.ConstCall{Targets: []string{"a#b"}}}, "rule r8: call needs targets and matches"},
		{"const with bad pattern", model.FlowRule{ID: "r9", Const: &model.ConstCall{Targets: []string{"a#b"}, Matches: "[a-"}}, "rule r9:"},
		{"second sink broken", model.FlowRule{ID: "r10", Class: "xss", Sinks: []model.Sink{{Targets: []string{"a#b"}}, {}}}, "rule r10: sink without targets or stores"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := tc.rule
			err := r.Compile()
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
		})
	}
}

func TestFlowRuleCompileSetsClassBitAndPatterns(t *testing.T) {
	t.Parallel()
	when := &model.ArgCond{Arg: 1, Matches: "^CURLOPT_URL$"}
	unless := &model.ArgCond{Arg: 2, Key: "allowed_classes", Matches: "^false$"}
	typed := &model.ArgCond{Arg: 0, Type: "T"}
	r := model.FlowRule{ID: "ssrf", Class: "ssrf", Sinks: []model.Sink{
		{Targets: []string{"#curl_setopt"}, When: when, Unless: unless},
		{Targets: []string{"#x"}, When: typed},
	}}
	require.NoError(t, r.Compile())
	require.Equal(t, model.ClassBit("ssrf"), r.ClassBit)
	require.NotNil(t, when.Re)
	require.True(t, when.Re.MatchString("CURLOPT_URL"))
	require.False(t, when.Re.MatchString("CURLOPT_URLX"))
	require.NotNil(t, unless.Re)
	require.True(t, unless.Re.MatchString("false"))
	require.Nil(t, typed.Re, "a type condition without pattern has no regexp")

	c := model.FlowRule{ID: "hash", Const: &model.ConstCall{Targets: []string{"hashlib#new"}, Matches: "(?i)^(md5|sha-?1)$"}}
	require.NoError(t, c.Compile())
	require.Zero(t, c.ClassBit, "constant rules carry no class")
	for s, want := range map[string]bool{"MD5": true, "sha1": true, "SHA-1": true, "sha256": false, "md5x": false} {
		require.Equal(t, want, c.Const.Re.MatchString(s), s)
	}
}
