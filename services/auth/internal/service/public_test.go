package service

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vulnscan/vulnscan/pkg/principal"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
)

// ownerCaller is the context of a public call by org's owner through a
// fresh read-write key.
func ownerCaller(t *testing.T, s *Service, org string) context.Context {
	t.Helper()
	ctx := context.Background()
	owner, err := s.Store.OwnerOf(ctx, org)
	require.NoError(t, err)
	k, _, err := s.issueKey(ctx, org, owner, "caller", []string{principal.ScopeRead, principal.ScopeWrite}, nil)
	require.NoError(t, err)
	return principal.With(ctx, principal.Principal{OrgID: org, UserID: owner, KeyID: k.ID, Scopes: k.Scopes})
}

func TestPublicCallsNeedAPrincipal(t *testing.T) {
	t.Parallel()
	s, _, _ := newService(t)
	pub := &Public{Service: s}
	for name, call := range map[string]func(context.Context) error{
		"CreateAPIKey": func(ctx context.Context) error {
			_, err := pub.CreateAPIKey(ctx, &authv1.CreateAPIKeyRequest{Name: "x", Scopes: []string{"read"}})
			return err
		},
		"ListAPIKeys": func(ctx context.Context) error {
			_, err := pub.ListAPIKeys(ctx, &authv1.ListAPIKeysRequest{})
			return err
		},
		"RevokeAPIKey": func(ctx context.Context) error {
			_, err := pub.RevokeAPIKey(ctx, &authv1.RevokeAPIKeyRequest{Id: unknownID})
			return err
		},
		"GetCredits": func(ctx context.Context) error {
			_, err := pub.GetCredits(ctx, &authv1.GetCreditsRequest{})
			return err
		},
		"ListRepos": func(ctx context.Context) error { _, err := pub.ListRepos(ctx, &authv1.ListReposRequest{}); return err },
	} {
		t.Run(name, func(t *testing.T) {
			err := call(context.Background())
			require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
			// A principal without a user is no caller either.
			err = call(principal.With(context.Background(), principal.Principal{OrgID: unknownID}))
			require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
		})
	}
}

func TestCreateAPIKeyRejections(t *testing.T) {
	t.Parallel()
	s, org, _ := newService(t)
	s.MaxActiveKeys = 2
	pub := &Public{Service: s}
	caller := ownerCaller(t, s, org)
	p, err := principal.From(caller)
	require.NoError(t, err)
	stranger := principal.With(context.Background(), principal.Principal{OrgID: unknownID, UserID: p.UserID, KeyID: p.KeyID, Scopes: p.Scopes})
	create := func(ctx context.Context, req *authv1.CreateAPIKeyRequest) func(context.Context) (any, error) {
		return func(context.Context) (any, error) { return pub.CreateAPIKey(ctx, req) }
	}
	requireRejections(t, []rejection{
		{"no name", create(caller, &authv1.CreateAPIKeyRequest{Name: " ", Scopes: []string{"read"}}),
			codes.InvalidArgument, "name is required"},
		{"name too long", create(caller, &authv1.CreateAPIKeyRequest{Name: strings.Repeat("é", 101), Scopes: []string{"read"}}),
			codes.InvalidArgument, "name must be at most 100 characters"},
		{"expiry in the past", create(caller, &authv1.CreateAPIKeyRequest{Name: "x", Scopes: []string{"read"},
			ExpiresAt: time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)}),
			codes.InvalidArgument, "expires_at must be in the future"},
		{"expiry without a zone", create(caller, &authv1.CreateAPIKeyRequest{Name: "x", Scopes: []string{"read"}, ExpiresAt: "2030-01-31T12:00:00"}),
			codes.InvalidArgument, "expires_at must be an ISO 8601 timestamp"},
		{"calling key of another organization", create(stranger, &authv1.CreateAPIKeyRequest{Name: "x", Scopes: []string{"read"}}),
			codes.Unauthenticated, "Invalid API key"},
	})

	// The caller's own key counts: one more fills the limit of two.
	k, err := pub.CreateAPIKey(caller, &authv1.CreateAPIKeyRequest{Name: "one", Scopes: []string{"read"}})
	require.NoError(t, err)
	require.Equal(t, p.UserID, k.GetUserId())
	require.Nil(t, k.GetExpiresAt(), "a key under a key without expiry need not expire")
	_, err = pub.CreateAPIKey(caller, &authv1.CreateAPIKeyRequest{Name: "two", Scopes: []string{"read"}})
	require.Equal(t, codes.AlreadyExists, status.Code(err), "%v", err)

	// A child may expire before its parent; the expiry given is kept.
	exp := time.Now().Add(48 * time.Hour).Truncate(time.Second).UTC()
	_, err = pub.RevokeAPIKey(caller, &authv1.RevokeAPIKeyRequest{Id: k.GetId()})
	require.NoError(t, err)
	short, err := pub.CreateAPIKey(caller, &authv1.CreateAPIKeyRequest{Name: "short", Scopes: []string{"write"}, ExpiresAt: exp.Format(time.RFC3339Nano)})
	require.NoError(t, err)
	require.True(t, short.GetExpiresAt().AsTime().Equal(exp))
}

func TestListAPIKeysShowsTheCallersOrganizationOnly(t *testing.T) {
	t.Parallel()
	s, org, _ := newService(t)
	pub := &Public{Service: s}
	ctx := context.Background()
	other, otherOwner, err := s.Store.CreateOrg(ctx, "other", "auto", "owner", 0)
	require.NoError(t, err)
	_, _, err = s.issueKey(ctx, other, otherOwner, "theirs", []string{"read"}, nil)
	require.NoError(t, err)

	caller := ownerCaller(t, s, org)
	created, err := pub.CreateAPIKey(caller, &authv1.CreateAPIKeyRequest{Name: "mine", Scopes: []string{"read"}})
	require.NoError(t, err)
	_, err = pub.RevokeAPIKey(caller, &authv1.RevokeAPIKeyRequest{Id: created.GetId()})
	require.NoError(t, err)

	list, err := pub.ListAPIKeys(caller, &authv1.ListAPIKeysRequest{})
	require.NoError(t, err)
	require.EqualValues(t, 2, list.GetTotal())
	require.Len(t, list.GetData(), 2)
	byName := map[string]*authv1.APIKey{}
	for _, k := range list.GetData() {
		byName[k.GetName()] = k
		require.NotNil(t, k.GetCreatedAt())
	}
	require.NotContains(t, byName, "theirs")
	require.Equal(t, created.GetId(), byName["mine"].GetId())
	require.Equal(t, created.GetPrefix(), byName["mine"].GetPrefix())
	require.NotNil(t, byName["mine"].GetRevokedAt())
	require.Nil(t, byName["caller"].GetRevokedAt())

	for _, id := range []string{"", "not-a-uuid"} {
		_, err = pub.RevokeAPIKey(caller, &authv1.RevokeAPIKeyRequest{Id: id})
		require.Equal(t, codes.InvalidArgument, status.Code(err), "id %q: %v", id, err)
	}
	_, err = pub.RevokeAPIKey(caller, &authv1.RevokeAPIKeyRequest{Id: unknownID})
	require.Equal(t, codes.NotFound, status.Code(err), "%v", err)
}
