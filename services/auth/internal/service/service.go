// Package service implements the auth service's gRPC APIs: the public one
// (keys, credits, repositories of the caller's organization), the internal
// one (key verification, credit debits and refunds, connected repository
// lookup) and the operators' one.
package service

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
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
	key, prefix, hash, err := apikey.Generate()
	if err != nil {
		return store.Key{}, "", err
	}
	k, err := s.Store.CreateKey(ctx, store.Key{OrgID: orgID, UserID: userID, Name: name, Prefix: prefix, Hash: hash, Scopes: scopes, ExpiresAt: expires}, s.MaxActiveKeys)
	switch {
	case errors.Is(err, store.ErrTooManyKeys):
		return k, "", apierr.Conflict("Maximum number of active API keys (%d) reached; revoke a key first", s.MaxActiveKeys)
	case errors.Is(err, store.ErrNotFound):
		return k, "", apierr.NotFound("Organization not found")
	case err != nil:
		return k, "", err
	}
	return k, key, nil
}

// revoke revokes a key and tells every gateway before the change commits.
func (s *Service) revoke(ctx context.Context, id, orgID string) (store.Key, error) {
	k, err := s.Store.RevokeKey(ctx, id, orgID, func(hash string) error {
		return keycache.Revoke(ctx, s.Redis, hash)
	})
	if errors.Is(err, store.ErrNotFound) {
		return k, apierr.NotFound("API key not found")
	}
	return k, err
}

// repoKey normalizes a repository URL for lookups: scheme and host in lower
// case, no trailing slash or ".git".
func repoKey(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return strings.TrimSpace(raw)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.RawQuery, u.Fragment = "", ""
	p := strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), ".git")
	u.Path, u.RawPath = p, ""
	return u.String()
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
