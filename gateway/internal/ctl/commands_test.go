package ctl

import (
	"context"
	"encoding/json"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/vulnscan/vulnscan/pkg/mtls"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// recorder keeps the last request each admin RPC received, so a test can
// check how a command line became a request.
type recorder struct {
	mu   sync.Mutex
	last map[string]proto.Message
}

func (r *recorder) got(method string, req proto.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last[method] = req
}

func (r *recorder) request(method string) proto.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[method]
}

var (
	t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	ts = timestamppb.New(t0)
)

const t0JSON = "2026-03-04T05:06:07Z"

type fakeAuthAdmin struct {
	authv1.UnimplementedAuthAdminServiceServer
	*recorder
}

func (f fakeAuthAdmin) CreateOrganization(_ context.Context, r *authv1.CreateOrganizationRequest) (*authv1.CreateOrganizationResponse, error) {
	f.got("CreateOrganization", r)
	return &authv1.CreateOrganizationResponse{OrgId: "org-1", UserId: "user-1"}, nil
}

func (f fakeAuthAdmin) CreateUser(_ context.Context, r *authv1.CreateUserRequest) (*authv1.CreateUserResponse, error) {
	f.got("CreateUser", r)
	return &authv1.CreateUserResponse{UserId: "user-2"}, nil
}

func (f fakeAuthAdmin) IssueAPIKey(_ context.Context, r *authv1.IssueAPIKeyRequest) (*authv1.IssueAPIKeyResponse, error) {
	f.got("IssueAPIKey", r)
	return &authv1.IssueAPIKeyResponse{Id: "key-1", Key: "vs_secret", Scopes: r.GetScopes(), ExpiresAt: r.GetExpiresAt()}, nil
}

func (f fakeAuthAdmin) AdminRevokeAPIKey(_ context.Context, r *authv1.AdminRevokeAPIKeyRequest) (*authv1.AdminRevokeAPIKeyResponse, error) {
	f.got("AdminRevokeAPIKey", r)
	if r.GetId() == "missing" {
		return nil, status.Error(codes.NotFound, "key not found")
	}
	return &authv1.AdminRevokeAPIKeyResponse{Id: r.GetId(), RevokedAt: ts}, nil
}

func (f fakeAuthAdmin) GrantCredits(_ context.Context, r *authv1.GrantCreditsRequest) (*authv1.GrantCreditsResponse, error) {
	f.got("GrantCredits", r)
	return &authv1.GrantCreditsResponse{OrgId: r.GetOrgId(), Balance: 100 + r.GetAmount()}, nil
}

func (f fakeAuthAdmin) GetBalance(_ context.Context, r *authv1.GetBalanceRequest) (*authv1.GetBalanceResponse, error) {
	f.got("GetBalance", r)
	return &authv1.GetBalanceResponse{OrgId: r.GetOrgId(), Balance: 42}, nil
}

func (f fakeAuthAdmin) ConnectRepo(_ context.Context, r *authv1.ConnectRepoRequest) (*authv1.ConnectRepoResponse, error) {
	f.got("ConnectRepo", r)
	return &authv1.ConnectRepoResponse{Id: "repo-1", Url: r.GetUrl()}, nil
}

func (f fakeAuthAdmin) ListOrganizations(_ context.Context, r *authv1.ListOrganizationsRequest) (*authv1.ListOrganizationsResponse, error) {
	f.got("ListOrganizations", r)
	return &authv1.ListOrganizationsResponse{Total: 1, Data: []*authv1.Organization{
		{Id: "org-1", Name: "acme", VerificationMode: "manual", Balance: 7, CreatedAt: ts},
	}}, nil
}

func (f fakeAuthAdmin) AdminListAPIKeys(_ context.Context, r *authv1.AdminListAPIKeysRequest) (*authv1.AdminListAPIKeysResponse, error) {
	f.got("AdminListAPIKeys", r)
	return &authv1.AdminListAPIKeysResponse{Total: 1, Data: []*authv1.APIKey{
		{Id: "key-1", Name: "ci", Prefix: "vs_ab", Scopes: []string{"read"}, UserId: "user-1", CreatedAt: ts, RevokedAt: ts},
	}}, nil
}

type fakeIntake struct {
	findingsv1.UnimplementedFindingsIntakeServiceServer
	*recorder
}

