package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/systest"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

var allEvents = []string{"finding.created", "finding.updated", "finding.commented", "scan.completed", "scan.failed",
	"scan.cancelled", "estimation.completed", "estimation.failed"}

// createWebhook registers a webhook through the gateway and returns its id and secret.
func createWebhook(t *testing.T, key, url string, events ...string) (string, string) {
	t.Helper()
	r := do(t, "POST", "/webhooks", key, map[string]any{"url": url, "events": events, "description": "test receiver"})
	require.Equal(t, 201, r.Status, "%s", r.Body)
	m := r.JSON()
	secret, _ := m["secret"].(string)
	require.True(t, strings.HasPrefix(secret, "whsec_"), "secret %q", secret)
	return m["id"].(string), secret
}

// deliveriesOf reads a webhook's delivery log through the gateway.
func deliveriesOf(t *testing.T, key, id, query string) listResp {
	t.Helper()
	return list(t, key, "/webhooks/"+id+"/deliveries"+query)
}

func publisher(t *testing.T) findingsv1.WebhookEventServiceClient {
	t.Helper()
	cc, err := sys.Dial("findings", mtls.Scan, false)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	return findingsv1.NewWebhookEventServiceClient(cc)
}

// TestWebhooks: an organization registers a loopback receiver for every
// event; each finding event and a published scan event arrive signed per
// Standard Webhooks with a versioned payload; a 500 is retried with the same
// webhook-id; a redelivery (API and vulnscanctl) sends it again; another
// organization sees none of it.
func TestWebhooks(t *testing.T) {
	t.Parallel()
	o := newOrg(t, "auto")
	other := newOrg(t, "auto")
	recv := systest.NewWebhookReceiver(t)
	id, secret := createWebhook(t, o.WriteKey, recv.URL+"/hook?token=t0ps3cret", allEvents...)

	t.Run("read", func(t *testing.T) {
		r := do(t, "GET", "/webhooks/"+id, o.ReadKey, nil)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		m := r.JSON()
		require.NotContains(t, m, "secret")
		require.NotContains(t, string(r.Body), "t0ps3cret", "the query string may carry a token")
		require.Equal(t, recv.URL+"/hook?REDACTED", m["url"])
		l := list(t, o.ReadKey, "/webhooks")
		require.Equal(t, 1, l.Total)
		require.Equal(t, id, l.Data[0]["id"])
		require.Len(t, l.Data[0]["events"], len(allEvents))
		require.Equal(t, 0, list(t, other.ReadKey, "/webhooks").Total)
	})

	t.Run("scopes", func(t *testing.T) {
		r := do(t, "POST", "/webhooks", o.ReadKey, map[string]any{"url": recv.URL, "events": []string{"finding.created"}})
		requireError(t, r, 403, "write")
		requireError(t, do(t, "DELETE", "/webhooks/"+id, o.ReadKey, nil), 403, "write")
	})

	t.Run("foreign ids are not found", func(t *testing.T) {
		for _, c := range []struct{ method, path string }{
			{"GET", "/webhooks/" + id}, {"DELETE", "/webhooks/" + id}, {"GET", "/webhooks/" + id + "/deliveries"},
			{"POST", "/webhooks/" + id + "/deliveries/" + uuid.NewString() + "/redeliver"},
			{"GET", "/webhooks/" + uuid.NewString()},
		} {
			var body any
			if c.method == "POST" {
				body = map[string]any{}
			}
			requireError(t, do(t, c.method, c.path, other.WriteKey, body), 404, "Webhook not found")
		}
		requireError(t, do(t, "GET", "/webhooks/not-a-uuid", o.ReadKey, nil), 400, "id")
	})

	// Findings: created at intake, updated by PATCH, commented, changed
	// in bulk (one message for the batch).
	scanID := newScan(t, o, "https://github.example.com/acme/hooks-"+uuid.NewString()[:8]+".git")
	fids := report(t, scanID, fnd("wh-1", "high"), fnd("wh-2", "low"))
	created := recv.WaitFor(t, 2, time.Minute, "finding.created", systest.OfType("finding.created"))
	require.ElementsMatch(t, fids, []string{findingOf(created[0])["id"].(string), findingOf(created[1])["id"].(string)})

	r := do(t, "PATCH", "/findings/"+fids[0], o.WriteKey, map[string]any{"state": "true_positive", "reason": "confirmed"})
	require.Equal(t, 200, r.Status, "%s", r.Body)
	updated := recv.WaitFor(t, 1, time.Minute, "finding.updated", systest.OfType("finding.updated"))[0]
	require.Equal(t, "true_positive", findingOf(updated)["state"])
	changes := updated.Data()["changes"].([]any)
	require.Equal(t, map[string]any{"field": "state", "from": "open", "to": "true_positive", "reason": "confirmed"}, changes[0])
	require.Equal(t, "api", updated.Data()["actor"].(map[string]any)["source"])

	r = do(t, "POST", "/findings/"+fids[0]+"/comments", o.WriteKey, map[string]any{"comment": "Fix in review"})
	require.Equal(t, 201, r.Status, "%s", r.Body)
	commented := recv.WaitFor(t, 1, time.Minute, "finding.commented", systest.OfType("finding.commented"))[0]
	require.Equal(t, "Fix in review", commented.Data()["comment"])

	r = do(t, "POST", "/findings/bulk", o.WriteKey, map[string]any{"ids": fids, "severity": "medium", "severity_reason": "triaged"})
	require.Equal(t, 200, r.Status, "%s", r.Body)
	batch := r.JSON()["batch_id"]
	bulk := recv.WaitFor(t, 1, time.Minute, "finding.bulk_updated", func(m systest.WebhookMessage) bool {
		return m.Type() == "finding.bulk_updated" && m.Data()["batch_id"] == batch
	})
	require.Len(t, bulk, 1)
	require.Len(t, bulk[0].Data()["findings"], 2)

	// A scan event published by the scan service, twice: delivered once.
	pub := publisher(t)
	evID := uuid.NewString()
	data, err := structpb.NewStruct(map[string]any{"scan": map[string]any{"id": scanID, "status": "completed"}})
	require.NoError(t, err)
	for range 2 {
		_, err := pub.PublishEvent(ctx(t), &findingsv1.PublishEventRequest{EventId: evID, OrgId: o.ID, Type: "scan.completed",
			OccurredAt: timestamppb.Now(), Data: data})
		require.NoError(t, err)
	}
	done := recv.WaitFor(t, 1, time.Minute, "scan.completed", systest.OfType("scan.completed"))[0]
	require.Equal(t, evID, done.ID)
	require.Equal(t, scanID, done.Data()["scan"].(map[string]any)["id"])

	t.Run("signatures and payloads", func(t *testing.T) {
		for _, m := range recv.Messages() {
			require.True(t, m.Verify(secret), "signature of %s", m.ID)
			require.False(t, m.Verify("whsec_"+strings.Repeat("A", 32)), "a wrong secret must not verify")
			require.EqualValues(t, 1, m.Payload["version"])
			require.Equal(t, m.ID, m.Payload["id"], "webhook-id is the payload's id")
			ts, err := time.Parse(time.RFC3339, m.Payload["timestamp"].(string))
			require.NoError(t, err)
			require.WithinDuration(t, time.Now(), ts, 10*time.Minute)
		}
		// A tampered body does not verify.
		m := recv.Messages()[0]
		m.Body = append([]byte(nil), m.Body...)
		m.Body[len(m.Body)-2] ^= 1
		require.False(t, m.Verify(secret))
	})

	t.Run("retry after 500 keeps the webhook-id", func(t *testing.T) {
		recv.FailNext(1)
		r := do(t, "PATCH", "/findings/"+fids[1], o.WriteKey, map[string]any{"state": "false_positive"})
		require.Equal(t, 200, r.Status, "%s", r.Body)
		got := recv.WaitFor(t, 2, time.Minute, "attempts of the false_positive update", func(m systest.WebhookMessage) bool {
			return m.Type() == "finding.updated" && findingOf(m)["state"] == "false_positive"
		})
		require.Equal(t, 500, got[0].Answered)
		require.Equal(t, 204, got[1].Answered)
		require.Equal(t, got[0].ID, got[1].ID)
		require.Equal(t, got[0].Body, got[1].Body)
		require.True(t, got[1].Verify(secret))
		d := deliveryOf(t, o.ReadKey, id, got[0].ID)
		require.Eventually(t, func() bool {
			d = deliveryOf(t, o.ReadKey, id, got[0].ID)
			return d["status"] == "delivered"
		}, time.Minute, 100*time.Millisecond)
		require.EqualValues(t, 2, d["attempts"])
		require.EqualValues(t, 204, d["last_status_code"])
		require.Equal(t, "finding.updated", d["event"])
		require.NotNil(t, d["delivered_at"])
	})

	t.Run("redelivery", func(t *testing.T) {
		d := deliveryOf(t, o.ReadKey, id, evID)
		r := do(t, "POST", "/webhooks/"+id+"/deliveries/"+d["id"].(string)+"/redeliver", o.WriteKey, map[string]any{})
		require.Equal(t, 202, r.Status, "%s", r.Body)
		require.Equal(t, "pending", r.JSON()["status"])
		again := recv.WaitFor(t, 2, time.Minute, "redelivered scan.completed", func(m systest.WebhookMessage) bool { return m.ID == evID })
		require.True(t, again[1].Verify(secret))
		requireError(t, do(t, "POST", "/webhooks/"+id+"/deliveries/"+d["id"].(string)+"/redeliver", o.ReadKey, map[string]any{}), 403, "write")
		requireError(t, do(t, "POST", "/webhooks/"+id+"/deliveries/"+uuid.NewString()+"/redeliver", o.WriteKey, map[string]any{}), 404, "Webhook delivery not found")
		requireError(t, do(t, "POST", "/webhooks/"+id+"/deliveries/nope/redeliver", o.WriteKey, map[string]any{}), 400, "delivery_id")
	})

	t.Run("delivery log pages", func(t *testing.T) {
		all := deliveriesOf(t, o.ReadKey, id, "?limit=100")
		require.GreaterOrEqual(t, all.Total, 7)
		seen := map[string]bool{}
		for page := 1; page <= all.Total; page++ {
			l := deliveriesOf(t, o.ReadKey, id, fmt.Sprintf("?limit=1&page=%d", page))
			require.Len(t, l.Data, 1)
			require.Equal(t, all.Total, l.Total)
			seen[l.Data[0]["id"].(string)] = true
		}
		require.Len(t, seen, all.Total, "pages neither overlap nor skip")
		requireError(t, do(t, "GET", "/webhooks/"+id+"/deliveries?limit=101", o.ReadKey, nil), 400, "limit")
		requireError(t, do(t, "GET", "/webhooks/"+id+"/deliveries?page=0", o.ReadKey, nil), 400, "page")
	})

	t.Run("vulnscanctl", func(t *testing.T) {
		out, err := sys.Ctl("webhook", "list", "--org", o.ID)
		require.NoError(t, err)
		require.EqualValues(t, 1, out["total"])
		require.NotContains(t, fmt.Sprint(out), "t0ps3cret")
		out, err = sys.Ctl("webhook", "deliveries", id, "--limit", "100")
		require.NoError(t, err)
		var target string
		for _, d := range out["data"].([]any) {
			if d.(map[string]any)["event_id"] == evID {
				target = d.(map[string]any)["id"].(string)
			}
		}
		require.NotEmpty(t, target)
		before := len(recv.Matching(func(m systest.WebhookMessage) bool { return m.ID == evID }))
		out, err = sys.Ctl("webhook", "redeliver", target)
		require.NoError(t, err)
		require.Equal(t, target, out["id"])
		recv.WaitFor(t, before+1, time.Minute, "operator redelivery", func(m systest.WebhookMessage) bool { return m.ID == evID })
		_, err = sys.Ctl("webhook", "redeliver", uuid.NewString())
		require.Error(t, err)
	})

	t.Run("foreign organization receives nothing", func(t *testing.T) {
		otherRecv := systest.NewWebhookReceiver(t)
		createWebhook(t, other.WriteKey, otherRecv.URL, allEvents...)
		ids := report(t, newScan(t, o, "https://github.example.com/acme/iso-"+uuid.NewString()[:8]+".git"), fnd("iso-1", "high"))
		recv.WaitFor(t, 1, time.Minute, "finding.created of the new finding", func(m systest.WebhookMessage) bool {
			return m.Type() == "finding.created" && findingOf(m)["id"] == ids[0]
		})
		// The receiver of the other organization got nothing at all.
		require.Empty(t, otherRecv.Messages())
	})

	t.Run("delete", func(t *testing.T) {
		r := do(t, "DELETE", "/webhooks/"+id, o.WriteKey, nil)
		require.Equal(t, 204, r.Status, "%s", r.Body)
		requireError(t, do(t, "GET", "/webhooks/"+id, o.ReadKey, nil), 404, "Webhook not found")
		requireError(t, do(t, "DELETE", "/webhooks/"+id, o.WriteKey, nil), 404, "Webhook not found")
	})
}

