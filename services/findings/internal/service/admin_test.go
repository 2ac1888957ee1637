package service_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

func TestAddIntegrationValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for name, tc := range map[string]struct {
		req  *findingsv1.AddIntegrationRequest
		code codes.Code
		msg  string
	}{
		"org id": {&findingsv1.AddIntegrationRequest{OrgId: "o", Kind: "github", Url: "https://api.github.com"}, codes.InvalidArgument, "org_id must be a valid UUID"},
		"kind": {&findingsv1.AddIntegrationRequest{OrgId: e.org, Kind: "teams", Url: "https://x.example"}, codes.InvalidArgument,
			"kind must be one of: github, slack, jira, linear"},
		"no project": {&findingsv1.AddIntegrationRequest{OrgId: e.org, Kind: "jira", Url: "https://acme.atlassian.net", Project: " "}, codes.InvalidArgument,
			"project is required for jira (the Jira project key or Linear team id)"},
		"long name": {&findingsv1.AddIntegrationRequest{OrgId: e.org, Kind: "github", Url: "https://api.github.com", Name: strings.Repeat("n", 1001)}, codes.InvalidArgument,
			"name must be at most 1000 characters"},
		"short inbound secret": {&findingsv1.AddIntegrationRequest{OrgId: e.org, Kind: "github", Url: "https://api.github.com", InboundSecret: "short"}, codes.InvalidArgument,
			"inbound_secret must be at least 16 characters"},
		"url scheme":      {&findingsv1.AddIntegrationRequest{OrgId: e.org, Kind: "github", Url: "ftp://x"}, codes.InvalidArgument, "url must use https or http"},
		"url credentials": {&findingsv1.AddIntegrationRequest{OrgId: e.org, Kind: "github", Url: "https://u:p@api.github.com"}, codes.InvalidArgument, "url must not contain credentials"},
		"unknown org":     {&findingsv1.AddIntegrationRequest{OrgId: uuid.NewString(), Kind: "github", Url: "https://api.github.com"}, codes.NotFound, "Organization not found"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := e.admin.AddIntegration(e.ctx, tc.req)
			requireStatus(t, err, tc.code, tc.msg)
		})
	}
	list, err := e.admin.ListIntegrations(e.ctx, &findingsv1.ListIntegrationsRequest{OrgId: e.org})
	require.NoError(t, err)
	require.Empty(t, list.GetData(), "no refused integration was stored")
}

// TestIntegrationsLifecycle: secrets are sealed and never shown; a chat
// webhook's URL is shown by its host only; GitHub gets a generated inbound
// secret once; removal hides the integration.
func TestIntegrationsLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	gh, err := e.admin.AddIntegration(e.ctx, &findingsv1.AddIntegrationRequest{OrgId: e.org, Kind: "github", Url: "https://api.github.com/?key=k1#frag", Token: "ghp_secret"})
	require.NoError(t, err)
	require.Equal(t, "github", gh.GetIntegration().GetName(), "the kind names an unnamed integration")
	require.Equal(t, "https://api.github.com/?REDACTED", gh.GetIntegration().GetUrl())
	require.True(t, gh.GetIntegration().GetHasToken())
	require.False(t, gh.GetIntegration().GetHasSecret())
	require.True(t, gh.GetIntegration().GetHasInboundSecret())
	require.True(t, strings.HasPrefix(gh.GetInboundSecret(), "vsin_"), gh.GetInboundSecret())
	require.Len(t, gh.GetInboundSecret(), len("vsin_")+64)

	slack, err := e.admin.AddIntegration(e.ctx, &findingsv1.AddIntegrationRequest{OrgId: e.org, Kind: "slack", Name: "alerts",
		Url: "https://hooks.slack.com/services/T0/B0/secretpath", InboundSecret: "0123456789abcdef"})
	require.NoError(t, err)
	require.Equal(t, "https://hooks.slack.com/REDACTED", slack.GetIntegration().GetUrl())
	require.Equal(t, "0123456789abcdef", slack.GetInboundSecret(), "a given inbound secret is kept")

	jira, err := e.admin.AddIntegration(e.ctx, &findingsv1.AddIntegrationRequest{OrgId: e.org, Kind: "jira", Url: "https://acme.atlassian.net", Project: "SEC"})
	require.NoError(t, err)
	require.Empty(t, jira.GetInboundSecret(), "only github and slack receive events")
	require.False(t, jira.GetIntegration().GetHasInboundSecret())
	require.Equal(t, "SEC", jira.GetIntegration().GetProject())

	list, err := e.admin.ListIntegrations(e.ctx, &findingsv1.ListIntegrationsRequest{OrgId: e.org})
	require.NoError(t, err)
	require.Len(t, list.GetData(), 3)
	for _, i := range list.GetData() {
		require.NotContains(t, i.GetUrl(), "secretpath")
		require.NotContains(t, i.GetUrl(), "k1")
	}

	// The sealed URL opens to the full URL under the integration's id only.
	var sealed []byte
	require.NoError(t, e.st.Pool.QueryRow(e.ctx, `SELECT url_enc FROM findings.integrations WHERE id = $1`, slack.GetIntegration().GetId()).Scan(&sealed))
	plain, _, err := e.box.Open(sealed, store.IntegrationURLAD(slack.GetIntegration().GetId()))
	require.NoError(t, err)
	require.Equal(t, "https://hooks.slack.com/services/T0/B0/secretpath", string(plain))
	_, _, err = e.box.Open(sealed, store.IntegrationURLAD(gh.GetIntegration().GetId()))
	require.Error(t, err)

	removed, err := e.admin.RemoveIntegration(e.ctx, &findingsv1.RemoveIntegrationRequest{Id: jira.GetIntegration().GetId()})
	require.NoError(t, err)
	require.Equal(t, jira.GetIntegration().GetId(), removed.GetId())
	require.NotNil(t, removed.GetRemovedAt())
	list, err = e.admin.ListIntegrations(e.ctx, &findingsv1.ListIntegrationsRequest{OrgId: e.org})
	require.NoError(t, err)
	require.Len(t, list.GetData(), 2)

	for name, tc := range map[string]struct {
		id   string
		code codes.Code
		msg  string
	}{
		"bad id":  {"x", codes.InvalidArgument, "id must be a valid UUID"},
		"unknown": {uuid.NewString(), codes.NotFound, "Integration not found"},
		"removed": {jira.GetIntegration().GetId(), codes.NotFound, "Integration not found"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.admin.RemoveIntegration(e.ctx, &findingsv1.RemoveIntegrationRequest{Id: tc.id})
			requireStatus(t, err, tc.code, tc.msg)
		})
	}
	_, err = e.admin.ListIntegrations(e.ctx, &findingsv1.ListIntegrationsRequest{OrgId: "o"})
	requireStatus(t, err, codes.InvalidArgument, "org_id must be a valid UUID")
}