func (f fakeIntake) ApproveFinding(_ context.Context, r *findingsv1.ApproveFindingRequest) (*findingsv1.ApproveFindingResponse, error) {
	f.got("ApproveFinding", r)
	return &findingsv1.ApproveFindingResponse{Id: r.GetId(), VerificationStatus: "approved"}, nil
}

func (f fakeIntake) RejectFinding(_ context.Context, r *findingsv1.RejectFindingRequest) (*findingsv1.RejectFindingResponse, error) {
	f.got("RejectFinding", r)
	return &findingsv1.RejectFindingResponse{Id: r.GetId(), VerificationStatus: "rejected"}, nil
}

func (f fakeIntake) ListFindingsForOperator(_ context.Context, r *findingsv1.ListFindingsForOperatorRequest) (*findingsv1.ListFindingsForOperatorResponse, error) {
	f.got("ListFindingsForOperator", r)
	return &findingsv1.ListFindingsForOperatorResponse{Data: []*findingsv1.OperatorFinding{
		{Id: "f-1", Title: "SQL injection", VerificationStatus: "pending", Severity: "high", State: "open", Category: "sast",
			Fingerprint: "fp", AffectedFile: "a.go", StartLine: 12, FoundAt: ts, Confidence: "low"},
	}}, nil
}

type fakeFindingsAdmin struct {
	findingsv1.UnimplementedFindingsAdminServiceServer
	*recorder
}

func (f fakeFindingsAdmin) AddIntegration(_ context.Context, r *findingsv1.AddIntegrationRequest) (*findingsv1.AddIntegrationResponse, error) {
	f.got("AddIntegration", r)
	secret := "generated-inbound"
	if r.GetInboundSecret() != "" {
		secret = r.GetInboundSecret()
	}
	return &findingsv1.AddIntegrationResponse{InboundSecret: secret, Integration: &findingsv1.Integration{
		Id: "int-1", OrgId: r.GetOrgId(), Kind: r.GetKind(), Name: r.GetName(), Url: r.GetUrl(), Project: r.GetProject(),
		HasToken: r.GetToken() != "", HasSecret: r.GetSecret() != "", HasInboundSecret: true, CreatedAt: ts,
	}}, nil
}

func (f fakeFindingsAdmin) ListIntegrations(_ context.Context, r *findingsv1.ListIntegrationsRequest) (*findingsv1.ListIntegrationsResponse, error) {
	f.got("ListIntegrations", r)
	return &findingsv1.ListIntegrationsResponse{Data: []*findingsv1.Integration{
		// An older service that answers with the raw webhook URL.
		{Id: "int-2", OrgId: r.GetOrgId(), Kind: "slack", Url: "https://hooks.slack.example/services/T0/B0/s3cr3t"},
		{Id: "int-3", OrgId: r.GetOrgId(), Kind: "jira", Url: "https://bob:pw@jira.example/api?token=t0k"},
	}}, nil
}

func (f fakeFindingsAdmin) RemoveIntegration(_ context.Context, r *findingsv1.RemoveIntegrationRequest) (*findingsv1.RemoveIntegrationResponse, error) {
	f.got("RemoveIntegration", r)
	return &findingsv1.RemoveIntegrationResponse{Id: r.GetId(), RemovedAt: ts}, nil
}

func (f fakeFindingsAdmin) MapIntegrationUser(_ context.Context, r *findingsv1.MapIntegrationUserRequest) (*findingsv1.MapIntegrationUserResponse, error) {
	f.got("MapIntegrationUser", r)
	return &findingsv1.MapIntegrationUserResponse{IntegrationId: r.GetIntegrationId(), ExternalUser: r.GetExternalUser(),
		UserId: r.GetUserId(), Username: "alice"}, nil
}

type fakeWebhookAdmin struct {
	findingsv1.UnimplementedWebhookAdminServiceServer
	*recorder
}

func (f fakeWebhookAdmin) AdminListWebhooks(_ context.Context, r *findingsv1.AdminListWebhooksRequest) (*findingsv1.ListWebhooksResponse, error) {
	f.got("AdminListWebhooks", r)
	return &findingsv1.ListWebhooksResponse{Total: 1, Data: []*findingsv1.Webhook{
		{Id: "wh-1", Url: "https://hooks.example/x", Description: "ops", CreatedAt: ts},
	}}, nil
}

