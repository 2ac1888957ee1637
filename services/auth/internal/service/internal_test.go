package service

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vulnscan/vulnscan/pkg/apikey"
	"github.com/vulnscan/vulnscan/pkg/keycache"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
)

func TestVerifyAPIKeyReportsTheKey(t *testing.T) {
	t.Parallel()
	s, org, user := newService(t)
	in := &Internal{Service: s}
	ctx := context.Background()
	exp := time.Now().Add(time.Hour).Truncate(time.Second)
	k, key, err := s.issueKey(ctx, org, user, "ci", []string{"read"}, &exp)
	require.NoError(t, err)

	v := verify(t, in, key)
	require.Equal(t, keycache.StatusActive, v.GetStatus())
	require.Equal(t, k.ID, v.GetKeyId())
	require.Equal(t, org, v.GetOrgId())
	require.Equal(t, user, v.GetUserId())
	require.Equal(t, []string{"read"}, v.GetScopes())
	require.True(t, v.GetExpiresAt().AsTime().Equal(exp))

	// A revoked key that has also expired reads as revoked: revocation is
	// final, expiry is not the reason it stops working.
	_, err = s.Store.Pool.Exec(ctx, `UPDATE auth.api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1`, k.ID)
	require.NoError(t, err)
	require.Equal(t, keycache.StatusExpired, verify(t, in, key).GetStatus())
	_, _, err = s.Store.RevokeKey(ctx, k.ID, org)
	require.NoError(t, err)
	require.Equal(t, keycache.StatusRevoked, verify(t, in, key).GetStatus())

	for _, hash := range []string{"", "abc", strings.Repeat("a", 63), strings.Repeat("a", 65)} {
		_, err := in.VerifyAPIKey(ctx, &authv1.VerifyAPIKeyRequest{KeyHash: hash})
		require.Equal(t, codes.InvalidArgument, status.Code(err), "hash %q", hash)
	}
	unknown, err := in.VerifyAPIKey(ctx, &authv1.VerifyAPIKeyRequest{KeyHash: apikey.Hash("vsk_not_a_key")})
	require.NoError(t, err)
	require.Equal(t, keycache.StatusUnknown, unknown.GetStatus())
	require.Empty(t, unknown.GetKeyId())
}

func TestInternalLookups(t *testing.T) {
	t.Parallel()
	s, org, user := newService(t)
	in := &Internal{Service: s}
	ctx := context.Background()

	o, err := in.GetOrganization(ctx, &authv1.GetOrganizationRequest{OrgId: org})
	require.NoError(t, err)
	require.Equal(t, org, o.GetId())
	require.Equal(t, "org", o.GetName())
	require.Equal(t, "auto", o.GetVerificationMode())

	u, err := in.GetUser(ctx, &authv1.GetUserRequest{UserId: user})
	require.NoError(t, err)
	require.Equal(t, user, u.GetId())
	require.Equal(t, org, u.GetOrgId())
	require.Equal(t, "owner", u.GetUsername())

	requireRejections(t, []rejection{
		{"organization id missing", func(ctx context.Context) (any, error) {
			return in.GetOrganization(ctx, &authv1.GetOrganizationRequest{})
		}, codes.InvalidArgument, "org_id is required"},
		{"organization id malformed", func(ctx context.Context) (any, error) {
			return in.GetOrganization(ctx, &authv1.GetOrganizationRequest{OrgId: "{" + org + "}"})
		}, codes.InvalidArgument, "org_id must be a valid UUID"},
		{"unknown organization", func(ctx context.Context) (any, error) {
			return in.GetOrganization(ctx, &authv1.GetOrganizationRequest{OrgId: unknownID})
		}, codes.NotFound, "Organization not found"},
		{"user id malformed", func(ctx context.Context) (any, error) {
			return in.GetUser(ctx, &authv1.GetUserRequest{UserId: "owner"})
		}, codes.InvalidArgument, "user_id must be a valid UUID"},
		{"unknown user", func(ctx context.Context) (any, error) {
			return in.GetUser(ctx, &authv1.GetUserRequest{UserId: unknownID})
		}, codes.NotFound, "User not found"},
		{"refund without an organization", func(ctx context.Context) (any, error) {
			return in.RefundCredits(ctx, &authv1.RefundCreditsRequest{Reference: "scan:1"})
		}, codes.InvalidArgument, "org_id is required"},
		{"refund of an unknown organization", func(ctx context.Context) (any, error) {
			return in.RefundCredits(ctx, &authv1.RefundCreditsRequest{OrgId: unknownID, Reference: "scan:1"})
		}, codes.NotFound, "Organization not found"},
		{"debit past the balance", func(ctx context.Context) (any, error) {
			return in.DebitCredits(ctx, &authv1.DebitCreditsRequest{OrgId: org, Amount: 1, Reference: "scan:1"})
		}, codes.FailedPrecondition, "Insufficient credits"},
		{"repository of a malformed organization id", func(ctx context.Context) (any, error) {
			return in.GetConnectedRepo(ctx, &authv1.GetConnectedRepoRequest{OrgId: "x", Url: "https://example.com/a/b"})
		}, codes.InvalidArgument, "org_id must be a valid UUID"},
		{"repository never connected", func(ctx context.Context) (any, error) {
			return in.GetConnectedRepo(ctx, &authv1.GetConnectedRepoRequest{OrgId: org, Url: "https://example.com/a/b"})
		}, codes.NotFound, "Connected repository not found"},
	})
}

