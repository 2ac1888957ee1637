package webhook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/redact"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/pkg/validate"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// Limits of the API.
const (
	DefaultMaxPerOrg = 20
	DefaultLimit     = 15
	MaxLimit         = 100
	MaxDescription   = 200
)

// Messages.
const (
	msgWebhookNotFound  = "Webhook not found"
	msgDeliveryNotFound = "Webhook delivery not found"
)

// API holds what the three webhook services share.
type API struct {
	Store *Store
	Box   *secretbox.Box
	Guard *netguard.Guard
	// MaxPerOrg is how many active webhooks an organization may have.
	MaxPerOrg int
}

// Public serves WebhookService (REST through the gateway).
type Public struct {
	findingsv1.UnimplementedWebhookServiceServer
	*API
}

// Events serves WebhookEventService (the scan and estimation services).
type Events struct {
	findingsv1.UnimplementedWebhookEventServiceServer
	*API
}

// Admin serves WebhookAdminService (vulnscanctl on the admin listener).
type Admin struct {
	findingsv1.UnimplementedWebhookAdminServiceServer
	*API
}

func webhookProto(w Webhook) *findingsv1.Webhook {
	return &findingsv1.Webhook{Id: w.ID, Url: w.URL, Events: w.Events, Description: w.Description, CreatedAt: timestamppb.New(w.CreatedAt)}
}

func deliveryProto(d Delivery) *findingsv1.WebhookDelivery {
	out := &findingsv1.WebhookDelivery{Id: d.ID, WebhookId: d.WebhookID, EventId: d.EventID, Event: d.Event, Status: d.Status,
		Attempts: d.Attempts, CreatedAt: timestamppb.New(d.CreatedAt)}
	if d.LastStatusCode != nil {
		out.LastStatusCode = wrapperspb.Int32(*d.LastStatusCode)
	}
	if d.LastError != nil {
		out.LastError = wrapperspb.String(*d.LastError)
	}
	out.LastAttemptAt = ts(d.LastAttemptAt)
	out.NextAttemptAt = ts(d.NextAttemptAt)
	out.DeliveredAt = ts(d.DeliveredAt)
	return out
}

func ts(t *time.Time) *timestamppb.Timestamp {
	if t == nil {
		return nil
	}
	return timestamppb.New(*t)
}

// checkURL validates a webhook URL: HTTPS to a host whose every address is
// public. A host inside VULNSCAN_ALLOWED_PRIVATE_CIDRS (tests, development)
// is exempt from both rules, so a loopback receiver may use plain HTTP.
// Delivery checks the address again on every connection.
func (a *API) checkURL(ctx context.Context, raw string) error {
	if raw == "" {
		return apierr.Invalid("url is required")
	}
	u, err := netguard.ParseURL(raw, "https", "http")
	if err != nil {
		return apierr.Invalid("url %s", err.Error())
	}
	if u.Fragment != "" {
		return apierr.Invalid("url must not contain a fragment")
	}
	if a.Guard.Exempt(ctx, u.Hostname()) {
		return nil
	}
	if u.Scheme != "https" {
		return apierr.Invalid("url must use https")
	}
	if err := a.Guard.CheckHost(ctx, u.Hostname()); err != nil {
		if errors.Is(err, netguard.ErrBlocked) {
			return apierr.Invalid("url must resolve to a public address")
		}
		return apierr.Invalid("url host %s cannot be resolved", u.Hostname())
	}
	return nil
}

// checkEvents validates the subscribed types and returns them without
// repeats, in catalogue order.
func checkEvents(events []string) ([]string, error) {
	if len(events) == 0 {
		return nil, apierr.Invalid("events must name at least one event type (%s)", strings.Join(Catalogue, ", "))
	}
	want := map[string]bool{}
	for _, e := range events {
		if !known(Catalogue, e) {
			return nil, apierr.Invalid("events: unknown event type %q; known types: %s", e, strings.Join(Catalogue, ", "))
		}
		want[e] = true
	}
	out := make([]string, 0, len(want))
	for _, e := range Catalogue {
		if want[e] {
			out = append(out, e)
		}
	}
	return out, nil
}

