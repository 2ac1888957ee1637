package service

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/vulnscan/vulnscan/pkg/apikey"
	"github.com/vulnscan/vulnscan/pkg/keycache"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
)

const unknownID = "00000000-0000-4000-8000-000000000009"

// rejection is a call that must fail with code, its message naming want.
type rejection struct {
	name string
	call func(context.Context) (any, error)
	code codes.Code
	want string
}

func requireRejections(t *testing.T, cases []rejection) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.call(context.Background())
			require.Error(t, err)
			require.Equal(t, tc.code, status.Code(err), "%v", err)
			require.Contains(t, status.Convert(err).Message(), tc.want)
		})
	}
}

func TestAdminRejections(t *testing.T) {
	t.Parallel()
	s, org, user := newService(t)
	a := &Admin{Service: s}
	other, otherUser, err := s.Store.CreateOrg(context.Background(), "other", "auto", "owner", 0)
	require.NoError(t, err)
	_ = other
	past := timestamppb.New(time.Now().Add(-time.Minute))
	long := strings.Repeat("n", 201)

	requireRejections(t, []rejection{
		{"organization without a name", func(ctx context.Context) (any, error) {
			return a.CreateOrganization(ctx, &authv1.CreateOrganizationRequest{Name: "  "})
		}, codes.InvalidArgument, "name is required"},
		{"organization name too long", func(ctx context.Context) (any, error) {
			return a.CreateOrganization(ctx, &authv1.CreateOrganizationRequest{Name: long})
		}, codes.InvalidArgument, "name must be at most 200"},
		{"negative opening credits", func(ctx context.Context) (any, error) {
			return a.CreateOrganization(ctx, &authv1.CreateOrganizationRequest{Name: "x", Credits: -1})
		}, codes.InvalidArgument, "credits"},
		{"unknown verification mode", func(ctx context.Context) (any, error) {
			return a.CreateOrganization(ctx, &authv1.CreateOrganizationRequest{Name: "x", VerificationMode: "lazy"})
		}, codes.InvalidArgument, "verification must be one of: auto, manual"},
		{"duplicate organization", func(ctx context.Context) (any, error) {
			return a.CreateOrganization(ctx, &authv1.CreateOrganizationRequest{Name: " org "})
		}, codes.AlreadyExists, `organization "org" already exists`},

		{"user in a malformed organization id", func(ctx context.Context) (any, error) {
			return a.CreateUser(ctx, &authv1.CreateUserRequest{OrgId: "nope", Username: "bob"})
		}, codes.InvalidArgument, "org must be a valid UUID"},
		{"user in an unknown organization", func(ctx context.Context) (any, error) {
			return a.CreateUser(ctx, &authv1.CreateUserRequest{OrgId: unknownID, Username: "bob"})
		}, codes.NotFound, "Organization not found"},
		{"user without a name", func(ctx context.Context) (any, error) {
			return a.CreateUser(ctx, &authv1.CreateUserRequest{OrgId: org})
		}, codes.InvalidArgument, "username is required"},
		{"username too long", func(ctx context.Context) (any, error) {
			return a.CreateUser(ctx, &authv1.CreateUserRequest{OrgId: org, Username: long})
		}, codes.InvalidArgument, "username must be at most 100"},
		{"duplicate user", func(ctx context.Context) (any, error) {
			return a.CreateUser(ctx, &authv1.CreateUserRequest{OrgId: org, Username: "owner"})
		}, codes.AlreadyExists, `user "owner" already exists`},

		{"key without an organization", func(ctx context.Context) (any, error) {
			return a.IssueAPIKey(ctx, &authv1.IssueAPIKeyRequest{Scopes: []string{"read"}})
		}, codes.InvalidArgument, "org is required"},
		{"key for a malformed user id", func(ctx context.Context) (any, error) {
			return a.IssueAPIKey(ctx, &authv1.IssueAPIKeyRequest{OrgId: org, UserId: "bob", Scopes: []string{"read"}})
		}, codes.InvalidArgument, "user must be a valid UUID"},
		{"key for an unknown user", func(ctx context.Context) (any, error) {
			return a.IssueAPIKey(ctx, &authv1.IssueAPIKeyRequest{OrgId: org, UserId: unknownID, Scopes: []string{"read"}})
		}, codes.NotFound, "User not found in the organization"},
		{"key for another organization's user", func(ctx context.Context) (any, error) {
			return a.IssueAPIKey(ctx, &authv1.IssueAPIKeyRequest{OrgId: org, UserId: otherUser, Scopes: []string{"read"}})
		}, codes.NotFound, "User not found in the organization"},
		{"key without scopes", func(ctx context.Context) (any, error) {
			return a.IssueAPIKey(ctx, &authv1.IssueAPIKeyRequest{OrgId: org, UserId: user})
		}, codes.InvalidArgument, "scopes must contain"},
		{"key with an unknown scope", func(ctx context.Context) (any, error) {
			return a.IssueAPIKey(ctx, &authv1.IssueAPIKeyRequest{OrgId: org, Scopes: []string{"read", "admin"}})
		}, codes.InvalidArgument, `unknown scope "admin"`},
		{"key name too long", func(ctx context.Context) (any, error) {
			return a.IssueAPIKey(ctx, &authv1.IssueAPIKeyRequest{OrgId: org, Name: long, Scopes: []string{"read"}})
		}, codes.InvalidArgument, "name must be at most 100"},
		{"key expiring in the past", func(ctx context.Context) (any, error) {
			return a.IssueAPIKey(ctx, &authv1.IssueAPIKeyRequest{OrgId: org, Scopes: []string{"read"}, ExpiresAt: past})
		}, codes.InvalidArgument, "expires_at must be in the future"},
		{"key with an invalid expiry", func(ctx context.Context) (any, error) {
			return a.IssueAPIKey(ctx, &authv1.IssueAPIKeyRequest{OrgId: org, Scopes: []string{"read"},
				ExpiresAt: &timestamppb.Timestamp{Seconds: 1, Nanos: -1}})
		}, codes.InvalidArgument, "expires_at must be a valid"},

		{"revoke a malformed id", func(ctx context.Context) (any, error) {
			return a.AdminRevokeAPIKey(ctx, &authv1.AdminRevokeAPIKeyRequest{Id: "k1"})
		}, codes.InvalidArgument, "id must be a valid UUID"},
		{"revoke an unknown key", func(ctx context.Context) (any, error) {
			return a.AdminRevokeAPIKey(ctx, &authv1.AdminRevokeAPIKeyRequest{Id: unknownID})
		}, codes.NotFound, "API key not found"},

		{"grant to a malformed organization id", func(ctx context.Context) (any, error) {
			return a.GrantCredits(ctx, &authv1.GrantCreditsRequest{OrgId: "x", Amount: 1})
		}, codes.InvalidArgument, "org must be a valid UUID"},
		{"grant nothing", func(ctx context.Context) (any, error) {
			return a.GrantCredits(ctx, &authv1.GrantCreditsRequest{OrgId: org})
		}, codes.InvalidArgument, "amount must be positive"},
		{"grant a negative amount", func(ctx context.Context) (any, error) {
			return a.GrantCredits(ctx, &authv1.GrantCreditsRequest{OrgId: org, Amount: -5})
		}, codes.InvalidArgument, "amount must be positive"},
		{"grant to an unknown organization", func(ctx context.Context) (any, error) {
			return a.GrantCredits(ctx, &authv1.GrantCreditsRequest{OrgId: unknownID, Amount: 1})
		}, codes.NotFound, "Organization not found"},
		{"balance of a malformed organization id", func(ctx context.Context) (any, error) {
			return a.GetBalance(ctx, &authv1.GetBalanceRequest{})
		}, codes.InvalidArgument, "org is required"},
		{"balance of an unknown organization", func(ctx context.Context) (any, error) {
			return a.GetBalance(ctx, &authv1.GetBalanceRequest{OrgId: unknownID})
		}, codes.NotFound, "Organization not found"},

		{"repository of an unknown organization", func(ctx context.Context) (any, error) {
			return a.ConnectRepo(ctx, &authv1.ConnectRepoRequest{OrgId: unknownID, Url: "https://example.com/a/b"})
		}, codes.NotFound, "Organization not found"},
		{"repository over plain http", func(ctx context.Context) (any, error) {
			return a.ConnectRepo(ctx, &authv1.ConnectRepoRequest{OrgId: org, Url: "http://example.com/a/b"})
		}, codes.InvalidArgument, "url must use https"},
		{"repository URL with credentials", func(ctx context.Context) (any, error) {
			return a.ConnectRepo(ctx, &authv1.ConnectRepoRequest{OrgId: org, Url: "https://me:pw@example.com/a/b"})
		}, codes.InvalidArgument, "url must not contain credentials"},
		{"clone URL that is not a URL", func(ctx context.Context) (any, error) {
			return a.ConnectRepo(ctx, &authv1.ConnectRepoRequest{OrgId: org, Url: "https://example.com/a/b", CloneUrl: "a/b"})
		}, codes.InvalidArgument, "clone_url is not a valid absolute URL"},
		{"keys of an unknown organization", func(ctx context.Context) (any, error) {
			return a.AdminListAPIKeys(ctx, &authv1.AdminListAPIKeysRequest{OrgId: unknownID})
		}, codes.NotFound, "Organization not found"},
	})

	// None of the refusals left anything behind.
	orgs, err := a.ListOrganizations(context.Background(), &authv1.ListOrganizationsRequest{})
	require.NoError(t, err)
	require.EqualValues(t, 2, orgs.GetTotal())
	keys, err := a.AdminListAPIKeys(context.Background(), &authv1.AdminListAPIKeysRequest{OrgId: org})
	require.NoError(t, err)
	require.Empty(t, keys.GetData())
}

