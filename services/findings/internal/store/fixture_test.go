package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/services/findings/internal/webhook"
)

// unit is what a store unit test works on: a store over a database of its
// own (a clone of the migrated template, so tests run in parallel) and one
// organization.
type unit struct {
	t   *testing.T
	ctx context.Context
	s   *Store
	org string
}

// newUnit marks t parallel and gives it a fresh database and organization.
func newUnit(t *testing.T) *unit {
	t.Helper()
	t.Parallel()
	return &unit{t: t, ctx: context.Background(), s: &Store{Pool: dbtest.Migrated(t, "findings_store", Migrate)}, org: uuid.NewString()}
}

// scan registers a pull request scan of repo at commit abc.
func (u *unit) scan(repo string) Scan {
	u.t.Helper()
	sc := Scan{ID: uuid.NewString(), OrgID: u.org, RepoURL: repo, ScanType: "pr", CommitSHA: "abc", PullRequest: 9}
	_, err := u.s.RegisterScan(u.ctx, sc)
	require.NoError(u.t, err)
	return sc
}

// reportMany reports n findings in scan sc, in batches of 100 as a scanner
// sends them; finding i is mk(i).
func (u *unit) reportMany(sc Scan, n int, mk func(i int) Reported) {
	u.t.Helper()
	for i := 0; i < n; i += 100 {
		batch := make([]Reported, 0, 100)
		for j := i; j < min(i+100, n); j++ {
			batch = append(batch, mk(j))
		}
		_, err := u.s.Report(u.ctx, sc, batch, true)
		require.NoError(u.t, err)
	}
}

// largeScan reports, in a scan of its own, n approved high findings of
// category with tags: the rest of an organization, beside the scan a test
// looks at.
func (u *unit) largeScan(n int, category string, tags ...string) Scan {
	u.t.Helper()
	sc := u.scan("https://git.example.com/acme/large")
	u.reportMany(sc, n, func(i int) Reported {
		return Reported{Fingerprint: fmt.Sprintf("fp-%05d", i), Title: "t", Category: category, Severity: "high", Verified: true, Tags: tags}
	})
	return sc
}

// findings reports one verified (so approved) high finding per
// fingerprint in a new scan of repo and returns their ids in order.
func (u *unit) findings(repo string, fps ...string) []string {
	u.t.Helper()
	sc := u.scan(repo)
	batch := make([]Reported, len(fps))
	for i, fp := range fps {
		batch[i] = Reported{Fingerprint: fp, Title: "SQL injection " + fp, Category: "injection", Severity: "high",
			AffectedFile: "app/" + fp + ".py", StartLine: 3, Verified: true}
	}
	res, err := u.s.Report(u.ctx, sc, batch, true)
	require.NoError(u.t, err)
	ids := make([]string, len(res))
	for i, r := range res {
		require.Equal(u.t, Approved, r.VerificationStatus)
		ids[i] = r.FindingID
	}
	return ids
}

// integration adds an active integration of kind to the organization.
func (u *unit) integration(kind string) Integration {
	u.t.Helper()
	i, err := u.s.AddIntegration(u.ctx, Integration{OrgID: u.org, Kind: kind, Name: kind, URL: "https://" + kind + ".example.com/api"})
	require.NoError(u.t, err)
	return i
}

// count runs a count query.
func (u *unit) count(query string, args ...any) int {
	u.t.Helper()
	var n int
	require.NoError(u.t, u.s.Pool.QueryRow(u.ctx, query, args...).Scan(&n))
	return n
}

// state is a finding's state.
func (u *unit) state(id string) string {
	u.t.Helper()
	var s string
	require.NoError(u.t, u.s.Pool.QueryRow(u.ctx, `SELECT state FROM findings.findings WHERE id = $1`, id).Scan(&s))
	return s
}

// apiActor is a user changing findings through the API with a key.
var apiActor = Actor{UserID: uuid.NewString(), Username: "ana", KeyID: "k-1234567890", Source: "api"}

func ptr[T any](v T) *T { return &v }

// outboxRow is an integration event as a test reads it back.
type outboxRow struct {
	Event, Integration, Finding, Batch string
	Payload                            map[string]any
}

// outboxRows lists the organization's integration events, oldest first.
func (u *unit) outboxRows() []outboxRow {
	u.t.Helper()
	rows, err := u.s.Pool.Query(u.ctx, `SELECT event, integration_id::text, coalesce(finding_id::text, ''), coalesce(batch_id::text, ''), payload
		FROM findings.outbox WHERE org_id = $1 ORDER BY id`, u.org)
	require.NoError(u.t, err)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (outboxRow, error) {
		var o outboxRow
		return o, r.Scan(&o.Event, &o.Integration, &o.Finding, &o.Batch, &o.Payload)
	})
	require.NoError(u.t, err)
	return out
}

// hook registers an outbound webhook of the organization for events.
func (u *unit) hook(events ...string) string {
	u.t.Helper()
	w, err := (&webhook.Store{Pool: u.s.Pool}).Create(u.ctx, webhook.Webhook{ID: uuid.NewString(), OrgID: u.org, URL: "https://hooks.example.com/in",
		URLEnc: []byte("sealed-url"), SecretEnc: []byte("sealed-secret"), Events: events}, 10)
	require.NoError(u.t, err)
	return w.ID
}

// hookEvent is an outbound webhook event with the webhooks it is queued for.
type hookEvent struct {
	Type     string
	Payload  map[string]any
	Webhooks []string
}

// hookEvents lists the organization's webhook events, oldest first.
func (u *unit) hookEvents() []hookEvent {
	u.t.Helper()
	rows, err := u.s.Pool.Query(u.ctx, `SELECT e.type, e.payload, coalesce(array_agg(d.webhook_id::text ORDER BY d.webhook_id) FILTER (WHERE d.id IS NOT NULL), '{}')
		FROM findings.webhook_events e LEFT JOIN findings.webhook_deliveries d ON d.event_id = e.id
		WHERE e.org_id = $1 GROUP BY e.id, e.type, e.payload, e.created_at ORDER BY e.created_at, e.type`, u.org)
	require.NoError(u.t, err)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (hookEvent, error) {
		var e hookEvent
		return e, r.Scan(&e.Type, &e.Payload, &e.Webhooks)
	})
	require.NoError(u.t, err)
	return out
}

// auditRow is one audit record.
type auditRow struct {
	Field, Source    string
	From, To, Reason *string
	KeyID, Batch     *string
}

// audit lists a finding's audit records, oldest first.
func (u *unit) audit(id string) []auditRow {
	u.t.Helper()
	rows, err := u.s.Pool.Query(u.ctx, `SELECT field, source, from_value, to_value, reason, actor_key_id, batch_id::text
		FROM findings.audit_log WHERE finding_id = $1 ORDER BY id`, id)
	require.NoError(u.t, err)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (auditRow, error) {
		var a auditRow
		return a, r.Scan(&a.Field, &a.Source, &a.From, &a.To, &a.Reason, &a.KeyID, &a.Batch)
	})
	require.NoError(u.t, err)
	return out
}

// listIDs returns the ids of List's page of f, in order, and its total.
func listIDs(t *testing.T, s *Store, f Filter) ([]string, int64) {
	t.Helper()
	got, total, err := s.List(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return findingIDs(got), total
}

// findingIDs returns the ids of list, in order.
func findingIDs(list []Finding) []string {
	var ids []string
	for _, fd := range list {
		ids = append(ids, fd.ID)
	}
	return ids
}
