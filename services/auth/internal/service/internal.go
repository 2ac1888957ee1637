package service

import (
	"context"
	"errors"
	"time"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/validate"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	"github.com/vulnscan/vulnscan/services/auth/internal/store"
)

func (s *Internal) VerifyAPIKey(ctx context.Context, req *authv1.VerifyAPIKeyRequest) (*authv1.VerifyAPIKeyResponse, error) {
	if len(req.GetKeyHash()) != 64 {
		return nil, apierr.Invalid("key_hash must be a hex SHA-256")
	}
	k, err := s.Store.KeyByHash(ctx, req.GetKeyHash())
	if errors.Is(err, store.ErrNotFound) {
		return &authv1.VerifyAPIKeyResponse{Status: string(vocab.KeyUnknown)}, nil
	}
	if err != nil {
		return nil, err
	}
	status := string(vocab.KeyActive)
	switch {
	case k.RevokedAt != nil:
		status = string(vocab.KeyRevoked)
	case k.ExpiresAt != nil && !k.ExpiresAt.After(time.Now()):
		status = string(vocab.KeyExpired)
	}
	return &authv1.VerifyAPIKeyResponse{
		Status: status, KeyId: k.ID, OrgId: k.OrgID, UserId: k.UserID, Scopes: k.Scopes, ExpiresAt: ts(k.ExpiresAt),
	}, nil
}

func (s *Internal) DebitCredits(ctx context.Context, req *authv1.DebitCreditsRequest) (*authv1.DebitCreditsResponse, error) {
	if err := validate.UUID("org_id", req.GetOrgId()); err != nil {
		return nil, err
	}
	if req.GetAmount() <= 0 {
		return nil, apierr.Invalid("amount must be positive")
	}
	if req.GetReference() == "" {
		return nil, apierr.Invalid("reference is required")
	}
	bal, applied, err := s.Store.Debit(ctx, req.GetOrgId(), req.GetAmount(), req.GetReference())
	switch {
	case errors.Is(err, store.ErrInsufficientCredit):
		return nil, apierr.PaymentRequired("Insufficient credits to start this scan")
	case errors.Is(err, store.ErrNotFound):
		return nil, apierr.NotFound("Organization not found")
	case err != nil:
		return nil, err
	}
	return &authv1.DebitCreditsResponse{Balance: bal, Applied: applied}, nil
}

func (s *Internal) RefundCredits(ctx context.Context, req *authv1.RefundCreditsRequest) (*authv1.RefundCreditsResponse, error) {
	if err := validate.UUID("org_id", req.GetOrgId()); err != nil {
		return nil, err
	}
	if req.GetReference() == "" {
		return nil, apierr.Invalid("reference is required")
	}
	bal, refunded, err := s.Store.Refund(ctx, req.GetOrgId(), req.GetReference())
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound("Organization not found")
	}
	if err != nil {
		return nil, err
	}
	return &authv1.RefundCreditsResponse{Balance: bal, Refunded: refunded}, nil
}

func (s *Internal) GetConnectedRepo(ctx context.Context, req *authv1.GetConnectedRepoRequest) (*authv1.GetConnectedRepoResponse, error) {
	if err := validate.UUID("org_id", req.GetOrgId()); err != nil {
		return nil, err
	}
	r, err := s.Store.RepoByURL(ctx, req.GetOrgId(), vocab.RepoKey(req.GetUrl()))
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound("Connected repository not found")
	}
	if err != nil {
		return nil, err
	}
	token := ""
	if len(r.TokenEnc) > 0 {
		pt, _, err := s.Box.Open(r.TokenEnc, store.RepoTokenAD(r.OrgID, vocab.RepoKey(req.GetUrl())))
		if err != nil {
			return nil, apierr.Internal.Wrap(err)
		}
		token = string(pt)
	}
	return &authv1.GetConnectedRepoResponse{Id: r.ID, Url: r.URL, CloneUrl: r.CloneURL, Token: token, DefaultBranch: r.DefaultBranch}, nil
}

func (s *Internal) GetOrganization(ctx context.Context, req *authv1.GetOrganizationRequest) (*authv1.GetOrganizationResponse, error) {
	if err := validate.UUID("org_id", req.GetOrgId()); err != nil {
		return nil, err
	}
	o, err := s.Store.GetOrg(ctx, req.GetOrgId())
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound("Organization not found")
	}
	if err != nil {
		return nil, err
	}
	return &authv1.GetOrganizationResponse{Id: o.ID, Name: o.Name, VerificationMode: o.VerificationMode}, nil
}

func (s *Internal) GetUser(ctx context.Context, req *authv1.GetUserRequest) (*authv1.GetUserResponse, error) {
	if err := validate.UUID("user_id", req.GetUserId()); err != nil {
		return nil, err
	}
	u, err := s.Store.GetUser(ctx, req.GetUserId())
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound("User not found")
	}
	if err != nil {
		return nil, err
	}
	return &authv1.GetUserResponse{Id: u.ID, OrgId: u.OrgID, Username: u.Username}, nil
}