func TestAdminOrganizationsUsersAndCredits(t *testing.T) {
	t.Parallel()
	s, _, _ := newService(t)
	a := &Admin{Service: s}
	ctx := context.Background()

	created, err := a.CreateOrganization(ctx, &authv1.CreateOrganizationRequest{Name: "  acme  ", Credits: 12})
	require.NoError(t, err)
	o, err := s.Store.GetOrg(ctx, created.GetOrgId())
	require.NoError(t, err)
	require.Equal(t, "acme", o.Name, "the name is trimmed")
	require.Equal(t, "auto", o.VerificationMode, "verification defaults to auto")
	owner, err := s.Store.OwnerOf(ctx, created.GetOrgId())
	require.NoError(t, err)
	require.Equal(t, created.GetUserId(), owner)

	manual, err := a.CreateOrganization(ctx, &authv1.CreateOrganizationRequest{Name: "strict", VerificationMode: "manual"})
	require.NoError(t, err)

	bob, err := a.CreateUser(ctx, &authv1.CreateUserRequest{OrgId: created.GetOrgId(), Username: " bob "})
	require.NoError(t, err)
	u, err := s.Store.GetUser(ctx, bob.GetUserId())
	require.NoError(t, err)
	require.Equal(t, "bob", u.Username)
	require.Equal(t, created.GetOrgId(), u.OrgID)

	bal, err := a.GetBalance(ctx, &authv1.GetBalanceRequest{OrgId: created.GetOrgId()})
	require.NoError(t, err)
	require.EqualValues(t, 12, bal.GetBalance())
	g, err := a.GrantCredits(ctx, &authv1.GrantCreditsRequest{OrgId: created.GetOrgId(), Amount: 30})
	require.NoError(t, err)
	require.Equal(t, created.GetOrgId(), g.GetOrgId())
	require.EqualValues(t, 42, g.GetBalance())

	list, err := a.ListOrganizations(ctx, &authv1.ListOrganizationsRequest{})
	require.NoError(t, err)
	require.EqualValues(t, 3, list.GetTotal())
	require.Len(t, list.GetData(), 3)
	byName := map[string]*authv1.Organization{}
	for _, o := range list.GetData() {
		byName[o.GetName()] = o
		require.NotNil(t, o.GetCreatedAt())
	}
	require.Equal(t, created.GetOrgId(), byName["acme"].GetId())
	require.EqualValues(t, 42, byName["acme"].GetBalance())
	require.Equal(t, manual.GetOrgId(), byName["strict"].GetId())
	require.Equal(t, "manual", byName["strict"].GetVerificationMode())
	require.Zero(t, byName["strict"].GetBalance())
}

