package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReopenExpired: acceptances whose end has passed by the given clock
// reopen as the agent would reopen them (audit with source agent and the
// reason, thread entry, integration event), at most limit per call; one
// not yet ended, and one accepted without an end, stay.
func TestReopenExpired(t *testing.T) {
	u := newUnit(t)
	u.integration("slack")
	ids := u.findings("https://git.example.com/acme/app", "a", "b", "c", "d", "e")
	now := time.Now().UTC().Truncate(time.Second)
	ends := []time.Time{now.Add(time.Hour), now.Add(2 * time.Hour), now.Add(3 * time.Hour), now.Add(10 * time.Hour)}
	for i, end := range ends {
		_, err := u.s.Apply(u.ctx, u.org, ids[i], Update{State: ptr("accepted_risk"), ExpiresAt: &end}, apiActor)
		require.NoError(t, err)
	}
	_, err := u.s.Apply(u.ctx, u.org, ids[4], Update{State: ptr("accepted_risk")}, apiActor)
	require.NoError(t, err)
	before := len(u.outboxRows())

	clock := now.Add(5 * time.Hour)
	n, err := u.s.ReopenExpired(u.ctx, clock, 2)
	require.NoError(t, err)
	require.Equal(t, 2, n, "the limit")
	require.Equal(t, []string{"open", "open", "accepted_risk"}, []string{u.state(ids[0]), u.state(ids[1]), u.state(ids[2])}, "earliest end first")
	n, err = u.s.ReopenExpired(u.ctx, clock, 2)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = u.s.ReopenExpired(u.ctx, clock, 2)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, "accepted_risk", u.state(ids[3]), "not ended yet")
	require.Equal(t, "accepted_risk", u.state(ids[4]), "accepted without an end")

	a := u.audit(ids[0])
	require.Len(t, a, 4, "accept: state and end; reopen: state and end")
	require.Equal(t, "agent", a[2].Source)
	require.Equal(t, "state", a[2].Field)
	require.Equal(t, "open", *a[2].To)
	require.Equal(t, "Risk acceptance expired at "+ends[0].Format(time.RFC3339), *a[2].Reason)
	require.Equal(t, "risk_expires_at", a[3].Field)
	require.Nil(t, a[3].To)
	var entry string
	require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT source FROM findings.triage_entries WHERE finding_id = $1 AND reaction = 'open'`, ids[0]).Scan(&entry))
	require.Equal(t, "agent", entry)
	ob := u.outboxRows()[before:]
	require.Len(t, ob, 3, "one event per reopened finding")
	for _, o := range ob {
		require.Equal(t, "finding.updated", o.Event)
		require.Equal(t, "agent", o.Payload["actor"].(map[string]any)["source"])
	}
}