// TestWebhookBulkChange: a bulk change of many findings reaches each
// webhook subscribed to finding.updated as one signed finding.bulk_updated
// message carrying the whole batch, not one message per finding; a webhook
// not subscribed to finding.updated gets nothing of it; a single PATCH
// still sends finding.updated.
func TestWebhookBulkChange(t *testing.T) {
	t.Parallel()
	const n = 40
	o := newOrg(t, "auto")
	_, ids := seedMany(t, o.ID, n, "high")
	type hook struct {
		recv       *systest.WebhookReceiver
		id, secret string
	}
	var hooks []hook
	for _, events := range [][]string{{"finding.updated"}, {"finding.commented", "finding.updated"}} {
		recv := systest.NewWebhookReceiver(t)
		id, secret := createWebhook(t, o.WriteKey, recv.URL, events...)
		hooks = append(hooks, hook{recv, id, secret})
	}
	otherRecv := systest.NewWebhookReceiver(t)
	other, _ := createWebhook(t, o.WriteKey, otherRecv.URL, "finding.commented")

	r := do(t, "POST", "/findings/bulk", o.WriteKey, map[string]any{"ids": ids, "state": "accepted_risk", "reason": "vendor fix pending"})
	require.Equal(t, 200, r.Status, "%s", r.Body)
	res := r.JSON()
	require.EqualValues(t, n, res["changed"])
	batch := res["batch_id"].(string)

	// Deliveries are written in the bulk change's transaction, so the logs
	// are complete as soon as it answered: one delivery per webhook.
	for _, h := range hooks {
		l := deliveriesOf(t, o.ReadKey, h.id, "?limit=100")
		require.Equal(t, 1, l.Total, "one delivery for %d findings", n)
		require.Equal(t, "finding.bulk_updated", l.Data[0]["event"])
	}
	require.Zero(t, deliveriesOf(t, o.ReadKey, other, "").Total)

	for _, h := range hooks {
		m := h.recv.WaitFor(t, 1, time.Minute, "finding.bulk_updated", systest.OfType("finding.bulk_updated"))[0]
		require.True(t, m.Verify(h.secret), "signature")
		require.EqualValues(t, 1, m.Payload["version"])
		require.Equal(t, m.ID, m.Payload["id"])
		d := m.Data()
		require.Equal(t, batch, d["batch_id"])
		require.Equal(t, "vendor fix pending", d["comment"])
		require.Equal(t, "api", d["actor"].(map[string]any)["source"])
		items := d["findings"].([]any)
		require.Len(t, items, n)
		var got []string
		for _, it := range items {
			f := it.(map[string]any)["finding"].(map[string]any)
			got = append(got, f["id"].(string))
			require.Equal(t, "accepted_risk", f["state"])
			require.Equal(t, []any{map[string]any{"field": "state", "from": "open", "to": "accepted_risk", "reason": "vendor fix pending"}},
				it.(map[string]any)["changes"])
		}
		require.ElementsMatch(t, ids, got)
		require.Empty(t, h.recv.Matching(systest.OfType("finding.updated")), "no per-finding messages for a bulk change")
	}

	r = do(t, "PATCH", "/findings/"+ids[0], o.WriteKey, map[string]any{"state": "open", "reason": "fix shipped"})
	require.Equal(t, 200, r.Status, "%s", r.Body)
	for _, h := range hooks {
		m := h.recv.WaitFor(t, 1, time.Minute, "finding.updated", systest.OfType("finding.updated"))[0]
		require.True(t, m.Verify(h.secret))
		require.Equal(t, ids[0], findingOf(m)["id"])
		require.NotContains(t, m.Data(), "batch_id")
		require.Len(t, h.recv.Messages(), 2, "one bulk message and one update, nothing else")
	}
	require.Empty(t, otherRecv.Messages())
}

