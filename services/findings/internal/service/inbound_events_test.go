package service_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/inbound"
	"github.com/vulnscan/vulnscan/services/findings/internal/service"
)

const inboundSecret = "0123456789abcdef-inbound"

// comment is a GitHub issue_comment event by login.
func comment(t *testing.T, login, body string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"action": "created", "sender": map[string]any{"login": login},
		"comment": map[string]any{"id": 42, "body": body, "user": map[string]any{"login": login}}})
	require.NoError(t, err)
	return b
}

// githubEvent is a signed GitHub delivery to integration id.
func githubEvent(id, event, delivery string, body []byte) *findingsv1.HandleEventRequest {
	return &findingsv1.HandleEventRequest{IntegrationId: id, Provider: "github", Event: event, Delivery: delivery, Body: body,
		Signature: "sha256=" + inbound.GitHubSign(inboundSecret, body)}
}

// TestInboundGitHubEvents: signed events from a GitHub integration are
// checked in order (integration, signature, shape, finding, author,
// replay), and a mapped user's command changes the finding.
func TestInboundGitHubEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	in := &service.Inbound{Service: e.admin.Service, Now: time.Now}
	gh, err := e.admin.AddIntegration(e.ctx, &findingsv1.AddIntegrationRequest{OrgId: e.org, Kind: "github", Url: "https://api.github.com", InboundSecret: inboundSecret})
	require.NoError(t, err)
	jira, err := e.admin.AddIntegration(e.ctx, &findingsv1.AddIntegrationRequest{OrgId: e.org, Kind: "jira", Url: "https://acme.atlassian.net", Project: "SEC"})
	require.NoError(t, err)
	id := gh.GetIntegration().GetId()
	finding := e.ids[1]
	command := comment(t, "Octo", "/vulnscan false_positive "+finding+" test fixture only")

	pong, err := in.HandleEvent(e.ctx, githubEvent(id, "ping", "d-ping", []byte(`{}`)))
	require.NoError(t, err)
	require.Equal(t, "pong", pong.GetStatus())

	for name, tc := range map[string]struct {
		req  *findingsv1.HandleEventRequest
		code codes.Code
		msg  string
	}{
		"bad id":        {githubEvent("x", "ping", "d", nil), codes.InvalidArgument, "integration_id must be a valid UUID"},
		"provider":      {&findingsv1.HandleEventRequest{IntegrationId: id, Provider: "gitlab"}, codes.NotFound, "Integration not found"},
		"unknown":       {githubEvent(uuid.NewString(), "ping", "d", nil), codes.NotFound, "Integration not found"},
		"other kind":    {githubEvent(jira.GetIntegration().GetId(), "ping", "d", nil), codes.NotFound, "Integration not found"},
		"no signature":  {&findingsv1.HandleEventRequest{IntegrationId: id, Provider: "github", Event: "ping", Delivery: "d"}, codes.Unauthenticated, "X-Hub-Signature-256 header is required"},
		"bad signature": {&findingsv1.HandleEventRequest{IntegrationId: id, Provider: "github", Event: "ping", Delivery: "d", Body: []byte("{}"), Signature: "sha256=00"}, codes.Unauthenticated, "Invalid signature: X-Hub-Signature-256 does not match the body"},
		"no delivery":   {githubEvent(id, "ping", "", []byte("{}")), codes.InvalidArgument, "X-GitHub-Delivery header is required"},
		"no event":      {githubEvent(id, "", "d-none", []byte("{}")), codes.InvalidArgument, "X-GitHub-Event header is required"},
		"replayed ping": {githubEvent(id, "ping", "d-ping", []byte(`{}`)), codes.AlreadyExists, "Event already received: this X-GitHub-Delivery was processed before"},
		"no finding named": {githubEvent(id, "issue_comment", "d-none-named", comment(t, "Octo", "/vulnscan resolved")), codes.NotFound,
			"Finding not found: name it (/vulnscan STATE FINDING_ID) or reply to one of the integration's comments about it"},
		"unmapped author": {githubEvent(id, "issue_comment", "d-unmapped", command), codes.PermissionDenied,
			`GitHub user "Octo" is not mapped to a vulnscan user; only mapped users change findings`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := in.HandleEvent(e.ctx, tc.req)
			requireStatus(t, err, tc.code, tc.msg)
		})
	}

	ignored, err := in.HandleEvent(e.ctx, githubEvent(id, "push", "d-push", []byte(`{}`)))
	require.NoError(t, err)
	require.Equal(t, "ignored", ignored.GetStatus())

	mapped, err := e.admin.MapIntegrationUser(e.ctx, &findingsv1.MapIntegrationUserRequest{IntegrationId: id, ExternalUser: " Octo ", UserId: e.user})
	require.NoError(t, err)
	require.Equal(t, "octo", mapped.GetExternalUser(), "GitHub logins are matched without case")
	require.Equal(t, "user-"+e.user[:4], mapped.GetUsername())

	_, err = in.HandleEvent(e.ctx, githubEvent(id, "issue_comment", "d-404", comment(t, "Octo", "/vulnscan resolved "+uuid.NewString())))
	requireStatus(t, err, codes.NotFound, "Finding not found")

	changed, err := in.HandleEvent(e.ctx, githubEvent(id, "issue_comment", "d-change", command))
	require.NoError(t, err)
	require.Equal(t, "changed", changed.GetStatus())
	require.Equal(t, "finding "+finding+" is now false_positive", changed.GetText())
	got, err := e.pub.GetFinding(e.ctx, &findingsv1.GetFindingRequest{Id: finding})
	require.NoError(t, err)
	require.Equal(t, "false_positive", got.GetState())

	again, err := in.HandleEvent(e.ctx, githubEvent(id, "issue_comment", "d-change-2", command))
	require.NoError(t, err)
	require.Equal(t, "recorded", again.GetStatus())
	require.Equal(t, "finding "+finding+" already was false_positive", again.GetText())

	_, err = in.HandleEvent(e.ctx, githubEvent(id, "issue_comment", "d-change", command))
	requireStatus(t, err, codes.AlreadyExists, "Event already received: this X-GitHub-Delivery was processed before")
}

func TestMapIntegrationUserValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	gh, err := e.admin.AddIntegration(e.ctx, &findingsv1.AddIntegrationRequest{OrgId: e.org, Kind: "github", Url: "https://api.github.com"})
	require.NoError(t, err)
	jira, err := e.admin.AddIntegration(e.ctx, &findingsv1.AddIntegrationRequest{OrgId: e.org, Kind: "linear", Url: "https://api.linear.app", Project: "T1"})
	require.NoError(t, err)
	id := gh.GetIntegration().GetId()
	for name, tc := range map[string]struct {
		req  *findingsv1.MapIntegrationUserRequest
		code codes.Code
		msg  string
	}{
		"integration id": {&findingsv1.MapIntegrationUserRequest{IntegrationId: "i", UserId: e.user, ExternalUser: "a"}, codes.InvalidArgument, "integration_id must be a valid UUID"},
		"user id":        {&findingsv1.MapIntegrationUserRequest{IntegrationId: id, UserId: "u", ExternalUser: "a"}, codes.InvalidArgument, "user_id must be a valid UUID"},
		"external":       {&findingsv1.MapIntegrationUserRequest{IntegrationId: id, UserId: e.user, ExternalUser: "  "}, codes.InvalidArgument, "external_user must be 1 to 200 characters"},
		"unknown":        {&findingsv1.MapIntegrationUserRequest{IntegrationId: uuid.NewString(), UserId: e.user, ExternalUser: "a"}, codes.NotFound, "Integration not found"},
		"no events": {&findingsv1.MapIntegrationUserRequest{IntegrationId: jira.GetIntegration().GetId(), UserId: e.user, ExternalUser: "a"}, codes.InvalidArgument,
			"integration_id: a linear integration receives no events"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := e.admin.MapIntegrationUser(e.ctx, tc.req)
			requireStatus(t, err, tc.code, tc.msg)
		})
	}
}
