package service

import (
	"context"
	"errors"
	"math"
	"strings"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/pkg/validate"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	"github.com/vulnscan/vulnscan/services/auth/internal/store"
)

func (a *Admin) CreateOrganization(ctx context.Context, req *authv1.CreateOrganizationRequest) (*authv1.CreateOrganizationResponse, error) {
	name := strings.TrimSpace(req.GetName())
	if name == "" {
		return nil, apierr.Invalid("name is required")
	}
	if err := validate.MaxLen("name", name, 200); err != nil {
		return nil, err
	}
	if req.GetCredits() < 0 {
		return nil, apierr.Invalid("credits must not be negative")
	}
	mode := req.GetVerificationMode()
	if mode == "" {
		mode = "auto"
	}
	if err := validate.OneOf("verification", mode, "auto", "manual"); err != nil {
		return nil, err
	}
	org, user, err := a.Store.CreateOrg(ctx, name, mode, "owner", req.GetCredits())
	if errors.Is(err, store.ErrDuplicate) {
		return nil, apierr.Conflict("organization %q already exists", name)
	}
	if err != nil {
		return nil, err
	}
	return &authv1.CreateOrganizationResponse{OrgId: org, UserId: user}, nil
}

func (a *Admin) CreateUser(ctx context.Context, req *authv1.CreateUserRequest) (*authv1.CreateUserResponse, error) {
	if err := a.requireOrg(ctx, req.GetOrgId()); err != nil {
		return nil, err
	}
	name := strings.TrimSpace(req.GetUsername())
	if name == "" {
		return nil, apierr.Invalid("username is required")
	}
	if err := validate.MaxLen("username", name, 100); err != nil {
		return nil, err
	}
	id, err := a.Store.CreateUser(ctx, req.GetOrgId(), name)
	if errors.Is(err, store.ErrDuplicate) {
		return nil, apierr.Conflict("user %q already exists in the organization", name)
	}
	if err != nil {
		return nil, err
	}
	return &authv1.CreateUserResponse{UserId: id}, nil
}

func (a *Admin) requireOrg(ctx context.Context, orgID string) error {
	if err := validate.UUID("org", orgID); err != nil {
		return err
	}
	if _, err := a.Store.GetOrg(ctx, orgID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return apierr.NotFound("Organization not found")
		}
		return err
	}
	return nil
}

func (a *Admin) IssueAPIKey(ctx context.Context, req *authv1.IssueAPIKeyRequest) (*authv1.IssueAPIKeyResponse, error) {
	if err := a.requireOrg(ctx, req.GetOrgId()); err != nil {
		return nil, err
	}
	userID := req.GetUserId()
	if userID == "" {
		owner, err := a.Store.OwnerOf(ctx, req.GetOrgId())
		if err != nil {
			return nil, err
		}
		userID = owner
	} else {
		if err := validate.UUID("user", userID); err != nil {
			return nil, err
		}
		u, err := a.Store.GetUser(ctx, userID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && u.OrgID != req.GetOrgId()) {
			return nil, apierr.NotFound("User not found in the organization")
		}
		if err != nil {
			return nil, err
		}
	}
	scopes, err := normalizeScopes(req.GetScopes())
	if err != nil {
		return nil, err
	}
	name := req.GetName()
	if name == "" {
		name = "operator-issued"
	}
	if err := validateKeyName(name); err != nil {
		return nil, err
	}
	expires, err := validateExpiry(req.GetExpiresAt())
	if err != nil {
		return nil, err
	}
	k, key, err := a.issueKey(ctx, req.GetOrgId(), userID, name, scopes, expires)
	if err != nil {
		return nil, err
	}
	return &authv1.IssueAPIKeyResponse{Id: k.ID, Key: key, Scopes: k.Scopes, ExpiresAt: ts(k.ExpiresAt)}, nil
}

func (a *Admin) AdminRevokeAPIKey(ctx context.Context, req *authv1.AdminRevokeAPIKeyRequest) (*authv1.AdminRevokeAPIKeyResponse, error) {
	if err := validate.UUID("id", req.GetId()); err != nil {
		return nil, err
	}
	k, err := a.revoke(ctx, req.GetId(), "")
	if err != nil {
		return nil, err
	}
	return &authv1.AdminRevokeAPIKeyResponse{Id: k.ID, RevokedAt: ts(k.RevokedAt)}, nil
}

