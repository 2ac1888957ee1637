package store

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestApplyInbound: an inbound state change goes through the PATCH path
// without echoing to its own integration; a replayed delivery key changes
// nothing; a failed event leaves no receipt, so its corrected redelivery
// is accepted; a comment is a thread entry.
func TestApplyInbound(t *testing.T) {
	u := newUnit(t)
	git, chat := u.integration("github"), u.integration("slack")
	id := u.findings("https://git.example.com/acme/app", "a")[0]
	actor := Actor{UserID: apiActor.UserID, Username: "octocat", Source: "github", Origin: git.ID}

	res, err := u.s.ApplyInbound(u.ctx, git, "d-1", Inbound{FindingID: id, State: ptr("false_positive"), Reason: "a constant"}, actor)
	require.NoError(t, err)
	require.Equal(t, InboundResult{State: "false_positive", Changed: true}, res)
	a := u.audit(id)
	require.Len(t, a, 1)
	require.Equal(t, "github", a[0].Source)
	require.Equal(t, "a constant", *a[0].Reason)
	ob := u.outboxRows()
	require.Len(t, ob, 1)
	require.Equal(t, chat.ID, ob[0].Integration, "no echo to the git host")

	_, err = u.s.ApplyInbound(u.ctx, git, "d-1", Inbound{FindingID: id, State: ptr("open")}, actor)
	require.ErrorIs(t, err, ErrReplay)
	require.Equal(t, "false_positive", u.state(id))

	_, err = u.s.ApplyInbound(u.ctx, git, "d-2", Inbound{FindingID: uuid.NewString(), State: ptr("open")}, actor)
	require.ErrorIs(t, err, ErrNotFound)
	require.Zero(t, u.count(`SELECT count(*) FROM findings.inbound_receipts WHERE delivery_key = 'd-2'`), "no receipt for a failed event")

	res, err = u.s.ApplyInbound(u.ctx, git, "d-2", Inbound{FindingID: id, Comment: ptr("looks real")}, actor)
	require.NoError(t, err)
	require.Equal(t, "false_positive", res.State)
	require.False(t, res.Changed)
	var comment, source string
	require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT comment, source FROM findings.triage_entries WHERE id = $1`, res.EntryID).Scan(&comment, &source))
	require.Equal(t, "looks real", comment)
	require.Equal(t, "github", source)

	res, err = u.s.ApplyInbound(u.ctx, git, "d-3", Inbound{FindingID: id, State: ptr("false_positive")}, actor)
	require.NoError(t, err)
	require.False(t, res.Changed, "the state it already has")

	require.NoError(t, u.s.Receipt(u.ctx, git.ID, "ping-1"))
	require.ErrorIs(t, u.s.Receipt(u.ctx, git.ID, "ping-1"), ErrReplay)
	require.NoError(t, u.s.Receipt(u.ctx, chat.ID, "ping-1"), "keys are per integration")
}

// TestIntegrationUsersAndRefs: user mappings replace earlier ones, refs
// find their finding once recorded, and removed integrations are gone.
func TestIntegrationUsersAndRefs(t *testing.T) {
	u := newUnit(t)
	git := u.integration("github")
	id := u.findings("https://git.example.com/acme/app", "a")[0]
	first, second := uuid.NewString(), uuid.NewString()

	got, err := u.s.MappedUser(u.ctx, git.ID, "octocat")
	require.NoError(t, err)
	require.Empty(t, got)
	require.NoError(t, u.s.MapUser(u.ctx, git.ID, "octocat", first))
	require.NoError(t, u.s.MapUser(u.ctx, git.ID, "octocat", second))
	got, err = u.s.MappedUser(u.ctx, git.ID, "octocat")
	require.NoError(t, err)
	require.Equal(t, second, got)

	got, err = u.s.FindingByRef(u.ctx, git.ID, "comment:42")
	require.NoError(t, err)
	require.Empty(t, got)
	require.NoError(t, u.s.RecordRef(u.ctx, git.ID, id, "comment:42"))
	require.NoError(t, u.s.RecordRef(u.ctx, git.ID, id, "comment:42"), "recording again is a no-op")
	got, err = u.s.FindingByRef(u.ctx, git.ID, "comment:42")
	require.NoError(t, err)
	require.Equal(t, id, got)

	active, err := u.s.ActiveIntegration(u.ctx, git.ID)
	require.NoError(t, err)
	require.Equal(t, git.ID, active.ID)
	_, err = u.s.RemoveIntegration(u.ctx, git.ID)
	require.NoError(t, err)
	_, err = u.s.ActiveIntegration(u.ctx, git.ID)
	require.ErrorIs(t, err, ErrNoIntegration)
	_, err = u.s.ActiveIntegration(u.ctx, uuid.NewString())
	require.ErrorIs(t, err, ErrNoIntegration)
}