func (p *Public) CreateWebhook(ctx context.Context, req *findingsv1.CreateWebhookRequest) (*findingsv1.CreateWebhookResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.checkURL(ctx, req.GetUrl()); err != nil {
		return nil, err
	}
	events, err := checkEvents(req.GetEvents())
	if err != nil {
		return nil, err
	}
	if err := validate.MaxLen("description", req.GetDescription(), MaxDescription); err != nil {
		return nil, err
	}
	secret, err := NewSecret()
	if err != nil {
		return nil, apierr.Internal.Wrap(err)
	}
	w := Webhook{ID: uuid.NewString(), OrgID: caller.OrgID, URL: redact.URL(req.GetUrl()), Events: events, Description: req.GetDescription()}
	if w.URLEnc, err = p.Box.Seal([]byte(req.GetUrl()), URLAD(w.ID)); err != nil {
		return nil, apierr.Internal.Wrap(err)
	}
	if w.SecretEnc, err = p.Box.Seal([]byte(secret), SecretAD(w.ID)); err != nil {
		return nil, apierr.Internal.Wrap(err)
	}
	out, err := p.Store.Create(ctx, w, p.MaxPerOrg)
	if errors.Is(err, ErrLimit) {
		return nil, apierr.Conflict("Webhook limit reached: an organization may have at most %d webhooks; delete one first", p.MaxPerOrg)
	}
	if err != nil {
		return nil, err
	}
	return &findingsv1.CreateWebhookResponse{Id: out.ID, Url: out.URL, Events: out.Events, Description: out.Description,
		CreatedAt: timestamppb.New(out.CreatedAt), Secret: secret}, nil
}

func (p *Public) ListWebhooks(ctx context.Context, _ *findingsv1.ListWebhooksRequest) (*findingsv1.ListWebhooksResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	return list(ctx, p.API, caller.OrgID)
}

func list(ctx context.Context, a *API, orgID string) (*findingsv1.ListWebhooksResponse, error) {
	ws, err := a.Store.List(ctx, orgID)
	if err != nil {
		return nil, err
	}
	out := &findingsv1.ListWebhooksResponse{Data: make([]*findingsv1.Webhook, 0, len(ws)), Total: int32(len(ws))}
	for _, w := range ws {
		out.Data = append(out.Data, webhookProto(w))
	}
	return out, nil
}

// visible returns the caller's webhook id, or the API error for it.
func (a *API) visible(ctx context.Context, orgID, id string) (Webhook, error) {
	if err := validate.UUID("id", id); err != nil {
		return Webhook{}, err
	}
	w, err := a.Store.Get(ctx, orgID, id)
	if errors.Is(err, ErrNotFound) {
		return w, apierr.NotFound(msgWebhookNotFound)
	}
	return w, err
}

func (p *Public) GetWebhook(ctx context.Context, req *findingsv1.GetWebhookRequest) (*findingsv1.Webhook, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	w, err := p.visible(ctx, caller.OrgID, req.GetId())
	if err != nil {
		return nil, err
	}
	return webhookProto(w), nil
}

func (p *Public) DeleteWebhook(ctx context.Context, req *findingsv1.DeleteWebhookRequest) (*findingsv1.DeleteWebhookResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.UUID("id", req.GetId()); err != nil {
		return nil, err
	}
	if err := p.Store.Remove(ctx, caller.OrgID, req.GetId()); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, apierr.NotFound(msgWebhookNotFound)
		}
		return nil, err
	}
	return &findingsv1.DeleteWebhookResponse{}, nil
}

func (p *Public) ListWebhookDeliveries(ctx context.Context, req *findingsv1.ListWebhookDeliveriesRequest) (*findingsv1.ListWebhookDeliveriesResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	page, limit := int32(1), int32(DefaultLimit)
	if req.Page != nil {
		if page = req.GetPage(); page < 1 {
			return nil, apierr.Invalid("page must be at least 1")
		}
	}
	if req.Limit != nil {
		if limit = req.GetLimit(); limit < 1 || limit > MaxLimit {
			return nil, apierr.Invalid("limit must be between 1 and %d", MaxLimit)
		}
	}
	w, err := p.visible(ctx, caller.OrgID, req.GetId())
	if err != nil {
		return nil, err
	}
	return deliveries(ctx, p.API, w.ID, page, limit)
}