func (a *Admin) GrantCredits(ctx context.Context, req *authv1.GrantCreditsRequest) (*authv1.GrantCreditsResponse, error) {
	if err := validate.UUID("org", req.GetOrgId()); err != nil {
		return nil, err
	}
	if req.GetAmount() <= 0 {
		return nil, apierr.Invalid("amount must be positive")
	}
	bal, err := a.Store.Grant(ctx, req.GetOrgId(), req.GetAmount())
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound("Organization not found")
	}
	if errors.Is(err, store.ErrBalanceTooLarge) {
		return nil, apierr.Invalid("amount would take the balance above %d credits", math.MaxInt32)
	}
	if err != nil {
		return nil, err
	}
	return &authv1.GrantCreditsResponse{OrgId: req.GetOrgId(), Balance: bal}, nil
}

func (a *Admin) GetBalance(ctx context.Context, req *authv1.GetBalanceRequest) (*authv1.GetBalanceResponse, error) {
	if err := validate.UUID("org", req.GetOrgId()); err != nil {
		return nil, err
	}
	bal, err := a.Store.Balance(ctx, req.GetOrgId())
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound("Organization not found")
	}
	if err != nil {
		return nil, err
	}
	return &authv1.GetBalanceResponse{OrgId: req.GetOrgId(), Balance: bal}, nil
}

func (a *Admin) ConnectRepo(ctx context.Context, req *authv1.ConnectRepoRequest) (*authv1.ConnectRepoResponse, error) {
	if err := a.requireOrg(ctx, req.GetOrgId()); err != nil {
		return nil, err
	}
	if _, err := netguard.ParseURL(req.GetUrl(), "https"); err != nil {
		return nil, apierr.Invalid("url %s", err.Error())
	}
	clone := req.GetCloneUrl()
	if clone == "" {
		clone = req.GetUrl()
	}
	if _, err := netguard.ParseURL(clone, "https"); err != nil {
		return nil, apierr.Invalid("clone_url %s", err.Error())
	}
	var enc []byte
	if req.GetToken() != "" {
		var err error
		if enc, err = a.Box.Seal([]byte(req.GetToken()), store.RepoTokenAD(req.GetOrgId(), vocab.RepoKey(req.GetUrl()))); err != nil {
			return nil, err
		}
	}
	r, err := a.Store.ConnectRepo(ctx, store.Repo{OrgID: req.GetOrgId(), URL: req.GetUrl(), CloneURL: clone, DefaultBranch: req.GetDefaultBranch(), TokenEnc: enc}, vocab.RepoKey(req.GetUrl()))
	if err != nil {
		return nil, err
	}
	return &authv1.ConnectRepoResponse{Id: r.ID, Url: r.URL}, nil
}

// ListOrganizations lists every organization for operators.
func (a *Admin) ListOrganizations(ctx context.Context, _ *authv1.ListOrganizationsRequest) (*authv1.ListOrganizationsResponse, error) {
	orgs, err := a.Store.ListOrgs(ctx)
	if err != nil {
		return nil, err
	}
	out := &authv1.ListOrganizationsResponse{Data: make([]*authv1.Organization, 0, len(orgs)), Total: int32(len(orgs))}
	for _, o := range orgs {
		out.Data = append(out.Data, &authv1.Organization{Id: o.ID, Name: o.Name, VerificationMode: o.VerificationMode,
			Balance: o.Balance, CreatedAt: timestamppb.New(o.CreatedAt)})
	}
	return out, nil
}

// AdminListAPIKeys lists an organization's keys, revoked ones included,
// never their secrets.
func (a *Admin) AdminListAPIKeys(ctx context.Context, req *authv1.AdminListAPIKeysRequest) (*authv1.AdminListAPIKeysResponse, error) {
	if err := a.requireOrg(ctx, req.GetOrgId()); err != nil {
		return nil, err
	}
	keys, err := a.Store.ListKeys(ctx, req.GetOrgId())
	if err != nil {
		return nil, err
	}
	out := &authv1.AdminListAPIKeysResponse{Data: make([]*authv1.APIKey, 0, len(keys)), Total: int32(len(keys))}
	for _, k := range keys {
		out.Data = append(out.Data, keyProto(k))
	}
	return out, nil
}
