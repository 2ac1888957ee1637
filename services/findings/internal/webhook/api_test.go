package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/outbox"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
	"github.com/vulnscan/vulnscan/services/findings/internal/webhook"
)

// newAPI returns the webhook API over a fresh findings database; allowed
// are the private CIDRs exempt from the public-address rule.
func newAPI(t *testing.T, allowed []string, maxPerOrg int) *webhook.API {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	box, err := secretbox.New(key)
	require.NoError(t, err)
	g, err := netguard.New(allowed)
	require.NoError(t, err)
	return &webhook.API{Store: &webhook.Store{Pool: dbtest.Migrated(t, "findings_webhook", store.Migrate)}, Box: box, Guard: g, MaxPerOrg: maxPerOrg}
}

func orgCtx(org string) context.Context {
	return principal.With(context.Background(), principal.Principal{OrgID: org, UserID: uuid.NewString()})
}

func requireAPIError(t *testing.T, err error, status int, msg string) {
	t.Helper()
	require.Error(t, err)
	require.True(t, apierr.Is(err, status), "want HTTP %d, got %v", status, err)
	require.Contains(t, err.Error(), msg)
}

// TestCreateWebhookRefusesURLs: without an exemption only https to a
// public address is accepted; loopback and private addresses are refused
// whatever the scheme.
func TestCreateWebhookRefusesURLs(t *testing.T) {
	t.Parallel()
	p := &webhook.Public{API: newAPI(t, nil, 5)}
	ctx := orgCtx(uuid.NewString())
	for _, c := range []struct{ url, msg string }{
		{"", "url is required"},
		{"ftp://8.8.8.8/hook", "url"},
		{"https://8.8.8.8/hook#frag", "must not contain a fragment"},
		{"https://user:pw@8.8.8.8/hook", "url must not contain credentials"},
		{"http://8.8.8.8/hook", "url must use https"},
		{"http://127.0.0.1:9/hook", "url must use https"},
		{"https://127.0.0.1/hook", "must resolve to a public address"},
		{"https://10.1.2.3/hook", "must resolve to a public address"},
		{"https://192.168.0.10/hook", "must resolve to a public address"},
		{"https://169.254.169.254/latest/meta-data", "must resolve to a public address"},
		{"https://[::1]/hook", "must resolve to a public address"},
		{"https://localhost/hook", "must resolve to a public address"},
	} {
		t.Run(c.url, func(t *testing.T) {
			_, err := p.CreateWebhook(ctx, &findingsv1.CreateWebhookRequest{Url: c.url, Events: []string{webhook.ScanCompleted}})
			requireAPIError(t, err, http.StatusBadRequest, c.msg)
		})
	}
	list, err := p.ListWebhooks(ctx, &findingsv1.ListWebhooksRequest{})
	require.NoError(t, err)
	require.Zero(t, list.GetTotal(), "no refused webhook was stored")
}

// TestCreateWebhookEventsAndFields covers the subscribed types, the
// description limit, the shown URL and the secret of a created webhook.
func TestCreateWebhookEventsAndFields(t *testing.T) {
	t.Parallel()
	p := &webhook.Public{API: newAPI(t, []string{"127.0.0.0/8"}, 5)}
	ctx := orgCtx(uuid.NewString())
	const target = "http://127.0.0.1:9/hook"
	for _, c := range []struct {
		name   string
		events []string
		desc   string
		msg    string
	}{
		{"no events", nil, "", "events must name at least one event type"},
		{"unknown event", []string{webhook.ScanCompleted, "finding.deleted"}, "", `unknown event type "finding.deleted"`},
		{"bulk type is not subscribable", []string{webhook.FindingBulkUpdated}, "", `unknown event type "finding.bulk_updated"`},
		{"description too long", []string{webhook.ScanFailed}, strings.Repeat("d", webhook.MaxDescription+1), "description"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := p.CreateWebhook(ctx, &findingsv1.CreateWebhookRequest{Url: target, Events: c.events, Description: c.desc})
			requireAPIError(t, err, http.StatusBadRequest, c.msg)
		})
	}

	out, err := p.CreateWebhook(ctx, &findingsv1.CreateWebhookRequest{Url: "http://127.0.0.1:9/hook?token=abc",
		Events: []string{webhook.ScanFailed, webhook.FindingCreated, webhook.ScanFailed}, Description: strings.Repeat("d", webhook.MaxDescription)})
	require.NoError(t, err)
	require.Equal(t, []string{webhook.FindingCreated, webhook.ScanFailed}, out.GetEvents(), "deduplicated, in catalogue order")
	require.Equal(t, "http://127.0.0.1:9/hook?REDACTED", out.GetUrl())
	require.True(t, strings.HasPrefix(out.GetSecret(), webhook.SecretPrefix))
	require.NoError(t, uuid.Validate(out.GetId()))

	got, err := p.GetWebhook(ctx, &findingsv1.GetWebhookRequest{Id: out.GetId()})
	require.NoError(t, err)
	require.Equal(t, out.GetUrl(), got.GetUrl())
	require.Equal(t, out.GetEvents(), got.GetEvents())
	require.Equal(t, out.GetDescription(), got.GetDescription())
	require.NotContains(t, got.GetUrl(), "abc", "the shown URL hides the query")
}