func deliveries(ctx context.Context, a *API, webhookID string, page, limit int32) (*findingsv1.ListWebhookDeliveriesResponse, error) {
	offset := int64(page-1) * int64(limit)
	if offset > 1<<31 {
		return nil, apierr.Invalid("page is too large")
	}
	ds, total, err := a.Store.Deliveries(ctx, webhookID, int(limit), int(offset))
	if err != nil {
		return nil, err
	}
	out := &findingsv1.ListWebhookDeliveriesResponse{Data: make([]*findingsv1.WebhookDelivery, 0, len(ds)), Total: int32(total), Page: page, Limit: limit}
	for _, d := range ds {
		out.Data = append(out.Data, deliveryProto(d))
	}
	return out, nil
}

func (p *Public) RedeliverWebhookDelivery(ctx context.Context, req *findingsv1.RedeliverWebhookDeliveryRequest) (*findingsv1.WebhookDelivery, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := p.visible(ctx, caller.OrgID, req.GetId()); err != nil {
		return nil, err
	}
	if err := validate.UUID("delivery_id", req.GetDeliveryId()); err != nil {
		return nil, err
	}
	return redeliver(ctx, p.API, caller.OrgID, req.GetId(), req.GetDeliveryId())
}

func redeliver(ctx context.Context, a *API, orgID, webhookID, id string) (*findingsv1.WebhookDelivery, error) {
	d, err := a.Store.Redeliver(ctx, orgID, webhookID, id)
	if errors.Is(err, ErrNotFound) {
		return nil, apierr.NotFound(msgDeliveryNotFound)
	}
	if err != nil {
		return nil, err
	}
	return deliveryProto(d), nil
}

func (e *Events) PublishEvent(ctx context.Context, req *findingsv1.PublishEventRequest) (*findingsv1.PublishEventResponse, error) {
	if err := validate.UUID("event_id", req.GetEventId()); err != nil {
		return nil, err
	}
	if err := validate.UUID("org_id", req.GetOrgId()); err != nil {
		return nil, err
	}
	if err := validate.OneOf("type", req.GetType(), Published...); err != nil {
		return nil, err
	}
	if req.GetData() == nil {
		return nil, apierr.Invalid("data is required")
	}
	occurred := time.Now()
	if req.GetOccurredAt() != nil {
		occurred = req.GetOccurredAt().AsTime()
	}
	n, err := e.Store.Publish(ctx, req.GetEventId(), req.GetOrgId(), req.GetType(), occurred, req.GetData().AsMap())
	if err != nil {
		return nil, fmt.Errorf("publish %s: %w", req.GetType(), err)
	}
	return &findingsv1.PublishEventResponse{Deliveries: int32(n)}, nil
}

func (a *Admin) AdminListWebhooks(ctx context.Context, req *findingsv1.AdminListWebhooksRequest) (*findingsv1.ListWebhooksResponse, error) {
	if err := validate.UUID("org_id", req.GetOrgId()); err != nil {
		return nil, err
	}
	return list(ctx, a.API, req.GetOrgId())
}

func (a *Admin) AdminListWebhookDeliveries(ctx context.Context, req *findingsv1.AdminListWebhookDeliveriesRequest) (*findingsv1.ListWebhookDeliveriesResponse, error) {
	if err := validate.UUID("webhook_id", req.GetWebhookId()); err != nil {
		return nil, err
	}
	page, limit := req.GetPage(), req.GetLimit()
	if page == 0 {
		page = 1
	}
	if limit == 0 {
		limit = 50
	}
	if page < 1 {
		return nil, apierr.Invalid("page must be at least 1")
	}
	if limit < 1 || limit > MaxLimit {
		return nil, apierr.Invalid("limit must be between 1 and %d", MaxLimit)
	}
	if _, err := a.Store.Get(ctx, "", req.GetWebhookId()); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, apierr.NotFound(msgWebhookNotFound)
		}
		return nil, err
	}
	return deliveries(ctx, a.API, req.GetWebhookId(), page, limit)
}

func (a *Admin) AdminRedeliverWebhookDelivery(ctx context.Context, req *findingsv1.AdminRedeliverWebhookDeliveryRequest) (*findingsv1.WebhookDelivery, error) {
	if err := validate.UUID("delivery_id", req.GetDeliveryId()); err != nil {
		return nil, err
	}
	return redeliver(ctx, a.API, "", "", req.GetDeliveryId())
}