func TestGrantPastTheLargestBalanceIsABadRequest(t *testing.T) {
	t.Parallel()
	s, org, _ := newService(t)
	a := &Admin{Service: s}
	ctx := context.Background()
	_, err := a.GrantCredits(ctx, &authv1.GrantCreditsRequest{OrgId: org, Amount: 1<<31 - 1})
	require.NoError(t, err)
	_, err = a.GrantCredits(ctx, &authv1.GrantCreditsRequest{OrgId: org, Amount: 1})
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	require.Contains(t, status.Convert(err).Message(), "amount")
	bal, err := a.GetBalance(ctx, &authv1.GetBalanceRequest{OrgId: org})
	require.NoError(t, err)
	require.EqualValues(t, 1<<31-1, bal.GetBalance())
}

func TestAdminIssuesListsAndRevokesKeys(t *testing.T) {
	t.Parallel()
	s, org, owner := newService(t)
	s.MaxActiveKeys = 2
	a, in := &Admin{Service: s}, &Internal{Service: s}
	ctx := context.Background()
	bob, err := a.CreateUser(ctx, &authv1.CreateUserRequest{OrgId: org, Username: "bob"})
	require.NoError(t, err)

	// Without a user the key is the owner's; without a name it is
	// "operator-issued".
	exp := time.Now().Add(time.Hour).Truncate(time.Second)
	first, err := a.IssueAPIKey(ctx, &authv1.IssueAPIKeyRequest{OrgId: org, Scopes: []string{"write", " read", "write"},
		ExpiresAt: timestamppb.New(exp)})
	require.NoError(t, err)
	require.True(t, apikey.WellFormed(first.GetKey()))
	require.Equal(t, []string{"read", "write"}, first.GetScopes(), "scopes are trimmed, sorted and unique")
	require.True(t, first.GetExpiresAt().AsTime().Equal(exp))
	v := verify(t, in, first.GetKey())
	require.Equal(t, keycache.StatusActive, v.GetStatus())
	require.Equal(t, owner, v.GetUserId())
	require.Equal(t, first.GetId(), v.GetKeyId())

	second, err := a.IssueAPIKey(ctx, &authv1.IssueAPIKeyRequest{OrgId: org, UserId: bob.GetUserId(), Name: "ci", Scopes: []string{"read"}})
	require.NoError(t, err)
	require.Nil(t, second.GetExpiresAt())
	require.Equal(t, bob.GetUserId(), verify(t, in, second.GetKey()).GetUserId())

	_, err = a.IssueAPIKey(ctx, &authv1.IssueAPIKeyRequest{OrgId: org, Scopes: []string{"read"}})
	require.Equal(t, codes.AlreadyExists, status.Code(err), "%v", err)
	require.Contains(t, status.Convert(err).Message(), "Maximum number of active API keys (2)")

	list, err := a.AdminListAPIKeys(ctx, &authv1.AdminListAPIKeysRequest{OrgId: org})
	require.NoError(t, err)
	require.EqualValues(t, 2, list.GetTotal())
	names := map[string]*authv1.APIKey{}
	for _, k := range list.GetData() {
		names[k.GetName()] = k
	}
	require.Equal(t, first.GetId(), names["operator-issued"].GetId())
	require.Equal(t, second.GetId(), names["ci"].GetId())
	require.Equal(t, bob.GetUserId(), names["ci"].GetUserId())
	require.Equal(t, first.GetKey()[:len(names["operator-issued"].GetPrefix())], names["operator-issued"].GetPrefix(),
		"the list shows the prefix of the key")
	require.NotContains(t, list.String(), first.GetKey(), "never the key itself")

	revoked, err := a.AdminRevokeAPIKey(ctx, &authv1.AdminRevokeAPIKeyRequest{Id: first.GetId()})
	require.NoError(t, err)
	require.Equal(t, first.GetId(), revoked.GetId())
	require.NotNil(t, revoked.GetRevokedAt())
	require.Equal(t, keycache.StatusRevoked, verify(t, in, first.GetKey()).GetStatus())

	// The revoked key frees its place and is still listed, as revoked.
	_, err = a.IssueAPIKey(ctx, &authv1.IssueAPIKeyRequest{OrgId: org, Scopes: []string{"read"}})
	require.NoError(t, err)
	list, err = a.AdminListAPIKeys(ctx, &authv1.AdminListAPIKeysRequest{OrgId: org})
	require.NoError(t, err)
	require.EqualValues(t, 3, list.GetTotal())
	for _, k := range list.GetData() {
		require.Equal(t, k.GetId() == first.GetId(), k.GetRevokedAt() != nil, "key %s", k.GetName())
	}
}