// TestWebhookLimitAndVisibility: an organization's active webhooks are
// capped, another organization sees none of them, and a removed one frees
// its place.
func TestWebhookLimitAndVisibility(t *testing.T) {
	t.Parallel()
	a := newAPI(t, []string{"127.0.0.0/8"}, 2)
	p := &webhook.Public{API: a}
	org := uuid.NewString()
	ctx, other := orgCtx(org), orgCtx(uuid.NewString())
	create := func(c context.Context) (*findingsv1.CreateWebhookResponse, error) {
		return p.CreateWebhook(c, &findingsv1.CreateWebhookRequest{Url: "http://127.0.0.1:9/h", Events: []string{webhook.ScanCompleted}})
	}
	first, err := create(ctx)
	require.NoError(t, err)
	_, err = create(ctx)
	require.NoError(t, err)
	_, err = create(ctx)
	requireAPIError(t, err, http.StatusConflict, "at most 2 webhooks")
	_, err = create(other)
	require.NoError(t, err, "the limit is per organization")

	list, err := p.ListWebhooks(ctx, &findingsv1.ListWebhooksRequest{})
	require.NoError(t, err)
	require.EqualValues(t, 2, list.GetTotal())
	require.Len(t, list.GetData(), 2)

	for _, c := range []struct {
		name   string
		ctx    context.Context
		id     string
		status int
		msg    string
	}{
		{"malformed id", ctx, "nope", http.StatusBadRequest, "id"},
		{"unknown id", ctx, uuid.NewString(), http.StatusNotFound, "Webhook not found"},
		{"other organization", other, first.GetId(), http.StatusNotFound, "Webhook not found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := p.GetWebhook(c.ctx, &findingsv1.GetWebhookRequest{Id: c.id})
			requireAPIError(t, err, c.status, c.msg)
			_, err = p.DeleteWebhook(c.ctx, &findingsv1.DeleteWebhookRequest{Id: c.id})
			requireAPIError(t, err, c.status, c.msg)
			_, err = p.ListWebhookDeliveries(c.ctx, &findingsv1.ListWebhookDeliveriesRequest{Id: c.id})
			requireAPIError(t, err, c.status, c.msg)
		})
	}

	_, err = p.DeleteWebhook(ctx, &findingsv1.DeleteWebhookRequest{Id: first.GetId()})
	require.NoError(t, err)
	_, err = p.GetWebhook(ctx, &findingsv1.GetWebhookRequest{Id: first.GetId()})
	requireAPIError(t, err, http.StatusNotFound, "Webhook not found")
	_, err = create(ctx)
	require.NoError(t, err, "a removed webhook no longer counts")

	adm := &webhook.Admin{API: a}
	all, err := adm.AdminListWebhooks(context.Background(), &findingsv1.AdminListWebhooksRequest{OrgId: org})
	require.NoError(t, err)
	require.EqualValues(t, 2, all.GetTotal())
}

