package service

import (
	"context"
	"errors"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/validate"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	"github.com/vulnscan/vulnscan/services/auth/internal/store"
)

func (p *Public) CreateAPIKey(ctx context.Context, req *authv1.CreateAPIKeyRequest) (*authv1.CreateAPIKeyResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	if err := validateKeyName(req.GetName()); err != nil {
		return nil, err
	}
	scopes, err := normalizeScopes(req.GetScopes())
	if err != nil {
		return nil, err
	}
	for _, s := range scopes {
		if !caller.Has(s) {
			return nil, apierr.Forbidden("API key cannot grant scope %s that it does not hold", s)
		}
	}
	expires, err := parseExpiry(req.GetExpiresAt())
	if err != nil {
		return nil, err
	}
	// A key never outlives the key that creates it: without expires_at the
	// new key inherits its parent's expiry; a later expires_at is refused
	// (clamping would silently hand out a shorter key than asked for).
	parent, err := p.Store.KeyByID(ctx, caller.KeyID, caller.OrgID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, apierr.Unauthenticated("Invalid API key")
		}
		return nil, err
	}
	if parent.ExpiresAt != nil {
		if expires == nil {
			expires = parent.ExpiresAt
		} else if expires.After(*parent.ExpiresAt) {
			return nil, apierr.Invalid("expires_at must not be later than the expiry of the API key creating it (%s)", parent.ExpiresAt.UTC().Format(time.RFC3339))
		}
	}
	k, key, err := p.issueKeyFrom(ctx, caller.OrgID, caller.UserID, caller.KeyID, req.GetName(), scopes, expires)
	if err != nil {
		return nil, err
	}
	return &authv1.CreateAPIKeyResponse{
		Id: k.ID, Key: key, Name: k.Name, Prefix: k.Prefix, Scopes: k.Scopes, UserId: k.UserID,
		ExpiresAt: ts(k.ExpiresAt), CreatedAt: timestamppb.New(k.CreatedAt),
	}, nil
}

func (p *Public) ListAPIKeys(ctx context.Context, _ *authv1.ListAPIKeysRequest) (*authv1.ListAPIKeysResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := p.Store.ListKeys(ctx, caller.OrgID)
	if err != nil {
		return nil, err
	}
	out := &authv1.ListAPIKeysResponse{Data: make([]*authv1.APIKey, 0, len(keys)), Total: int32(len(keys))}
	for _, k := range keys {
		out.Data = append(out.Data, keyProto(k))
	}
	return out, nil
}

func (p *Public) RevokeAPIKey(ctx context.Context, req *authv1.RevokeAPIKeyRequest) (*authv1.RevokeAPIKeyResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.UUID("id", req.GetId()); err != nil {
		return nil, err
	}
	if _, err := p.revoke(ctx, req.GetId(), caller.OrgID); err != nil {
		return nil, err
	}
	return &authv1.RevokeAPIKeyResponse{}, nil
}

func (p *Public) GetCredits(ctx context.Context, _ *authv1.GetCreditsRequest) (*authv1.GetCreditsResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	bal, err := p.Store.Balance(ctx, caller.OrgID)
	if err != nil {
		return nil, err
	}
	return &authv1.GetCreditsResponse{Balance: bal}, nil
}

func (p *Public) ListRepos(ctx context.Context, _ *authv1.ListReposRequest) (*authv1.ListReposResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	repos, err := p.Store.ListRepos(ctx, caller.OrgID)
	if err != nil {
		return nil, err
	}
	out := &authv1.ListReposResponse{Data: make([]*authv1.Repo, 0, len(repos)), Total: int32(len(repos))}
	for _, r := range repos {
		out.Data = append(out.Data, repoProto(r))
	}
	return out, nil
}
