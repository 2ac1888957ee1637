package store

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestApplySteps walks one finding through PATCH-like changes: each step's
// result, audit records (field, from, to, reason, key) and integration
// events; a change to what the finding already has writes no record and no
// event.
func TestApplySteps(t *testing.T) {
	u := newUnit(t)
	chat := u.integration("slack")
	id := u.findings("https://git.example.com/acme/app", "a")[0]
	end := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Microsecond)
	steps := []struct {
		name    string
		update  Update
		state   string
		sev     string
		expires *time.Time
		audit   []string // field:from→to of the new records
	}{
		{"confirm", Update{State: ptr("true_positive"), StateReason: "confirmed"}, "true_positive", "high", nil,
			[]string{"state:open→true_positive"}},
		{"the same state again changes nothing", Update{State: ptr("true_positive")}, "true_positive", "high", nil, nil},
		{"lower the severity", Update{Severity: ptr("low"), SeverityReason: "internal only"}, "true_positive", "low", nil,
			[]string{"severity:high→low"}},
		{"accept with an end", Update{State: ptr("accepted_risk"), ExpiresAt: &end}, "accepted_risk", "low", &end,
			[]string{"state:true_positive→accepted_risk", "risk_expires_at:none→" + *timeText(&end)}},
		{"reopening drops the end", Update{State: ptr("open")}, "open", "low", nil,
			[]string{"state:accepted_risk→open", "risk_expires_at:" + *timeText(&end) + "→none"}},
	}
	var records, events int
	for _, st := range steps {
		out, err := u.s.Apply(u.ctx, u.org, id, st.update, apiActor)
		require.NoError(t, err, st.name)
		require.Equal(t, Updated{ID: id, State: st.state, Severity: st.sev, ExpiresAt: st.expires}, out, st.name)
		all := u.audit(id)
		var got []string
		for _, a := range all[records:] {
			got = append(got, a.Field+":"+orNone(a.From)+"→"+orNone(a.To))
			require.Equal(t, "api", a.Source)
			require.Equal(t, apiActor.KeyID, *a.KeyID)
			require.Nil(t, a.Batch, "a single change has no batch")
		}
		require.Equal(t, st.audit, got, st.name)
		records = len(all)
		if len(st.audit) > 0 {
			events++
		}
		ob := u.outboxRows()
		require.Len(t, ob, events, "%s: one event per change per integration", st.name)
		last := ob[len(ob)-1]
		require.Equal(t, chat.ID, last.Integration)
		require.Equal(t, id, last.Finding)
		require.Equal(t, "finding.updated", last.Event)
	}
	require.Equal(t, "internal only", *u.audit(id)[1].Reason)
	var rank int
	require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT severity_rank FROM findings.findings WHERE id = $1`, id).Scan(&rank))
	require.Equal(t, SeverityRank("low"), rank)
	// Each request that touched the state left one thread entry.
	require.Equal(t, 4, u.count(`SELECT count(*) FROM findings.triage_entries WHERE finding_id = $1 AND reaction IS NOT NULL`, id))
}

func orNone(p *string) string {
	if p == nil {
		return "none"
	}
	return *p
}

// TestApplyDuplicates: the duplicate link's rules, each refusal changing
// nothing, and what a valid link does (resolved, dropped by reopening).
func TestApplyDuplicates(t *testing.T) {
	u := newUnit(t)
	ids := u.findings("https://git.example.com/acme/app", "canon", "dup", "third")
	canon, dup, third := ids[0], ids[1], ids[2]
	elsewhere := u.findings("https://git.example.com/acme/other", "x")[0]
	link := func(id, to string) error {
		_, err := u.s.Apply(u.ctx, u.org, id, Update{DuplicateSet: true, DuplicateOf: &to}, apiActor)
		return err
	}
	for _, tc := range []struct {
		name, id, to, msg string
	}{
		{"itself", dup, dup, "must not be the finding itself"},
		{"another repository", dup, elsewhere, "same repository"},
		{"unknown", dup, uuid.NewString(), "canonical finding not found"},
	} {
		var inv *InvalidError
		require.True(t, errors.As(link(tc.id, tc.to), &inv), tc.name)
		require.Contains(t, inv.Msg, tc.msg, tc.name)
	}
	require.Empty(t, u.audit(dup), "refusals change nothing")

	require.NoError(t, link(dup, canon))
	require.Equal(t, "resolved", u.state(dup))
	var inv *InvalidError
	require.True(t, errors.As(link(third, dup), &inv), "a duplicate cannot be canonical")
	require.Contains(t, inv.Msg, "must not itself be a duplicate")
	require.True(t, errors.As(link(canon, third), &inv), "a canonical finding cannot become a duplicate")
	require.Contains(t, inv.Msg, "canonical finding of other duplicates")

	out, err := u.s.Apply(u.ctx, u.org, dup, Update{State: ptr("open")}, apiActor)
	require.NoError(t, err)
	require.Nil(t, out.DuplicateOf, "moving on from resolved drops the link")
	var fields []string
	for _, a := range u.audit(dup) {
		fields = append(fields, a.Field+":"+orNone(a.To))
	}
	require.Equal(t, []string{"state:resolved", "duplicate_of:" + canon, "state:open", "duplicate_of:none"}, fields)
}

// TestApplyScope: a foreign organization's finding is not found, and a
// change that came in through an integration is not echoed back to it.
func TestApplyScope(t *testing.T) {
	u := newUnit(t)
	git, chat := u.integration("github"), u.integration("slack")
	id := u.findings("https://git.example.com/acme/app", "a")[0]
	_, err := u.s.Apply(u.ctx, uuid.NewString(), id, Update{State: ptr("resolved")}, apiActor)
	require.ErrorIs(t, err, ErrNotFound)
	_, err = u.s.Apply(u.ctx, u.org, uuid.NewString(), Update{State: ptr("resolved")}, apiActor)
	require.ErrorIs(t, err, ErrNotFound)

	from := Actor{UserID: apiActor.UserID, Username: "ana", Source: "github", Origin: git.ID}
	_, err = u.s.Apply(u.ctx, u.org, id, Update{State: ptr("resolved")}, from)
	require.NoError(t, err)
	ob := u.outboxRows()
	require.Len(t, ob, 1)
	require.Equal(t, chat.ID, ob[0].Integration, "only the integration the change did not come from")
}

// TestAddComment: a comment is a thread entry and one finding.commented
// event per integration; a foreign finding is not found.
func TestAddComment(t *testing.T) {
	u := newUnit(t)
	u.integration("slack")
	u.integration("jira")
	id := u.findings("https://git.example.com/acme/app", "a")[0]
	eid, err := u.s.AddComment(u.ctx, u.org, id, "fix in review", apiActor)
	require.NoError(t, err)
	var comment, user string
	require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT comment, username FROM findings.triage_entries WHERE id = $1`, eid).Scan(&comment, &user))
	require.Equal(t, "fix in review", comment)
	require.Equal(t, "ana", user)
	ob := u.outboxRows()
	require.Len(t, ob, 2)
	for _, o := range ob {
		require.Equal(t, "finding.commented", o.Event)
		require.Equal(t, "fix in review", o.Payload["comment"])
	}
	require.Empty(t, u.audit(id), "a comment is no audited change")
	_, err = u.s.AddComment(u.ctx, uuid.NewString(), id, "x", apiActor)
	require.ErrorIs(t, err, ErrNotFound)
}
