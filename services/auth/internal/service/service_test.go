package service

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/apikey"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/pkg/keycache"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	"github.com/vulnscan/vulnscan/services/auth/internal/store"
)

// newService builds the service over a private database. Redis points at a
// closed port: revocations must commit without it (the outbox publishes
// them later).
func newService(t *testing.T) (*Service, string, string) {
	t.Helper()
	return newServiceWith(t, redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond}))
}

// newServiceWith builds the service over a private database and rdb, with
// a sealing key of its own and one organization "org" with its owner.
func newServiceWith(t *testing.T, rdb *redis.Client) (*Service, string, string) {
	t.Helper()
	t.Cleanup(func() { _ = rdb.Close() })
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	box, err := secretbox.New(raw)
	require.NoError(t, err)
	s := &Service{Store: &store.Store{Pool: dbtest.Migrated(t, "auth_service", store.Migrate)}, Redis: rdb, Box: box,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxActiveKeys: 10}
	org, user, err := s.Store.CreateOrg(context.Background(), "org", "auto", "owner", 0)
	require.NoError(t, err)
	return s, org, user
}

func verify(t *testing.T, in *Internal, key string) *authv1.VerifyAPIKeyResponse {
	t.Helper()
	r, err := in.VerifyAPIKey(context.Background(), &authv1.VerifyAPIKeyRequest{KeyHash: apikey.Hash(key)})
	require.NoError(t, err)
	return r
}

func httpStatus(err error) int {
	var e *apierr.Error
	if !errors.As(err, &e) {
		return 0
	}
	return e.Status
}

func TestKeysCreateVerifyRevoke(t *testing.T) {
	t.Parallel()
	s, org, user := newService(t)
	pub, in := &Public{Service: s}, &Internal{Service: s}
	ctx := context.Background()

	root, rootKey, err := s.issueKey(ctx, org, user, "root", []string{principal.ScopeRead, principal.ScopeWrite}, nil)
	require.NoError(t, err)
	v := verify(t, in, rootKey)
	require.Equal(t, keycache.StatusActive, v.GetStatus())
	require.Equal(t, org, v.GetOrgId())
	require.Equal(t, root.ID, v.GetKeyId())

	caller := principal.With(ctx, principal.Principal{OrgID: org, UserID: user, KeyID: root.ID, Scopes: root.Scopes})
	child, err := pub.CreateAPIKey(caller, &authv1.CreateAPIKeyRequest{Name: "ci", Scopes: []string{"read", "read"}})
	require.NoError(t, err)
	require.Equal(t, []string{"read"}, child.GetScopes())
	require.True(t, apikey.WellFormed(child.GetKey()))
	v = verify(t, in, child.GetKey())
	require.Equal(t, keycache.StatusActive, v.GetStatus())
	require.Equal(t, []string{"read"}, v.GetScopes())

	// A read key cannot hand out write.
	reader := principal.With(ctx, principal.Principal{OrgID: org, UserID: user, KeyID: child.GetId(), Scopes: []string{"read"}})
	_, err = pub.CreateAPIKey(reader, &authv1.CreateAPIKeyRequest{Name: "x", Scopes: []string{"write"}})
	require.Equal(t, http.StatusForbidden, httpStatus(err), "%v", err)

	// Bad input names the field.
	for field, req := range map[string]*authv1.CreateAPIKeyRequest{
		"scopes":     {Name: "x", Scopes: nil},
		"scope":      {Name: "x", Scopes: []string{"admin"}},
		"expires_at": {Name: "x", Scopes: []string{"read"}, ExpiresAt: "tomorrow"},
	} {
		_, err = pub.CreateAPIKey(caller, req)
		require.Equal(t, http.StatusBadRequest, httpStatus(err), "%v", req)
		require.ErrorContains(t, err, field)
	}

	// Revoking the parent revokes the child, with Redis down.
	_, err = pub.RevokeAPIKey(caller, &authv1.RevokeAPIKeyRequest{Id: root.ID})
	require.NoError(t, err)
	require.Equal(t, keycache.StatusRevoked, verify(t, in, rootKey).GetStatus())
	require.Equal(t, keycache.StatusRevoked, verify(t, in, child.GetKey()).GetStatus())
	pending, err := s.Store.PendingRevocations(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, pending, "announcements wait for Redis")

	// A revoked key creates nothing; another organization's id is not found.
	_, err = pub.CreateAPIKey(caller, &authv1.CreateAPIKeyRequest{Name: "late", Scopes: []string{"read"}})
	require.Equal(t, http.StatusUnauthorized, httpStatus(err), "%v", err)
	other := principal.With(ctx, principal.Principal{OrgID: "00000000-0000-4000-8000-000000000009", UserID: user, KeyID: root.ID, Scopes: root.Scopes})
	_, err = pub.RevokeAPIKey(other, &authv1.RevokeAPIKeyRequest{Id: child.GetId()})
	require.Equal(t, http.StatusNotFound, httpStatus(err), "%v", err)

	// Unknown and expired keys.
	unknown, _, _, err := apikey.Generate()
	require.NoError(t, err)
	require.Equal(t, keycache.StatusUnknown, verify(t, in, unknown).GetStatus())
	_, expKey, err := s.issueKey(ctx, org, user, "short", []string{"read"}, nil)
	require.NoError(t, err)
	_, err = s.Store.Pool.Exec(ctx, `UPDATE auth.api_keys SET expires_at = now() - interval '1 second' WHERE key_hash = $1`, apikey.Hash(expKey))
	require.NoError(t, err)
	require.Equal(t, keycache.StatusExpired, verify(t, in, expKey).GetStatus())
	_, err = in.VerifyAPIKey(ctx, &authv1.VerifyAPIKeyRequest{KeyHash: "short"})
	require.Equal(t, http.StatusBadRequest, httpStatus(err))
}