func TestCreditsDebitRefundCycle(t *testing.T) {
	t.Parallel()
	s, org, _ := newService(t)
	in := &Internal{Service: s}
	pub := &Public{Service: s}
	ctx := context.Background()
	_, err := s.Store.Grant(ctx, org, 10)
	require.NoError(t, err)
	caller := ownerCaller(t, s, org)

	type step struct {
		op       string // debit, refund
		ref      string
		amount   int32
		balance  int32
		applied  bool
		refunded int32
	}
	for i, st := range []step{
		{op: "debit", ref: "scan:a", amount: 4, balance: 6, applied: true},
		{op: "debit", ref: "scan:b", amount: 6, balance: 0, applied: true},
		{op: "debit", ref: "scan:a", amount: 4, balance: 0},
		{op: "refund", ref: "scan:b", balance: 6, refunded: 6},
		{op: "refund", ref: "scan:b", balance: 6},
		{op: "refund", ref: "scan:never", balance: 6},
		{op: "debit", ref: "scan:c", amount: 6, balance: 0, applied: true},
	} {
		switch st.op {
		case "debit":
			r, err := in.DebitCredits(ctx, &authv1.DebitCreditsRequest{OrgId: org, Amount: st.amount, Reference: st.ref})
			require.NoError(t, err, "step %d", i)
			require.Equal(t, st.applied, r.GetApplied(), "step %d", i)
			require.Equal(t, st.balance, r.GetBalance(), "step %d", i)
		case "refund":
			r, err := in.RefundCredits(ctx, &authv1.RefundCreditsRequest{OrgId: org, Reference: st.ref})
			require.NoError(t, err, "step %d", i)
			require.Equal(t, st.refunded, r.GetRefunded(), "step %d", i)
			require.Equal(t, st.balance, r.GetBalance(), "step %d", i)
		}
		c, err := pub.GetCredits(caller, &authv1.GetCreditsRequest{})
		require.NoError(t, err)
		require.Equal(t, st.balance, c.GetBalance(), "step %d: the public balance", i)
	}
}

func TestConnectedRepoTokenRoundTrip(t *testing.T) {
	t.Parallel()
	s, org, _ := newService(t)
	a, in, pub := &Admin{Service: s}, &Internal{Service: s}, &Public{Service: s}
	ctx := context.Background()

	c, err := a.ConnectRepo(ctx, &authv1.ConnectRepoRequest{OrgId: org, Url: "https://GitHub.com/acme/app.git", Token: "ghp_secret",
		DefaultBranch: "main"})
	require.NoError(t, err)
	require.Equal(t, "https://GitHub.com/acme/app.git", c.GetUrl())
	var stored []byte
	require.NoError(t, s.Store.Pool.QueryRow(ctx, `SELECT token_enc FROM auth.connected_repos WHERE id = $1`, c.GetId()).Scan(&stored))
	require.NotContains(t, string(stored), "ghp_secret", "the token is stored sealed")

	// Another spelling of the same repository finds it, and the token opens.
	r, err := in.GetConnectedRepo(ctx, &authv1.GetConnectedRepoRequest{OrgId: strings.ToUpper(org), Url: " https://github.com/acme/app/ "})
	require.NoError(t, err)
	require.Equal(t, c.GetId(), r.GetId())
	require.Equal(t, "ghp_secret", r.GetToken())
	require.Equal(t, "https://GitHub.com/acme/app.git", r.GetCloneUrl(), "the clone URL defaults to the URL")
	require.Equal(t, "main", r.GetDefaultBranch())

	// A repository without a token answers an empty one.
	_, err = a.ConnectRepo(ctx, &authv1.ConnectRepoRequest{OrgId: org, Url: "https://example.com/pub/lib", CloneUrl: "https://mirror.example/lib"})
	require.NoError(t, err)
	r, err = in.GetConnectedRepo(ctx, &authv1.GetConnectedRepoRequest{OrgId: org, Url: "https://example.com/pub/lib"})
	require.NoError(t, err)
	require.Empty(t, r.GetToken())
	require.Equal(t, "https://mirror.example/lib", r.GetCloneUrl())

	list, err := pub.ListRepos(ownerCaller(t, s, org), &authv1.ListReposRequest{})
	require.NoError(t, err)
	require.EqualValues(t, 2, list.GetTotal())
	urls := []string{list.GetData()[0].GetUrl(), list.GetData()[1].GetUrl()}
	require.ElementsMatch(t, []string{"https://GitHub.com/acme/app.git", "https://example.com/pub/lib"}, urls)

	// A sealed token moved to another row does not open there: the caller
	// gets an internal error, never the token.
	_, err = s.Store.Pool.Exec(ctx, `UPDATE auth.connected_repos SET token_enc = $1 WHERE url_key = 'https://example.com/pub/lib'`, stored)
	require.NoError(t, err)
	_, err = in.GetConnectedRepo(ctx, &authv1.GetConnectedRepoRequest{OrgId: org, Url: "https://example.com/pub/lib"})
	require.Equal(t, codes.Internal, status.Code(err), "%v", err)
	require.NotContains(t, status.Convert(err).Message(), "ghp_secret")
}
