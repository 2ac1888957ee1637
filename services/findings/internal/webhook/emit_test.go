package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/db"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
	"github.com/vulnscan/vulnscan/services/findings/internal/store/storetest"
	"github.com/vulnscan/vulnscan/services/findings/internal/webhook"
)

// emitted is one written event with the webhooks it is queued for.
type emitted struct {
	typ     string
	payload map[string]any
	hooks   []string
}

// emittedEvents reads the organization's events, oldest first.
func emittedEvents(t *testing.T, s *store.Store, org string) []emitted {
	t.Helper()
	rows, err := s.Pool.Query(context.Background(), `SELECT e.type, e.payload::text,
			coalesce((SELECT array_agg(d.webhook_id::text ORDER BY d.webhook_id) FROM findings.webhook_deliveries d WHERE d.event_id = e.id), '{}')
		FROM findings.webhook_events e WHERE e.org_id = $1 ORDER BY e.created_at, e.id`, org)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (emitted, error) {
		var e emitted
		var payload string
		if err := r.Scan(&e.typ, &payload, &e.hooks); err != nil {
			return e, err
		}
		return e, json.Unmarshal([]byte(payload), &e.payload)
	})
	require.NoError(t, err)
	return out
}

// TestEmitFindingsAndBatch writes finding events inside a transaction: one
// event per finding (or one for a bulk change) queued for exactly the
// organization's active webhooks subscribed to the type, each payload the
// versioned envelope of the findings as they are.
func TestEmitFindingsAndBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t, "findings_webhook")
	org := uuid.NewString()
	sc := storetest.Scan(t, s, org, "https://git.example.com/acme/app")
	ids := storetest.Report(t, s, sc,
		store.Reported{Fingerprint: "a", Title: "SQL injection", Category: "injection", Severity: "high", AffectedFile: "db.go", StartLine: 9},
		store.Reported{Fingerprint: "b", Title: "Open redirect", Category: "redirect", Severity: "low", AffectedFile: "web.go"})

	api := newAPI(t, []string{"127.0.0.0/8"}, 10)
	api.Store = &webhook.Store{Pool: s.Pool}
	p := &webhook.Public{API: api}
	hook := func(org string, events ...string) string {
		out, err := p.CreateWebhook(orgCtx(org), &findingsv1.CreateWebhookRequest{Url: "http://127.0.0.1:9/h", Events: events})
		require.NoError(t, err)
		return out.GetId()
	}
	updated := hook(org, webhook.FindingUpdated, webhook.ScanCompleted)
	hook(org, webhook.FindingCreated)
	hook(uuid.NewString(), webhook.FindingUpdated)
	removed := hook(org, webhook.FindingUpdated)
	_, err := p.DeleteWebhook(orgCtx(org), &findingsv1.DeleteWebhookRequest{Id: removed})
	require.NoError(t, err)

	emit := func(fn func(tx pgx.Tx) error) error { return db.InTx(ctx, s.Pool, fn) }
	actor := &webhook.Actor{UserID: "u1", Username: "ana", Source: "api"}
	changes := []map[string]any{{"field": "state", "from": "open", "to": "resolved"}}

	// Nothing is written without items or without a subscriber.
	require.NoError(t, emit(func(tx pgx.Tx) error { return webhook.EmitFindings(ctx, tx, org, webhook.FindingUpdated, nil, actor) }))
	require.NoError(t, emit(func(tx pgx.Tx) error {
		return webhook.EmitFindings(ctx, tx, org, webhook.FindingCommented, []webhook.FindingItem{{ID: ids[0], Comment: "x"}}, actor)
	}))
	require.Empty(t, emittedEvents(t, s, org))
	// A finding that does not exist fails the transaction.
	err = emit(func(tx pgx.Tx) error {
		return webhook.EmitFindings(ctx, tx, org, webhook.FindingUpdated, []webhook.FindingItem{{ID: ids[0]}, {ID: uuid.NewString()}}, actor)
	})
	require.ErrorContains(t, err, "1 of 2 findings not found")
	require.Empty(t, emittedEvents(t, s, org))

	require.NoError(t, emit(func(tx pgx.Tx) error {
		return webhook.EmitFindings(ctx, tx, org, webhook.FindingUpdated, []webhook.FindingItem{{ID: ids[1], Changes: changes}, {ID: ids[0]}}, actor)
	}))
	require.NoError(t, emit(func(tx pgx.Tx) error {
		return webhook.EmitBatch(ctx, tx, org, "batch-1", []webhook.FindingItem{{ID: ids[0], Changes: changes}, {ID: ids[1], Changes: changes}}, "triaged together", actor)
	}))

	evs := emittedEvents(t, s, org)
	require.Len(t, evs, 3)
	byFinding := map[string]map[string]any{}
	for _, e := range evs[:2] {
		require.Equal(t, webhook.FindingUpdated, e.typ)
		require.Equal(t, []string{updated}, e.hooks, "only the active subscriber of the organization")
		require.EqualValues(t, webhook.PayloadVersion, e.payload["version"])
		require.Equal(t, webhook.FindingUpdated, e.payload["type"])
		require.NoError(t, uuid.Validate(e.payload["id"].(string)))
		data := e.payload["data"].(map[string]any)
		require.Equal(t, map[string]any{"user_id": "u1", "username": "ana", "source": "api"}, data["actor"])
		f := data["finding"].(map[string]any)
		byFinding[f["id"].(string)] = data
	}
	sqli := byFinding[ids[0]]["finding"].(map[string]any)
	require.Equal(t, "SQL injection", sqli["title"])
	require.Equal(t, "high", sqli["severity"])
	require.Equal(t, "db.go", sqli["affected_file"])
	require.EqualValues(t, 9, sqli["line"])
	require.Equal(t, sc.ID, sqli["scan_id"])
	require.Equal(t, "https://git.example.com/acme/app", sqli["repo_url"])
	require.NotContains(t, byFinding[ids[0]], "changes", "no changes given, none sent")
	redirect := byFinding[ids[1]]
	require.Nil(t, redirect["finding"].(map[string]any)["line"], "no line is null")
	require.Equal(t, []any{map[string]any{"field": "state", "from": "open", "to": "resolved"}}, redirect["changes"])

	bulk := evs[2]
	require.Equal(t, webhook.FindingBulkUpdated, bulk.typ)
	require.Equal(t, []string{updated}, bulk.hooks, "a bulk change reaches finding.updated subscribers once")
	require.Equal(t, webhook.FindingBulkUpdated, bulk.payload["type"])
	data := bulk.payload["data"].(map[string]any)
	require.Equal(t, "batch-1", data["batch_id"])
	require.Equal(t, "triaged together", data["comment"])
	fs := data["findings"].([]any)
	require.Len(t, fs, 2)
	for i, id := range ids {
		item := fs[i].(map[string]any)
		require.Equal(t, id, item["finding"].(map[string]any)["id"], "in the order given")
		require.Len(t, item["changes"], 1)
	}
}

// TestCheckURLGuardAllowsOnlyExemptRanges: an exemption covers its own
// range only; a loopback exemption does not open private networks.
func TestCheckURLGuardAllowsOnlyExemptRanges(t *testing.T) {
	t.Parallel()
	p := &webhook.Public{API: newAPI(t, []string{"127.0.0.0/8"}, 5)}
	ctx := orgCtx(uuid.NewString())
	for _, c := range []struct {
		url string
		msg string
	}{
		{"http://127.0.0.1:9/h", ""},
		{"http://127.10.0.1:9/h", ""},
		{"http://10.0.0.1/h", "url must use https"},
		{"https://10.0.0.1/h", "must resolve to a public address"},
		{"https://[fd00::1]/h", "must resolve to a public address"},
	} {
		t.Run(c.url, func(t *testing.T) {
			_, err := p.CreateWebhook(ctx, &findingsv1.CreateWebhookRequest{Url: c.url, Events: []string{webhook.ScanFailed}})
			if c.msg == "" {
				require.NoError(t, err)
				return
			}
			requireAPIError(t, err, http.StatusBadRequest, c.msg)
		})
	}
}