func (f fakeWebhookAdmin) AdminListWebhookDeliveries(_ context.Context, r *findingsv1.AdminListWebhookDeliveriesRequest) (*findingsv1.ListWebhookDeliveriesResponse, error) {
	f.got("AdminListWebhookDeliveries", r)
	return &findingsv1.ListWebhookDeliveriesResponse{Total: 1, Page: r.GetPage(), Limit: r.GetLimit(), Data: []*findingsv1.WebhookDelivery{
		{Id: "d-1", WebhookId: r.GetWebhookId(), EventId: "ev-1", Event: "scan.completed", Status: "failed", Attempts: 3,
			LastStatusCode: wrapperspb.Int32(502), LastError: wrapperspb.String("bad gateway"), CreatedAt: ts, LastAttemptAt: ts},
	}}, nil
}

func (f fakeWebhookAdmin) AdminRedeliverWebhookDelivery(_ context.Context, r *findingsv1.AdminRedeliverWebhookDeliveryRequest) (*findingsv1.WebhookDelivery, error) {
	f.got("AdminRedeliverWebhookDelivery", r)
	return &findingsv1.WebhookDelivery{Id: r.GetDeliveryId(), WebhookId: "wh-1", Status: "pending", Attempts: 4, CreatedAt: ts, NextAttemptAt: ts}, nil
}

// serve starts a gRPC server on loopback holding the identity name from
// the local PKI in dir, and returns its address.
func serve(t *testing.T, dir, name string, register func(*grpc.Server)) string {
	t.Helper()
	id, err := mtls.Load(mtls.Files{CA: dir + "/ca.crt", Cert: dir + "/" + name + ".crt", Key: dir + "/" + name + ".key"}, name)
	require.NoError(t, err)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := grpc.NewServer(grpc.Creds(credentials.NewTLS(id.ServerConfig())))
	register(s)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return lis.Addr().String()
}

// admins starts an auth admin server and a findings admin server over
// mTLS, as the operator reaches them, and returns the address flags that
// point vulnscanctl at them.
func admins(t *testing.T) (*recorder, []string) {
	dir := t.TempDir()
	require.NoError(t, mtls.Generate(dir, mtls.Auth, mtls.Findings, mtls.Operator))
	t.Setenv("VULNSCAN_PKI_DIR", dir)
	rec := &recorder{last: map[string]proto.Message{}}
	authAddr := serve(t, dir, mtls.Auth, func(s *grpc.Server) {
		authv1.RegisterAuthAdminServiceServer(s, fakeAuthAdmin{recorder: rec})
	})
	findingsAddr := serve(t, dir, mtls.Findings, func(s *grpc.Server) {
		findingsv1.RegisterFindingsIntakeServiceServer(s, fakeIntake{recorder: rec})
		findingsv1.RegisterFindingsAdminServiceServer(s, fakeFindingsAdmin{recorder: rec})
		findingsv1.RegisterWebhookAdminServiceServer(s, fakeWebhookAdmin{recorder: rec})
	})
	return rec, []string{"--auth-addr", authAddr, "--findings-addr", findingsAddr}
}