// TestPublishEventValidation: only the published types with ids and data
// are accepted, and an event id is recorded once.
func TestPublishEventValidation(t *testing.T) {
	t.Parallel()
	a := newAPI(t, []string{"127.0.0.0/8"}, 5)
	e := &webhook.Events{API: a}
	org := uuid.NewString()
	_, err := (&webhook.Public{API: a}).CreateWebhook(orgCtx(org), &findingsv1.CreateWebhookRequest{Url: "http://127.0.0.1:9/h",
		Events: []string{webhook.ScanCompleted}})
	require.NoError(t, err)
	data, err := structpb.NewStruct(map[string]any{"scan": map[string]any{"id": "s1"}})
	require.NoError(t, err)
	valid := &findingsv1.PublishEventRequest{EventId: uuid.NewString(), OrgId: org, Type: webhook.ScanCompleted, Data: data}
	for _, c := range []struct {
		name   string
		change func(r *findingsv1.PublishEventRequest)
		msg    string
	}{
		{"malformed event id", func(r *findingsv1.PublishEventRequest) { r.EventId = "x" }, "event_id"},
		{"malformed org id", func(r *findingsv1.PublishEventRequest) { r.OrgId = "" }, "org_id"},
		{"finding type", func(r *findingsv1.PublishEventRequest) { r.Type = webhook.FindingCreated }, "type"},
		{"unknown type", func(r *findingsv1.PublishEventRequest) { r.Type = "scan.started" }, "type"},
		{"no data", func(r *findingsv1.PublishEventRequest) { r.Data = nil }, "data is required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := proto.Clone(valid).(*findingsv1.PublishEventRequest)
			c.change(r)
			_, err := e.PublishEvent(context.Background(), r)
			requireAPIError(t, err, http.StatusBadRequest, c.msg)
		})
	}
	out, err := e.PublishEvent(context.Background(), valid)
	require.NoError(t, err)
	require.EqualValues(t, 1, out.GetDeliveries())
	out, err = e.PublishEvent(context.Background(), valid)
	require.NoError(t, err)
	require.Zero(t, out.GetDeliveries(), "the same event id queues nothing again")
	unsubscribed := proto.Clone(valid).(*findingsv1.PublishEventRequest)
	unsubscribed.EventId, unsubscribed.Type = uuid.NewString(), webhook.ScanFailed
	out, err = e.PublishEvent(context.Background(), unsubscribed)
	require.NoError(t, err)
	require.Zero(t, out.GetDeliveries(), "no webhook subscribes to scan.failed")
}

// verifySignature computes, apart from the package, the Standard Webhooks
// signature of signed with a whsec_ secret.
func verifySignature(t *testing.T, secret, signed string) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	require.NoError(t, err)
	require.Len(t, key, 24)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signed))
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// received is one request the loopback receiver got.
type received struct {
	header http.Header
	body   []byte
}

