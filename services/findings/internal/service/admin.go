package service

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/pkg/redact"
	"github.com/vulnscan/vulnscan/pkg/validate"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/delivery"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// Integration kinds.
var kinds = []string{"github", WebhookKind, "jira", "linear"}

// WebhookKind is the integration whose URL is a secret (a chat incoming
// webhook): it is never shown, logged or stored in clear.
const WebhookKind = delivery.WebhookKind

func integrationProto(i store.Integration) *findingsv1.Integration {
	return &findingsv1.Integration{Id: i.ID, OrgId: i.OrgID, Kind: i.Kind, Name: i.Name, Url: i.URL, Project: i.Project,
		HasToken: len(i.TokenEnc) > 0, HasSecret: len(i.SecretEnc) > 0, CreatedAt: timestamppb.New(i.CreatedAt),
		HasInboundSecret: len(i.InboundSecretEnc) > 0}
}

func (a *Admin) AddIntegration(ctx context.Context, req *findingsv1.AddIntegrationRequest) (*findingsv1.AddIntegrationResponse, error) {
	if err := validate.UUID("org_id", req.GetOrgId()); err != nil {
		return nil, err
	}
	if err := validate.OneOf("kind", req.GetKind(), kinds...); err != nil {
		return nil, err
	}
	if _, err := netguard.ParseURL(req.GetUrl(), "https", "http"); err != nil {
		return nil, apierr.Invalid("url %s", err.Error())
	}
	if (req.GetKind() == "jira" || req.GetKind() == "linear") && strings.TrimSpace(req.GetProject()) == "" {
		return nil, apierr.Invalid("project is required for %s (the Jira project key or Linear team id)", req.GetKind())
	}
	for _, c := range []struct{ name, v string }{{"name", req.GetName()}, {"project", req.GetProject()}, {"token", req.GetToken()}, {"secret", req.GetSecret()}, {"inbound_secret", req.GetInboundSecret()}} {
		if err := validate.MaxLen(c.name, c.v, 1000); err != nil {
			return nil, err
		}
	}
	if _, err := a.Auth.GetOrganization(ctx, &authv1.GetOrganizationRequest{OrgId: req.GetOrgId()}); err != nil {
		if apierr.HTTPStatus(statusOf(err)) == 404 {
			return nil, apierr.NotFound("Organization not found")
		}
		return nil, apierr.Internal.Wrap(err)
	}
	i := store.Integration{ID: uuid.NewString(), OrgID: req.GetOrgId(), Kind: req.GetKind(), Name: req.GetName(), URL: redact.URL(req.GetUrl()), Project: req.GetProject()}
	if i.Name == "" {
		i.Name = req.GetKind()
	}
	var err error
	// The URL is sealed like a token: for a webhook it is the credential
	// (only its host is kept for display), and for an API base URL it may
	// carry userinfo or a query the display form drops.
	if i.URLEnc, err = a.Box.Seal([]byte(req.GetUrl()), store.IntegrationURLAD(i.ID)); err != nil {
		return nil, apierr.Internal.Wrap(err)
	}
	if req.GetKind() == WebhookKind {
		i.URL = redact.Secret(req.GetUrl())
	}
	if req.GetToken() != "" {
		if i.TokenEnc, err = a.Box.Seal([]byte(req.GetToken()), store.IntegrationTokenAD(i.ID)); err != nil {
			return nil, apierr.Internal.Wrap(err)
		}
	}
	if req.GetSecret() != "" {
		if i.SecretEnc, err = a.Box.Seal([]byte(req.GetSecret()), store.IntegrationSecretAD(i.ID)); err != nil {
			return nil, apierr.Internal.Wrap(err)
		}
	}
	// The git host and the chat sign the events they send back with the
	// inbound secret; one is generated when the operator gives none.
	inboundSecret := req.GetInboundSecret()
	if inboundSecret != "" && len(inboundSecret) < 16 {
		return nil, apierr.Invalid("inbound_secret must be at least 16 characters")
	}
	if inboundSecret == "" && (req.GetKind() == providerGitHub || req.GetKind() == providerSlack) {
		if inboundSecret, err = newInboundSecret(); err != nil {
			return nil, apierr.Internal.Wrap(err)
		}
	}
	if inboundSecret != "" {
		if i.InboundSecretEnc, err = a.Box.Seal([]byte(inboundSecret), store.IntegrationInboundSecretAD(i.ID)); err != nil {
			return nil, apierr.Internal.Wrap(err)
		}
	}
	out, err := a.Store.AddIntegration(ctx, i)
	if err != nil {
		return nil, err
	}
	return &findingsv1.AddIntegrationResponse{Integration: integrationProto(out), InboundSecret: inboundSecret}, nil
}

func (a *Admin) ListIntegrations(ctx context.Context, req *findingsv1.ListIntegrationsRequest) (*findingsv1.ListIntegrationsResponse, error) {
	if err := validate.UUID("org_id", req.GetOrgId()); err != nil {
		return nil, err
	}
	list, err := a.Store.ListIntegrations(ctx, req.GetOrgId())
	if err != nil {
		return nil, err
	}
	out := &findingsv1.ListIntegrationsResponse{Data: make([]*findingsv1.Integration, 0, len(list))}
	for _, i := range list {
		out.Data = append(out.Data, integrationProto(i))
	}
	return out, nil
}

func (a *Admin) RemoveIntegration(ctx context.Context, req *findingsv1.RemoveIntegrationRequest) (*findingsv1.RemoveIntegrationResponse, error) {
	if err := validate.UUID("id", req.GetId()); err != nil {
		return nil, err
	}
	i, err := a.Store.RemoveIntegration(ctx, req.GetId())
	if err != nil {
		if err == store.ErrNotFound {
			return nil, apierr.NotFound("Integration not found")
		}
		return nil, err
	}
	return &findingsv1.RemoveIntegrationResponse{Id: i.ID, RemovedAt: timestamppb.New(*i.RemovedAt)}, nil
}