func findingOf(m systest.WebhookMessage) map[string]any {
	f, _ := m.Data()["finding"].(map[string]any)
	return f
}

// deliveryOf finds the delivery of event evID in a webhook's log.
func deliveryOf(t *testing.T, key, webhookID, evID string) map[string]any {
	t.Helper()
	for _, d := range deliveriesOf(t, key, webhookID, "?limit=100").Data {
		if d["event_id"] == evID {
			return d
		}
	}
	t.Fatalf("no delivery of event %s", evID)
	return nil
}

// TestWebhookValidation: bad registrations answer 400 naming the field,
// and the per-organization limit 409, in the spec's body.
func TestWebhookValidation(t *testing.T) {
	t.Parallel()
	o := newOrg(t, "auto")
	recv := systest.NewWebhookReceiver(t)
	for _, c := range []struct {
		body any
		msg  string
	}{
		{map[string]any{"events": []string{"finding.created"}}, "url is required"},
		{map[string]any{"url": "ftp://example.com/x", "events": []string{"finding.created"}}, "url must use https or http"},
		{map[string]any{"url": "not a url", "events": []string{"finding.created"}}, "url"},
		{map[string]any{"url": "https://user:pw@example.com/x", "events": []string{"finding.created"}}, "url must not contain credentials"},
		{map[string]any{"url": "http://93.184.216.34/hook", "events": []string{"finding.created"}}, "url must use https"},
		{map[string]any{"url": "https://10.1.2.3/hook", "events": []string{"finding.created"}}, "url must resolve to a public address"},
		{map[string]any{"url": "https://[::1]/hook", "events": []string{"finding.created"}}, "url must resolve to a public address"},
		{map[string]any{"url": "https://169.254.169.254/latest", "events": []string{"finding.created"}}, "url must resolve to a public address"},
		{map[string]any{"url": "https://metadata.internal/hook", "events": []string{"finding.created"}}, "url must resolve to a public address"},
		{map[string]any{"url": recv.URL}, "events must name at least one event type"},
		{map[string]any{"url": recv.URL, "events": []string{}}, "events must name at least one event type"},
		{map[string]any{"url": recv.URL, "events": []string{"finding.created", "finding.deleted"}}, `events: unknown event type "finding.deleted"`},
		{map[string]any{"url": recv.URL, "events": []string{"finding.created"}, "description": strings.Repeat("d", 201)}, "description"},
		{map[string]any{"url": recv.URL, "events": []string{"finding.created"}, "secret": "mine"}, "secret"},
	} {
		requireError(t, do(t, "POST", "/webhooks", o.WriteKey, c.body), 400, c.msg)
	}
	require.Equal(t, 0, list(t, o.ReadKey, "/webhooks").Total)

	// The limit (FINDINGS_MAX_WEBHOOKS=3 in this suite); deleting one frees a place.
	var ids []string
	for range 3 {
		id, _ := createWebhook(t, o.WriteKey, recv.URL, "scan.completed")
		ids = append(ids, id)
	}
	requireError(t, do(t, "POST", "/webhooks", o.WriteKey, map[string]any{"url": recv.URL, "events": []string{"scan.completed"}}),
		409, "Webhook limit reached: an organization may have at most 3 webhooks")
	require.Equal(t, 204, do(t, "DELETE", "/webhooks/"+ids[0], o.WriteKey, nil).Status)
	createWebhook(t, o.WriteKey, recv.URL, "scan.completed")
}

