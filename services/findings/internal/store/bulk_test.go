package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// TestApplyBulk: one bulk change over findings of two scans counts what it
// matched and changed, audits each changed finding under one batch id,
// gives each integration one event per scan (no per-finding events) and
// each webhook subscribed to finding.updated one finding.bulk_updated
// event for the whole batch.
func TestApplyBulk(t *testing.T) {
	u := newUnit(t)
	chat, git := u.integration("slack"), u.integration("github")
	updates := u.hook("finding.updated")
	u.hook("finding.commented")
	first := u.findings("https://git.example.com/acme/app", "a", "b")
	second := u.findings("https://git.example.com/acme/app", "c")
	_, err := u.s.Apply(u.ctx, u.org, second[0], Update{State: ptr("accepted_risk")}, apiActor)
	require.NoError(t, err)
	before := len(u.outboxRows())
	hooksBefore := len(u.hookEvents())

	ids := append(append([]string{}, first...), second...)
	res, err := u.s.ApplyBulk(u.ctx, u.org, ids, nil, Update{State: ptr("accepted_risk"), StateReason: "vendor fix pending"}, apiActor)
	require.NoError(t, err)
	require.Equal(t, 3, res.Matched)
	require.Equal(t, 2, res.Changed, "the third already had the state")
	_, err = uuid.Parse(res.BatchID)
	require.NoError(t, err)

	for _, id := range first {
		require.Equal(t, "accepted_risk", u.state(id))
		a := u.audit(id)
		require.Len(t, a, 1)
		require.Equal(t, res.BatchID, *a[0].Batch)
		require.Equal(t, "vendor fix pending", *a[0].Reason)
	}
	require.Len(t, u.audit(second[0]), 1, "the unchanged finding only has its earlier record")

	ob := u.outboxRows()[before:]
	require.Len(t, ob, 2, "one event per integration for the one scan that changed")
	var got []string
	for _, o := range ob {
		require.Equal(t, EventBulkUpdated, o.Event)
		require.Equal(t, res.BatchID, o.Batch)
		require.Empty(t, o.Finding)
		require.Len(t, o.Payload["findings"], 2)
		got = append(got, o.Integration)
	}
	require.ElementsMatch(t, []string{chat.ID, git.ID}, got)

	hooks := u.hookEvents()[hooksBefore:]
	require.Len(t, hooks, 1, "one webhook event for the batch")
	ev := hooks[0]
	require.Equal(t, "finding.bulk_updated", ev.Type)
	require.Equal(t, []string{updates}, ev.Webhooks, "only the webhook subscribed to finding.updated")
	require.EqualValues(t, 1, ev.Payload["version"])
	data := ev.Payload["data"].(map[string]any)
	require.Equal(t, res.BatchID, data["batch_id"])
	require.Equal(t, "vendor fix pending", data["comment"])
	var listed []string
	for _, it := range data["findings"].([]any) {
		f := it.(map[string]any)
		listed = append(listed, f["finding"].(map[string]any)["id"].(string))
		require.Equal(t, "accepted_risk", f["finding"].(map[string]any)["state"])
		require.Len(t, f["changes"], 1)
	}
	require.ElementsMatch(t, first, listed, "the changed findings")
}

// TestApplyBulkAllOrNothing: a missing id or an invalid duplicate link on
// any finding rolls the whole change back.
func TestApplyBulkAllOrNothing(t *testing.T) {
	u := newUnit(t)
	u.integration("slack")
	ids := u.findings("https://git.example.com/acme/app", "a", "b", "c")
	foreign := uuid.NewString()
	_, err := u.s.ApplyBulk(u.ctx, u.org, append([]string{foreign}, ids...), nil, Update{State: ptr("resolved")}, apiActor)
	var miss *MissingError
	require.True(t, errors.As(err, &miss))
	require.Equal(t, foreign, miss.ID)
	require.ErrorIs(t, err, ErrNotFound)

	_, err = u.s.ApplyBulk(u.ctx, u.org, ids, nil, Update{DuplicateSet: true, DuplicateOf: &ids[0]}, apiActor)
	var inv *InvalidError
	require.True(t, errors.As(err, &inv))
	require.Contains(t, inv.Msg, "finding "+ids[0]+": duplicate_of must not be the finding itself")

	for _, id := range ids {
		require.Equal(t, "open", u.state(id))
		require.Empty(t, u.audit(id))
	}
	require.Empty(t, u.outboxRows())
}