// receiver is a loopback webhook endpoint answering with status.
type receiver struct {
	mu     sync.Mutex
	status int
	got    []received
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.got = append(r.got, received{header: req.Header.Clone(), body: b})
	status := r.status
	r.mu.Unlock()
	w.WriteHeader(status)
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func (r *receiver) answer(status int) {
	r.mu.Lock()
	r.status = status
	r.mu.Unlock()
}

// TestDeliverySignedLoggedAndRedelivered registers a webhook through the
// API for a loopback receiver, publishes an event and lets the worker
// deliver it: the request carries the Standard Webhooks headers, its
// signature verifies with the secret over id.timestamp.body, the body is
// the versioned envelope, the delivery log shows each outcome, and a
// redelivery sends the same message again.
func TestDeliverySignedLoggedAndRedelivered(t *testing.T) {
	t.Parallel()
	a := newAPI(t, []string{"127.0.0.0/8"}, 5)
	p, e, adm := &webhook.Public{API: a}, &webhook.Events{API: a}, &webhook.Admin{API: a}
	recv := &receiver{status: http.StatusInternalServerError}
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)
	org := uuid.NewString()
	ctx := orgCtx(org)
	hook, err := p.CreateWebhook(ctx, &findingsv1.CreateWebhookRequest{Url: srv.URL + "/hooks/in", Events: []string{webhook.ScanCompleted}})
	require.NoError(t, err)

	ctxW, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	now := time.Unix(1_700_000_000, 0)
	go func() {
		done <- (&webhook.Worker{Store: a.Store, Box: a.Box, Client: a.Guard.Client(5*time.Second, 0), Log: logging.New(testWriter{t}, "test"),
			Now:      func() time.Time { return now },
			Schedule: outbox.Schedule{Poll: 20 * time.Millisecond, BaseBackoff: time.Hour, MaxBackoff: time.Hour, MaxAttempts: 5, Batch: 10}}).Run(ctxW)
	}()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })

	eventID := uuid.NewString()
	occurred := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	data, err := structpb.NewStruct(map[string]any{"scan": map[string]any{"id": "s1", "status": "completed"}})
	require.NoError(t, err)
	out, err := e.PublishEvent(context.Background(), &findingsv1.PublishEventRequest{EventId: eventID, OrgId: org, Type: webhook.ScanCompleted,
		Data: data, OccurredAt: timestamppb.New(occurred)})
	require.NoError(t, err)
	require.EqualValues(t, 1, out.GetDeliveries())

	// waitFor polls the delivery log until the one delivery satisfies ok.
	waitFor := func(ok func(*findingsv1.WebhookDelivery) bool) *findingsv1.WebhookDelivery {
		var d *findingsv1.WebhookDelivery
		require.Eventually(t, func() bool {
			list, err := p.ListWebhookDeliveries(ctx, &findingsv1.ListWebhookDeliveriesRequest{Id: hook.GetId()})
			require.NoError(t, err)
			require.EqualValues(t, 1, list.GetTotal())
			d = list.GetData()[0]
			return ok(d)
		}, time.Minute, 20*time.Millisecond)
		return d
	}

	// The receiver fails: the delivery stays pending with the answer logged
	// (the backoff of an hour keeps it from being retried meanwhile).
	d := waitFor(func(d *findingsv1.WebhookDelivery) bool { return d.GetLastStatusCode() != nil })
	require.Equal(t, "pending", d.GetStatus())
	require.EqualValues(t, 1, d.GetAttempts())
	require.EqualValues(t, 500, d.GetLastStatusCode().GetValue())
	require.Equal(t, "receiver answered 500", d.GetLastError().GetValue())
	require.Equal(t, eventID, d.GetEventId())
	require.Equal(t, webhook.ScanCompleted, d.GetEvent())
	require.Nil(t, d.GetDeliveredAt())
	require.NotNil(t, d.GetNextAttemptAt())

	recv.answer(http.StatusNoContent)
	_, err = p.RedeliverWebhookDelivery(orgCtx(uuid.NewString()), &findingsv1.RedeliverWebhookDeliveryRequest{Id: hook.GetId(), DeliveryId: d.GetId()})
	requireAPIError(t, err, http.StatusNotFound, "Webhook not found")
	_, err = p.RedeliverWebhookDelivery(ctx, &findingsv1.RedeliverWebhookDeliveryRequest{Id: hook.GetId(), DeliveryId: uuid.NewString()})
	requireAPIError(t, err, http.StatusNotFound, "Webhook delivery not found")
	_, err = p.RedeliverWebhookDelivery(ctx, &findingsv1.RedeliverWebhookDeliveryRequest{Id: hook.GetId(), DeliveryId: "x"})
	requireAPIError(t, err, http.StatusBadRequest, "delivery_id")
	re, err := p.RedeliverWebhookDelivery(ctx, &findingsv1.RedeliverWebhookDeliveryRequest{Id: hook.GetId(), DeliveryId: d.GetId()})
	require.NoError(t, err)
	require.Equal(t, d.GetId(), re.GetId())

	d = waitFor(func(d *findingsv1.WebhookDelivery) bool { return d.GetStatus() == "delivered" })
	require.EqualValues(t, 2, d.GetAttempts())
	require.EqualValues(t, 204, d.GetLastStatusCode().GetValue())
	require.Nil(t, d.GetLastError())
	require.NotNil(t, d.GetDeliveredAt())
	require.Nil(t, d.GetNextAttemptAt(), "no next attempt once delivered")

	reqs := recv.requests()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		require.Equal(t, eventID, r.header.Get("webhook-id"))
		require.Equal(t, "1700000000", r.header.Get("webhook-timestamp"))
		require.Equal(t, "application/json", r.header.Get("Content-Type"))
		require.Equal(t, verifySignature(t, hook.GetSecret(), eventID+".1700000000."+string(r.body)), r.header.Get("webhook-signature"))
		other, err := webhook.Sign(hook.GetSecret(), eventID, "1700000001", r.body)
		require.NoError(t, err)
		require.NotEqual(t, other, r.header.Get("webhook-signature"), "the timestamp is signed")

		var env struct {
			Version   int            `json:"version"`
			ID        string         `json:"id"`
			Type      string         `json:"type"`
			Timestamp time.Time      `json:"timestamp"`
			Data      map[string]any `json:"data"`
		}
		require.NoError(t, json.Unmarshal(r.body, &env))
		require.Equal(t, webhook.PayloadVersion, env.Version)
		require.Equal(t, 1, env.Version)
		require.Equal(t, eventID, env.ID)
		require.Equal(t, webhook.ScanCompleted, env.Type)
		require.True(t, occurred.Equal(env.Timestamp), "timestamp is when the event occurred: %s", env.Timestamp)
		require.Equal(t, map[string]any{"scan": map[string]any{"id": "s1", "status": "completed"}}, env.Data)
	}
	require.Equal(t, reqs[0].body, reqs[1].body, "a redelivery sends the same message")

	// The admin view lists the same log, for any organization.
	all, err := adm.AdminListWebhookDeliveries(context.Background(), &findingsv1.AdminListWebhookDeliveriesRequest{WebhookId: hook.GetId()})
	require.NoError(t, err)
	require.EqualValues(t, 1, all.GetTotal())
	require.EqualValues(t, 50, all.GetLimit())
	require.Equal(t, d.GetId(), all.GetData()[0].GetId())
	_, err = adm.AdminListWebhookDeliveries(context.Background(), &findingsv1.AdminListWebhookDeliveriesRequest{WebhookId: uuid.NewString()})
	requireAPIError(t, err, http.StatusNotFound, "Webhook not found")
	_, err = adm.AdminListWebhookDeliveries(context.Background(), &findingsv1.AdminListWebhookDeliveriesRequest{WebhookId: hook.GetId(), Limit: webhook.MaxLimit + 1})
	requireAPIError(t, err, http.StatusBadRequest, "limit must be between 1 and 100")
	_, err = adm.AdminRedeliverWebhookDelivery(context.Background(), &findingsv1.AdminRedeliverWebhookDeliveryRequest{DeliveryId: uuid.NewString()})
	requireAPIError(t, err, http.StatusNotFound, "Webhook delivery not found")
}

