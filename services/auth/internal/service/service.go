// Package service implements the auth service's gRPC APIs: the public one
// (keys, credits, repositories of the caller's organization), the internal
// one (key verification, credit debits and refunds, connected repository
// lookup) and the operators' one.
package service

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/apikey"
	"github.com/vulnscan/vulnscan/pkg/keycache"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/pkg/validate"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	"github.com/vulnscan/vulnscan/services/auth/internal/store"
)

// Service holds what the three APIs share.
type Service struct {
	Store         *store.Store
	Redis         redis.UniversalClient
	Box           *secretbox.Box
	Log           *slog.Logger
	MaxActiveKeys int
}

// Public serves AuthService.
type Public struct {
	authv1.UnimplementedAuthServiceServer
	*Service
}

// Internal serves AuthInternalService.
type Internal struct {
	authv1.UnimplementedAuthInternalServiceServer
	*Service
}

// Admin serves AuthAdminService.
type Admin struct {
	authv1.UnimplementedAuthAdminServiceServer
	*Service
}

var validScopes = []string{principal.ScopeRead, principal.ScopeWrite}

func ts(t *time.Time) *timestamppb.Timestamp {
	if t == nil {
		return nil
	}
	return timestamppb.New(*t)
}

// normalizeScopes validates scopes and returns them sorted without duplicates.
func normalizeScopes(in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, apierr.Invalid("scopes must contain at least one of: read, write")
	}
	var out []string
	for _, s := range in {
		s = strings.TrimSpace(s)
		if !slices.Contains(validScopes, s) {
			return nil, apierr.Invalid("scopes: unknown scope %q (allowed: read, write)", s)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out, nil
}

func validateKeyName(name string) error {
	if strings.TrimSpace(name) == "" {
		return apierr.Invalid("name is required")
	}
	return validate.MaxLen("name", name, 100)
}

// parseExpiry parses an RFC 3339 expiry given as text in a request body.
func parseExpiry(s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, apierr.Invalid("expires_at must be an ISO 8601 timestamp such as 2030-01-31T12:00:00Z")
	}
	return validateExpiry(timestamppb.New(t))
}

func validateExpiry(e *timestamppb.Timestamp) (*time.Time, error) {
	if e == nil {
		return nil, nil
	}
	if err := e.CheckValid(); err != nil {
		return nil, apierr.Invalid("expires_at must be a valid ISO 8601 timestamp")
	}
	t := e.AsTime()
	if !t.After(time.Now()) {
		return nil, apierr.Invalid("expires_at must be in the future")
	}
	return &t, nil
}

// issueKey creates a key for user of org.
func (s *Service) issueKey(ctx context.Context, orgID, userID, name string, scopes []string, expires *time.Time) (store.Key, string, error) {
	return s.issueKeyFrom(ctx, orgID, userID, "", name, scopes, expires)
}

// issueKeyFrom creates a key for user of org on behalf of the key parentID
// ("" for operators).
func (s *Service) issueKeyFrom(ctx context.Context, orgID, userID, parentID, name string, scopes []string, expires *time.Time) (store.Key, string, error) {
	key, prefix, hash, err := apikey.Generate()
	if err != nil {
		return store.Key{}, "", err
	}
	k, err := s.Store.CreateKey(ctx, store.Key{OrgID: orgID, UserID: userID, ParentID: parentID, Name: name, Prefix: prefix, Hash: hash, Scopes: scopes, ExpiresAt: expires}, s.MaxActiveKeys)
	switch {
	case errors.Is(err, store.ErrParentInactive):
		return k, "", apierr.Unauthenticated("The API key creating this key is no longer active")
	case errors.Is(err, store.ErrOutlivesParent):
		return k, "", apierr.Invalid("expires_at must not be later than the expiry of the API key creating it")
	case errors.Is(err, store.ErrTooManyKeys):
		return k, "", apierr.Conflict("Maximum number of active API keys (%d) reached; revoke a key first", s.MaxActiveKeys)
	case errors.Is(err, store.ErrNotFound):
		return k, "", apierr.NotFound("Organization not found")
	case err != nil:
		return k, "", err
	}
	return k, key, nil
}

// revoke revokes a key and every key it created, transitively. The
// revocation commits in Postgres whether or not Redis answers. Before
// answering, it publishes the revoked hashes to the gateways' cache itself:
// the outbox rows committed with the revocation may already be claimed by
// Announce (another replica or this one's ticker), and answering before that
// claim's publication lands would let a gateway read the key's old "active"
// entry after the caller was told it is revoked. The outbox still carries
// every revocation: once published here its rows are deleted, and one
// whose publication fails is retried by Announce until it succeeds
// (publishing twice is harmless). While Redis is
// down a gateway re-validates keys through this service once its local copy
// is older than VULNSCAN_KEY_CACHE_TTL, which bounds how long a revoked key
// keeps working.
func (s *Service) revoke(ctx context.Context, id, orgID string) (store.Key, error) {
	k, hashes, err := s.Store.RevokeKey(ctx, id, orgID)
	if errors.Is(err, store.ErrNotFound) {
		return k, apierr.NotFound("API key not found")
	}
	if err != nil {
		return k, err
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	err = keycache.Revoke(actx, s.Redis, hashes...)
	if err == nil {
		err = s.Store.ForgetRevocations(actx, hashes)
	}
	if err != nil {
		s.Log.WarnContext(ctx, "key revocation committed; announcing it to the gateways will be retried", "error", err.Error())
	}
	return k, nil
}

// AnnounceEvery is how often Announce retries unpublished revocations.
const AnnounceEvery = 500 * time.Millisecond

// Announce publishes queued revocations to Redis until ctx ends.
func (s *Service) Announce(ctx context.Context) error {
	t := time.NewTicker(AnnounceEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if _, err := s.announceOnce(ctx); err != nil && ctx.Err() == nil {
			s.Log.WarnContext(ctx, "announcing key revocations failed; retrying", "error", err.Error())
		}
	}
}

func (s *Service) announceOnce(ctx context.Context) (int, error) {
	var failed error
	n, err := s.Store.AnnounceRevocations(ctx, 100, func(hash string) error {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		failed = keycache.Revoke(pctx, s.Redis, hash)
		return failed
	})
	if err != nil {
		return n, err
	}
	return n, failed
}

func repoProto(r store.Repo) *authv1.Repo {
	return &authv1.Repo{Id: r.ID, Url: r.URL, DefaultBranch: r.DefaultBranch, CreatedAt: timestamppb.New(r.CreatedAt)}
}

func keyProto(k store.Key) *authv1.APIKey {
	return &authv1.APIKey{
		Id: k.ID, Name: k.Name, Prefix: k.Prefix, Scopes: k.Scopes, UserId: k.UserID,
		ExpiresAt: ts(k.ExpiresAt), CreatedAt: timestamppb.New(k.CreatedAt), RevokedAt: ts(k.RevokedAt),
	}
}