// TestApplyBulkFilter: a filter selects the organization's matching
// findings only, and one matching nothing changes nothing.
func TestApplyBulkFilter(t *testing.T) {
	u := newUnit(t)
	ids := u.findings("https://git.example.com/acme/app", "a", "b", "c")
	_, err := u.s.Apply(u.ctx, u.org, ids[1], Update{State: ptr("true_positive")}, apiActor)
	require.NoError(t, err)
	other := &unit{t: t, ctx: u.ctx, s: u.s, org: uuid.NewString()}
	theirs := other.findings("https://git.example.com/acme/app", "a")

	res, err := u.s.ApplyBulk(u.ctx, u.org, nil, &Filter{State: "open"}, Update{Severity: ptr("low")}, apiActor)
	require.NoError(t, err)
	require.Equal(t, 2, res.Matched)
	require.Equal(t, 2, res.Changed)
	var sevs []string
	for _, id := range append(ids, theirs...) {
		var s string
		require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT severity FROM findings.findings WHERE id = $1`, id).Scan(&s))
		sevs = append(sevs, s)
	}
	require.Equal(t, []string{"low", "high", "low", "high"}, sevs)

	res, err = u.s.ApplyBulk(u.ctx, u.org, nil, &Filter{State: "resolved"}, Update{Severity: ptr("low")}, apiActor)
	require.NoError(t, err)
	require.Equal(t, BulkResult{BatchID: res.BatchID}, res)
}

// TestApplyBulkFilterTooWide: a filter matching more than MaxBulk findings
// is refused and changes nothing, and finding that out reads no more than
// MaxBulk+1 of them, with either plan (see planModes).
func TestApplyBulkFilterTooWide(t *testing.T) {
	u := newUnit(t)
	sc := u.scan("https://git.example.com/acme/large")
	u.reportMany(sc, 1500, func(i int) Reported {
		return Reported{Fingerprint: fmt.Sprintf("fp-%05d", i), Title: "t", Category: "injection", Severity: "high", Verified: true}
	})

	_, err := u.s.ApplyBulk(u.ctx, u.org, nil, &Filter{State: "open"}, Update{Severity: ptr("low")}, apiActor)
	var inv *InvalidError
	require.ErrorAs(t, err, &inv)
	require.Contains(t, inv.Msg, "filter matches more than 1000 findings")
	require.Equal(t, 0, u.count(`SELECT count(*) FROM findings.findings WHERE org_id = $1 AND severity <> 'high'`, u.org))

	match, args := Filter{OrgID: u.org, State: "open"}.bulkMatchSQL(MaxBulk + 1)
	require.Len(t, args, 3)
	for _, mode := range planModes {
		t.Run(mode, func(t *testing.T) {
			p := u.prepare(t, mode, "bulk_match", "uuid, text, int", match, args...)
			assert.LessOrEqual(t, findingsRead(p), float64(MaxBulk+1), "findings rows read to find the filter too wide")
		})
	}
}

// TestApplyBulkScanFilter: a filter naming a scan changes that scan's
// matching findings alone, and finds them among its occurrences, with
// either plan, without reading the organization's other findings.
func TestApplyBulkScanFilter(t *testing.T) {
	u := newUnit(t)
	u.largeScan(1200, "injection")
	sc := u.scan("https://git.example.com/acme/app")
	var batch []Reported
	for i, sev := range []string{"high", "high", "low", "high"} {
		batch = append(batch, Reported{Fingerprint: fmt.Sprintf("app-%d", i), Title: "t", Category: "injection", Severity: sev, Verified: i != 3})
	}
	_, err := u.s.Report(u.ctx, sc, batch, true)
	require.NoError(t, err)

	f := Filter{ScanID: sc.ID, Severity: "high"}
	res, err := u.s.ApplyBulk(u.ctx, u.org, nil, &f, Update{State: ptr("resolved")}, apiActor)
	require.NoError(t, err)
	require.Equal(t, 2, res.Matched, "the scan's two approved high findings")
	require.Equal(t, 2, res.Changed)
	require.Equal(t, 2, u.count(`SELECT count(*) FROM findings.findings WHERE org_id = $1 AND state = 'resolved'`, u.org))

	f.OrgID = u.org
	match, args := f.bulkMatchSQL(MaxBulk + 1)
	require.Len(t, args, 4)
	for _, mode := range planModes {
		t.Run(mode, func(t *testing.T) {
			p := u.prepare(t, mode, "bulk_scan_match", "", match, args...)
			assert.Zero(t, findingsRead(p), "findings rows read to find the scan's")
			// The scan's occurrences alone, each read at most twice: an
			// index entry, and its row when read through a bitmap.
			assert.LessOrEqual(t, dbtest.RowsRead(p.Explain(), "occurrences", true), float64(2*len(batch)), "occurrences read")
		})
	}
}