// TestPublishEventValidation: the scan and estimation services' entry
// point checks what it records, and only they may call it.
func TestPublishEventValidation(t *testing.T) {
	t.Parallel()
	connect(t)
	pub := publisher(t)
	data, _ := structpb.NewStruct(map[string]any{"scan": map[string]any{}})
	for _, c := range []struct {
		req *findingsv1.PublishEventRequest
		msg string
	}{
		{&findingsv1.PublishEventRequest{OrgId: uuid.NewString(), Type: "scan.completed", Data: data}, "event_id"},
		{&findingsv1.PublishEventRequest{EventId: uuid.NewString(), Type: "scan.completed", Data: data}, "org_id"},
		{&findingsv1.PublishEventRequest{EventId: uuid.NewString(), OrgId: uuid.NewString(), Type: "finding.created", Data: data}, "type"},
		{&findingsv1.PublishEventRequest{EventId: uuid.NewString(), OrgId: uuid.NewString(), Type: "scan.completed"}, "data"},
	} {
		_, err := pub.PublishEvent(ctx(t), c.req)
		require.ErrorContains(t, err, c.msg)
	}
	// The gateway's identity may not publish.
	cc, err := sys.Dial("findings", mtls.Gateway, false)
	require.NoError(t, err)
	defer func() { _ = cc.Close() }()
	_, err = findingsv1.NewWebhookEventServiceClient(cc).PublishEvent(ctx(t), &findingsv1.PublishEventRequest{EventId: uuid.NewString(),
		OrgId: uuid.NewString(), Type: "scan.completed", Data: data})
	require.ErrorContains(t, err, "PermissionDenied")
}