func TestChildKeyInheritsExpiry(t *testing.T) {
	t.Parallel()
	s, org, user := newService(t)
	pub := &Public{Service: s}
	ctx := context.Background()
	exp := time.Now().Add(time.Hour).Truncate(time.Second)
	root, _, err := s.issueKey(ctx, org, user, "root", []string{"write"}, &exp)
	require.NoError(t, err)
	caller := principal.With(ctx, principal.Principal{OrgID: org, UserID: user, KeyID: root.ID, Scopes: root.Scopes})

	child, err := pub.CreateAPIKey(caller, &authv1.CreateAPIKeyRequest{Name: "c", Scopes: []string{"read"}})
	require.NoError(t, err)
	require.True(t, child.GetExpiresAt().AsTime().Equal(exp), "without expires_at the child takes its parent's expiry")

	_, err = pub.CreateAPIKey(caller, &authv1.CreateAPIKeyRequest{Name: "c", Scopes: []string{"read"},
		ExpiresAt: exp.Add(time.Minute).UTC().Format(time.RFC3339)})
	require.Equal(t, http.StatusBadRequest, httpStatus(err), "%v", err)
	require.ErrorContains(t, err, "expires_at")
}

func TestCreditsOverTheInternalAPI(t *testing.T) {
	t.Parallel()
	s, org, _ := newService(t)
	in := &Internal{Service: s}
	ctx := context.Background()
	_, err := s.Store.Grant(ctx, org, 5)
	require.NoError(t, err)

	for _, tc := range []struct {
		name   string
		req    *authv1.DebitCreditsRequest
		status int
	}{
		{"bad org id", &authv1.DebitCreditsRequest{OrgId: "x", Amount: 1, Reference: "r"}, http.StatusBadRequest},
		{"zero amount", &authv1.DebitCreditsRequest{OrgId: org, Amount: 0, Reference: "r"}, http.StatusBadRequest},
		{"negative amount", &authv1.DebitCreditsRequest{OrgId: org, Amount: -3, Reference: "r"}, http.StatusBadRequest},
		{"no reference", &authv1.DebitCreditsRequest{OrgId: org, Amount: 1}, http.StatusBadRequest},
		{"unknown org", &authv1.DebitCreditsRequest{OrgId: "00000000-0000-4000-8000-000000000009", Amount: 1, Reference: "r"}, http.StatusNotFound},
		{"more than the balance", &authv1.DebitCreditsRequest{OrgId: org, Amount: 6, Reference: "r"}, http.StatusPaymentRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := in.DebitCredits(ctx, tc.req)
			require.Equal(t, tc.status, httpStatus(err), "%v", err)
		})
	}
	d, err := in.DebitCredits(ctx, &authv1.DebitCreditsRequest{OrgId: org, Amount: 5, Reference: "scan-1"})
	require.NoError(t, err)
	require.True(t, d.GetApplied())
	require.Zero(t, d.GetBalance())
	d, err = in.DebitCredits(ctx, &authv1.DebitCreditsRequest{OrgId: org, Amount: 5, Reference: "scan-1"})
	require.NoError(t, err)
	require.False(t, d.GetApplied(), "a retried debit takes nothing")
	for range 2 {
		r, err := in.RefundCredits(ctx, &authv1.RefundCreditsRequest{OrgId: org, Reference: "scan-1"})
		require.NoError(t, err)
		require.Equal(t, int32(5), r.GetBalance())
	}
	_, err = in.RefundCredits(ctx, &authv1.RefundCreditsRequest{OrgId: org})
	require.Equal(t, http.StatusBadRequest, httpStatus(err))
}
