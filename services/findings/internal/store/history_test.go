package store

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestHistory: a finding's audit trail, oldest first, paged with its
// total; each record names the actor, key and batch; a foreign or unknown
// finding is not found.
func TestHistory(t *testing.T) {
	u := newUnit(t)
	ids := u.findings("https://git.example.com/acme/app", "a", "b")
	id := ids[0]
	_, err := u.s.Apply(u.ctx, u.org, id, Update{State: ptr("true_positive"), StateReason: "confirmed"}, apiActor)
	require.NoError(t, err)
	res, err := u.s.ApplyBulk(u.ctx, u.org, ids, nil, Update{Severity: ptr("low"), SeverityReason: "internal"}, apiActor)
	require.NoError(t, err)
	_, err = u.s.Apply(u.ctx, u.org, id, Update{State: ptr("resolved")}, Agent)
	require.NoError(t, err)

	all, total, err := u.s.History(u.ctx, u.org, id, 10, 0)
	require.NoError(t, err)
	require.Equal(t, 3, total)
	var got []string
	for _, e := range all {
		got = append(got, e.Field+":"+orNone(e.From)+"→"+orNone(e.To))
	}
	require.Equal(t, []string{"state:open→true_positive", "severity:high→low", "state:true_positive→resolved"}, got)
	require.Equal(t, "confirmed", *all[0].Reason)
	require.Equal(t, apiActor.UserID, *all[0].ActorUserID)
	require.Equal(t, apiActor.KeyID, *all[0].ActorKeyID)
	require.Nil(t, all[0].BatchID)
	require.Equal(t, res.BatchID, *all[1].BatchID)
	require.Equal(t, "agent", all[2].Source)
	require.Nil(t, all[2].ActorKeyID)

	page, total, err := u.s.History(u.ctx, u.org, id, 2, 1)
	require.NoError(t, err)
	require.Equal(t, 3, total)
	require.Equal(t, all[1:], page)

	empty, total, err := u.s.History(u.ctx, u.org, id, 10, 5)
	require.NoError(t, err)
	require.Equal(t, 3, total)
	require.Empty(t, empty)

	_, _, err = u.s.History(u.ctx, uuid.NewString(), id, 10, 0)
	require.ErrorIs(t, err, ErrNotFound)
	_, _, err = u.s.History(u.ctx, u.org, uuid.NewString(), 10, 0)
	require.ErrorIs(t, err, ErrNotFound)
}