// Every command turns its flags into the request of its RPC and prints the
// answer as exactly one JSON object.
func TestCommandsAgainstAdminServers(t *testing.T) {
	rec, addrs := admins(t)
	t.Setenv("CTL_TEST_TOKEN", "ghp_token")
	t.Setenv("CTL_TEST_SECRET", "hmac")
	t.Setenv("CTL_TEST_INBOUND", "chosen-inbound")

	for _, tc := range []struct {
		name   string
		args   []string
		method string
		req    proto.Message // the request the service must receive
		out    string        // the JSON vulnscanctl must print
	}{
		{"org create", []string{"org", "create", "--name", "acme", "--credits", "50", "--verification", "manual"},
			"CreateOrganization", &authv1.CreateOrganizationRequest{Name: "acme", Credits: 50, VerificationMode: "manual"},
			`{"org_id":"org-1","user_id":"user-1"}`},
		{"org create defaults to auto verification", []string{"org", "create", "--name", "acme"},
			"CreateOrganization", &authv1.CreateOrganizationRequest{Name: "acme", VerificationMode: "auto"},
			`{"org_id":"org-1","user_id":"user-1"}`},
		{"org list", []string{"org", "list"}, "ListOrganizations", &authv1.ListOrganizationsRequest{},
			`{"data":[{"org_id":"org-1","name":"acme","verification_mode":"manual","balance":7,"created_at":"` + t0JSON + `"}],"total":1}`},
		{"user create", []string{"user", "create", "--org", "o", "--username", "bob"},
			"CreateUser", &authv1.CreateUserRequest{OrgId: "o", Username: "bob"}, `{"user_id":"user-2"}`},
		{"key create trims and splits scopes", []string{"key", "create", "--org", "o", "--scopes", " read, ,write ", "--name", "ci", "--user", "u"},
			"IssueAPIKey", &authv1.IssueAPIKeyRequest{OrgId: "o", UserId: "u", Name: "ci", Scopes: []string{"read", "write"}},
			`{"expires_at":null,"id":"key-1","key":"vs_secret","scopes":["read","write"]}`},
		{"key revoke", []string{"key", "revoke", "--id", "k"}, "AdminRevokeAPIKey", &authv1.AdminRevokeAPIKeyRequest{Id: "k"},
			`{"id":"k","revoked_at":"` + t0JSON + `"}`},
		{"key list", []string{"key", "list", "--org", "o"}, "AdminListAPIKeys", &authv1.AdminListAPIKeysRequest{OrgId: "o"},
			`{"data":[{"created_at":"` + t0JSON + `","expires_at":null,"id":"key-1","name":"ci","prefix":"vs_ab","revoked_at":"` + t0JSON +
				`","scopes":["read"],"user_id":"user-1"}],"total":1}`},
		{"credits grant", []string{"credits", "grant", "--org", "o", "--amount", "25"}, "GrantCredits",
			&authv1.GrantCreditsRequest{OrgId: "o", Amount: 25}, `{"balance":125,"org_id":"o"}`},
		{"credits show", []string{"credits", "show", "--org", "o"}, "GetBalance", &authv1.GetBalanceRequest{OrgId: "o"},
			`{"balance":42,"org_id":"o"}`},
		{"repo connect reads the token from the environment", []string{"repo", "connect", "--org", "o", "--url", "https://git.example/r",
			"--clone-url", "https://mirror.example/r", "--token-env", "CTL_TEST_TOKEN", "--default-branch", "dev"}, "ConnectRepo",
			&authv1.ConnectRepoRequest{OrgId: "o", Url: "https://git.example/r", CloneUrl: "https://mirror.example/r", Token: "ghp_token", DefaultBranch: "dev"},
			`{"id":"repo-1","url":"https://git.example/r"}`},
		{"finding list by scan", []string{"finding", "list", "--scan", "s"}, "ListFindingsForOperator",
			&findingsv1.ListFindingsForOperatorRequest{ScanId: "s"},
			`{"data":[{"affected_file":"a.go","category":"sast","confidence":"low","fingerprint":"fp","found_at":"` + t0JSON +
				`","id":"f-1","reasons":[],"severity":"high","start_line":12,"state":"open","title":"SQL injection","verification_status":"pending"}]}`},
		{"finding list pending of an org", []string{"finding", "list", "--org", "o", "--pending", "--include-unverified"}, "ListFindingsForOperator",
			&findingsv1.ListFindingsForOperatorRequest{OrgId: "o", IncludeUnverified: true, VerificationStatus: "pending"}, ""},
		{"finding approve", []string{"finding", "approve", "--id", "f"}, "ApproveFinding", &findingsv1.ApproveFindingRequest{Id: "f"},
			`{"id":"f","verification_status":"approved"}`},
		{"finding reject", []string{"finding", "reject", "--id", "f"}, "RejectFinding", &findingsv1.RejectFindingRequest{Id: "f"},
			`{"id":"f","verification_status":"rejected"}`},
		{"integration add shows a generated inbound secret once", []string{"integration", "add", "--org", "o", "--kind", "jira",
			"--url", "https://jira.example", "--project", "SEC", "--token-env", "CTL_TEST_TOKEN", "--secret-env", "CTL_TEST_SECRET"},
			"AddIntegration", &findingsv1.AddIntegrationRequest{OrgId: "o", Kind: "jira", Url: "https://jira.example", Project: "SEC",
				Token: "ghp_token", Secret: "hmac"},
			`{"created_at":"` + t0JSON + `","has_inbound_secret":true,"has_secret":true,"has_token":true,"id":"int-1","inbound_secret":"generated-inbound",` +
				`"kind":"jira","name":"","org_id":"o","project":"SEC","url":"https://jira.example"}`},
		{"integration add never echoes a chosen inbound secret", []string{"integration", "add", "--org", "o", "--kind", "github",
			"--url", "https://api.github.example", "--inbound-secret-env", "CTL_TEST_INBOUND"},
			"AddIntegration", &findingsv1.AddIntegrationRequest{OrgId: "o", Kind: "github", Url: "https://api.github.example", InboundSecret: "chosen-inbound"},
			`{"created_at":"` + t0JSON + `","has_inbound_secret":true,"has_secret":false,"has_token":false,"id":"int-1",` +
				`"kind":"github","name":"","org_id":"o","project":"","url":"https://api.github.example"}`},
		{"integration list redacts what an older service leaks", []string{"integration", "list", "--org", "o"}, "ListIntegrations",
			&findingsv1.ListIntegrationsRequest{OrgId: "o"},
			`{"data":[{"created_at":null,"has_inbound_secret":false,"has_secret":false,"has_token":false,"id":"int-2","kind":"slack","name":"","org_id":"o","project":"","url":"https://hooks.slack.example/REDACTED"},` +
				`{"created_at":null,"has_inbound_secret":false,"has_secret":false,"has_token":false,"id":"int-3","kind":"jira","name":"","org_id":"o","project":"","url":"https://REDACTED@jira.example/api?REDACTED"}]}`},
		{"integration map-user", []string{"integration", "map-user", "--id", "i", "--external-user", "octo", "--user", "u"}, "MapIntegrationUser",
			&findingsv1.MapIntegrationUserRequest{IntegrationId: "i", ExternalUser: "octo", UserId: "u"},
			`{"external_user":"octo","integration_id":"i","user_id":"u","username":"alice"}`},
		{"integration remove", []string{"integration", "remove", "--id", "i"}, "RemoveIntegration", &findingsv1.RemoveIntegrationRequest{Id: "i"},
			`{"id":"i","removed_at":"` + t0JSON + `"}`},
		{"webhook list", []string{"webhook", "list", "--org", "o"}, "AdminListWebhooks", &findingsv1.AdminListWebhooksRequest{OrgId: "o"},
			`{"data":[{"created_at":"` + t0JSON + `","description":"ops","events":[],"id":"wh-1","url":"https://hooks.example/x"}],"total":1}`},
		{"webhook deliveries by leading id", []string{"webhook", "deliveries", "wh-9", "--page", "2", "--limit", "10"}, "AdminListWebhookDeliveries",
			&findingsv1.AdminListWebhookDeliveriesRequest{WebhookId: "wh-9", Page: 2, Limit: 10},
			`{"data":[{"attempts":3,"created_at":"` + t0JSON + `","delivered_at":null,"event":"scan.completed","event_id":"ev-1","id":"d-1",` +
				`"last_attempt_at":"` + t0JSON + `","last_error":"bad gateway","last_status_code":502,"next_attempt_at":null,"status":"failed","webhook_id":"wh-9"}],` +
				`"limit":10,"page":2,"total":1}`},
		{"webhook deliveries by flag with default paging", []string{"webhook", "deliveries", "--webhook", "wh-8"}, "AdminListWebhookDeliveries",
			&findingsv1.AdminListWebhookDeliveriesRequest{WebhookId: "wh-8", Page: 1, Limit: 50}, ""},
		{"webhook redeliver", []string{"webhook", "redeliver", "--delivery", "d-7"}, "AdminRedeliverWebhookDelivery",
			&findingsv1.AdminRedeliverWebhookDeliveryRequest{DeliveryId: "d-7"},
			`{"attempts":4,"created_at":"` + t0JSON + `","delivered_at":null,"event":"","event_id":"","id":"d-7","last_attempt_at":null,` +
				`"last_error":null,"last_status_code":null,"next_attempt_at":"` + t0JSON + `","status":"pending","webhook_id":"wh-1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(append(tc.args, addrs...)...)
			require.Equal(t, 0, code, errOut)
			require.Empty(t, errOut)
			require.Truef(t, proto.Equal(tc.req, rec.request(tc.method)), "request: got %v, want %v", rec.request(tc.method), tc.req)
			var v map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &v), "one JSON object: %s", out)
			if tc.out != "" {
				require.JSONEq(t, tc.out, out)
			}
		})
	}
}

// key create --expires-in sends an expiry that far from now; a day suffix
// counts days.
func TestKeyCreateExpiry(t *testing.T) {
	rec, addrs := admins(t)
	before := time.Now()
	code, out, errOut := run(append([]string{"key", "create", "--org", "o", "--scopes", "read", "--expires-in", "30d"}, addrs...)...)
	require.Equal(t, 0, code, errOut)
	got := rec.request("IssueAPIKey").(*authv1.IssueAPIKeyRequest).GetExpiresAt().AsTime()
	require.False(t, got.Before(before.Add(30*24*time.Hour)))
	require.False(t, got.After(time.Now().Add(30*24*time.Hour)))
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	require.Equal(t, got.UTC().Format(time.RFC3339Nano), v["expires_at"])
}

// Mistakes in a command line are usage errors (exit 2) that reach no
// service; a service's refusal is exit 1 with its message and code.
func TestCommandFailures(t *testing.T) {
	rec, addrs := admins(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"service refusal", []string{"key", "revoke", "--id", "missing"}, 1, "key not found (NotFound)"},
		{"bad expiry", []string{"key", "create", "--org", "o", "--scopes", "read", "--expires-in", "0d"}, 1, `--expires-in: invalid duration "0d"`},
		{"unset token variable", []string{"repo", "connect", "--org", "o", "--url", "u", "--token-env", "CTL_TEST_UNSET"}, 1,
			"--token-env: variable CTL_TEST_UNSET is not set"},
		{"unset inbound secret variable", []string{"integration", "add", "--org", "o", "--kind", "slack", "--url", "u",
			"--inbound-secret-env", "CTL_TEST_UNSET"}, 1, "--inbound-secret-env: variable CTL_TEST_UNSET is not set"},
		{"finding list needs a scope", []string{"finding", "list"}, 1, "give exactly one of --scan and --org"},
		{"finding list takes one scope", []string{"finding", "list", "--scan", "s", "--org", "o"}, 1, "give exactly one of --scan and --org"},
		{"deliveries without a webhook", []string{"webhook", "deliveries"}, 2, "--webhook is required"},
		{"redeliver without a delivery", []string{"webhook", "redeliver"}, 2, "--delivery is required"},
		{"stray argument", []string{"org", "list", "extra"}, 2, `unexpected argument "extra"`},
		{"non-numeric amount", []string{"credits", "grant", "--org", "o", "--amount", "lots"}, 2, "usage: vulnscanctl credits grant"},
		{"map-user needs every flag", []string{"integration", "map-user", "--id", "i", "--user", "u"}, 2, "--external-user is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(append(tc.args, addrs...)...)
			require.Equal(t, tc.code, code, errOut)
			require.Empty(t, out)
			require.Contains(t, errOut, tc.err)
		})
	}
	for _, m := range []string{"IssueAPIKey", "ConnectRepo", "AddIntegration", "ListFindingsForOperator", "AdminListWebhookDeliveries",
		"AdminRedeliverWebhookDelivery", "ListOrganizations", "GrantCredits", "MapIntegrationUser"} {
		require.Nil(t, rec.request(m), "%s was called by a failing command line", m)
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30d", 30 * 24 * time.Hour, true},
		{"1d", 24 * time.Hour, true},
		{"720h", 720 * time.Hour, true},
		{"90m", 90 * time.Minute, true},
		{"0d", 0, false},
		{"-1d", 0, false},
		{"xd", 0, false},
		{"0s", 0, false},
		{"-5h", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	} {
		d, err := ParseDuration(tc.in)
		if !tc.ok {
			require.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, d, tc.in)
	}
}

func TestLeadingID(t *testing.T) {
	for _, tc := range []struct {
		args []string
		id   string
		rest []string
	}{
		{nil, "", nil},
		{[]string{"d-1"}, "d-1", []string{}},
		{[]string{"d-1", "--page", "2"}, "d-1", []string{"--page", "2"}},
		{[]string{"--delivery", "d-1"}, "", []string{"--delivery", "d-1"}},
	} {
		id, rest := leadingID(tc.args)
		require.Equal(t, tc.id, id)
		require.Equal(t, tc.rest, rest)
	}
}