// TestWebhookFindingCreatedOnApproval: with manual verification a finding
// is created for webhooks when an operator approves it, not when reported.
func TestWebhookFindingCreatedOnApproval(t *testing.T) {
	t.Parallel()
	o := newOrg(t, "manual")
	recv := systest.NewWebhookReceiver(t)
	hook, secret := createWebhook(t, o.WriteKey, recv.URL, "finding.created")
	ids := report(t, newScan(t, o, "https://github.example.com/acme/manual-"+uuid.NewString()[:8]+".git"), fnd("m-1", "high"), fnd("m-2", "low"))
	// The reports are recorded; nothing is visible, so nothing is queued
	// (events are written in the reporting transaction).
	require.Equal(t, 0, deliveriesOf(t, o.ReadKey, hook, "").Total)
	_, err := intake.ApproveFinding(ctx(t), &findingsv1.ApproveFindingRequest{Id: ids[1]})
	require.NoError(t, err)
	got := recv.WaitFor(t, 1, time.Minute, "finding.created on approval", systest.OfType("finding.created"))
	require.Equal(t, ids[1], findingOf(got[0])["id"])
	require.True(t, got[0].Verify(secret))
	// Approving again creates nothing new.
	_, err = intake.ApproveFinding(ctx(t), &findingsv1.ApproveFindingRequest{Id: ids[1]})
	require.NoError(t, err)
	_, err = intake.RejectFinding(ctx(t), &findingsv1.RejectFindingRequest{Id: ids[0]})
	require.NoError(t, err)
	require.Equal(t, 1, deliveriesOf(t, o.ReadKey, hook, "").Total)
}