// TestListWebhookDeliveriesPaging checks the page and limit bounds and the
// pages of a webhook's delivery log.
func TestListWebhookDeliveriesPaging(t *testing.T) {
	t.Parallel()
	a := newAPI(t, []string{"127.0.0.0/8"}, 5)
	p, e := &webhook.Public{API: a}, &webhook.Events{API: a}
	org := uuid.NewString()
	ctx := orgCtx(org)
	hook, err := p.CreateWebhook(ctx, &findingsv1.CreateWebhookRequest{Url: "http://127.0.0.1:9/h", Events: []string{webhook.EstimationFailed}})
	require.NoError(t, err)
	data, err := structpb.NewStruct(map[string]any{"estimation": map[string]any{"id": "e"}})
	require.NoError(t, err)
	for i := 0; i < 5; i++ {
		_, err := e.PublishEvent(context.Background(), &findingsv1.PublishEventRequest{EventId: uuid.NewString(), OrgId: org, Type: webhook.EstimationFailed, Data: data})
		require.NoError(t, err)
	}
	i32 := func(v int32) *int32 { return &v }
	for _, c := range []struct {
		name        string
		page, limit *int32
		msg         string
		wantLen     int
		wantPage    int32
		wantLimit   int32
	}{
		{"defaults", nil, nil, "", 5, 1, webhook.DefaultLimit},
		{"page zero", i32(0), nil, "page must be at least 1", 0, 0, 0},
		{"limit zero", nil, i32(0), "limit must be between 1 and 100", 0, 0, 0},
		{"limit too large", nil, i32(webhook.MaxLimit + 1), "limit must be between 1 and 100", 0, 0, 0},
		{"first page of two", i32(1), i32(2), "", 2, 1, 2},
		{"last partial page", i32(3), i32(2), "", 1, 3, 2},
		{"past the end", i32(4), i32(2), "", 0, 4, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := p.ListWebhookDeliveries(ctx, &findingsv1.ListWebhookDeliveriesRequest{Id: hook.GetId(), Page: c.page, Limit: c.limit})
			if c.msg != "" {
				requireAPIError(t, err, http.StatusBadRequest, c.msg)
				return
			}
			require.NoError(t, err)
			require.EqualValues(t, 5, out.GetTotal())
			require.Len(t, out.GetData(), c.wantLen)
			require.Equal(t, c.wantPage, out.GetPage())
			require.Equal(t, c.wantLimit, out.GetLimit())
			for _, d := range out.GetData() {
				require.Equal(t, "pending", d.GetStatus())
				require.Zero(t, d.GetAttempts())
				require.Equal(t, hook.GetId(), d.GetWebhookId())
			}
		})
	}
}
