package store

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// outboxStatus reads one event's status, attempts and last error.
func (u *unit) outboxStatus(id int64) (string, int, *string) {
	u.t.Helper()
	var status string
	var attempts int
	var last *string
	require.NoError(u.t, u.s.Pool.QueryRow(u.ctx, `SELECT status, attempts, last_error FROM findings.outbox WHERE id = $1`, id).Scan(&status, &attempts, &last))
	return status, attempts, last
}

// TestClaimOrderAndOutcomes: a finding's events are claimed one at a time
// per integration, in order; a claimed event is leased; a failure is due
// again after its backoff, dead when final; delivery remembers the issue it
// created, which the finding's next event carries.
func TestClaimOrderAndOutcomes(t *testing.T) {
	u := newUnit(t)
	jira := u.integration("jira")
	ids := u.findings("https://git.example.com/acme/app", "a", "b")
	_, err := u.s.Apply(u.ctx, u.org, ids[0], Update{State: ptr("true_positive")}, apiActor)
	require.NoError(t, err)
	_, err = u.s.AddComment(u.ctx, u.org, ids[0], "second event of a", apiActor)
	require.NoError(t, err)
	_, err = u.s.Apply(u.ctx, u.org, ids[1], Update{State: ptr("resolved")}, apiActor)
	require.NoError(t, err)

	ds, err := u.s.Claim(u.ctx, 10, time.Minute)
	require.NoError(t, err)
	require.Len(t, ds, 2, "the first event of each finding; a's comment waits")
	byFinding := map[string]Delivery{}
	for _, d := range ds {
		require.Equal(t, 1, d.Attempts)
		require.Equal(t, jira.ID, d.Integration.ID)
		require.Equal(t, "finding.updated", d.Event)
		require.Empty(t, d.ExternalID)
		byFinding[d.FindingID] = d
	}
	again, err := u.s.Claim(u.ctx, 10, time.Minute)
	require.NoError(t, err)
	require.Empty(t, again, "leased events and the ones queued behind them are not due")

	require.NoError(t, u.s.Delivered(u.ctx, byFinding[ids[0]], "SEC-1"))
	require.NoError(t, u.s.Failed(u.ctx, byFinding[ids[1]], "receiver answered 503", 0, false))
	status, attempts, last := u.outboxStatus(byFinding[ids[1]].ID)
	require.Equal(t, "pending", status)
	require.Equal(t, 1, attempts)
	require.Equal(t, "receiver answered 503", *last)

	ds, err = u.s.Claim(u.ctx, 10, time.Minute)
	require.NoError(t, err)
	require.Len(t, ds, 2)
	for _, d := range ds {
		byFinding[d.FindingID] = d
	}
	require.Equal(t, "finding.commented", byFinding[ids[0]].Event)
	require.Equal(t, "SEC-1", byFinding[ids[0]].ExternalID, "the issue the first event created")
	require.Equal(t, 2, byFinding[ids[1]].Attempts)

	require.NoError(t, u.s.Failed(u.ctx, byFinding[ids[1]], "receiver answered 503", time.Hour, true))
	status, attempts, _ = u.outboxStatus(byFinding[ids[1]].ID)
	require.Equal(t, "dead", status)
	require.Equal(t, 2, attempts)
	require.NoError(t, u.s.Failed(u.ctx, byFinding[ids[0]], "later", time.Hour, false))
	ds, err = u.s.Claim(u.ctx, 10, time.Minute)
	require.NoError(t, err)
	require.Empty(t, ds, "the one left is backing off for an hour")
	require.Equal(t, 1, u.count(`SELECT count(*) FROM findings.integration_links WHERE integration_id = $1 AND finding_id = $2 AND external_id = 'SEC-1'`,
		jira.ID, ids[0]))
}

// TestReceiversTextIsStored: a failure's reason and an issue's id come
// from a receiver (its answer, its address) and are stored whatever their
// bytes: cut at a character boundary, NUL and bytes that are not UTF-8 made
// text. (A reason cut through a character, or holding NUL, made the
// outcome fail to record, so the event was delivered again.)
func TestReceiversTextIsStored(t *testing.T) {
	u := newUnit(t)
	u.integration("jira")
	ids := u.findings("https://git.example.com/acme/app", "a", "b")
	for _, id := range ids {
		_, err := u.s.Apply(u.ctx, u.org, id, Update{State: ptr("true_positive")}, apiActor)
		require.NoError(t, err)
	}
	ds, err := u.s.Claim(u.ctx, 10, time.Minute)
	require.NoError(t, err)
	require.Len(t, ds, 2)
	long := "a" + strings.Repeat("é", 300) // byte 500 falls inside a character
	require.NoError(t, u.s.Failed(u.ctx, ds[0], long, time.Hour, false))
	_, _, last := u.outboxStatus(ds[0].ID)
	require.Equal(t, long[:499], *last, "cut before the character byte 500 falls in")
	require.NoError(t, u.s.Failed(u.ctx, ds[0], "answered \x00 \xff", time.Hour, false))
	_, _, last = u.outboxStatus(ds[0].ID)
	require.Equal(t, "answered \uFFFD ÿ", *last)
	require.NoError(t, u.s.Delivered(u.ctx, ds[1], "SEC-\x002"))
	require.Equal(t, 1, u.count(`SELECT count(*) FROM findings.integration_links WHERE finding_id = $1 AND external_id = $2`, ds[1].FindingID, "SEC-\uFFFD2"))
}

// TestIntegrations: an organization's integrations are listed oldest
// first; removing one ends its pending events and hides it; an unknown one
// is not found; clear webhook URLs are sealed once.
func TestIntegrations(t *testing.T) {
	u := newUnit(t)
	chat, git := u.integration("slack"), u.integration("github")
	id := u.findings("https://git.example.com/acme/app", "a")[0]
	_, err := u.s.Apply(u.ctx, u.org, id, Update{State: ptr("true_positive")}, apiActor)
	require.NoError(t, err)

	list, err := u.s.ListIntegrations(u.ctx, u.org)
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, []string{chat.ID, git.ID}, []string{list[0].ID, list[1].ID})

	removed, err := u.s.RemoveIntegration(u.ctx, chat.ID)
	require.NoError(t, err)
	require.NotNil(t, removed.RemovedAt)
	require.Equal(t, 1, u.count(`SELECT count(*) FROM findings.outbox WHERE integration_id = $1 AND status = 'dead' AND last_error = 'integration removed'`, chat.ID))
	require.Equal(t, 1, u.count(`SELECT count(*) FROM findings.outbox WHERE integration_id = $1 AND status = 'pending'`, git.ID))
	list, err = u.s.ListIntegrations(u.ctx, u.org)
	require.NoError(t, err)
	require.Len(t, list, 1)
	_, err = u.s.RemoveIntegration(u.ctx, chat.ID)
	require.ErrorIs(t, err, ErrNotFound)
	_, err = u.s.RemoveIntegration(u.ctx, uuid.NewString())
	require.ErrorIs(t, err, ErrNotFound)

	legacy, err := u.s.AddIntegration(u.ctx, Integration{OrgID: u.org, Kind: "slack", Name: "old", URL: "https://chat.example.com/services/T0/B0/secret"})
	require.NoError(t, err)
	seal := func(id string, url []byte) ([]byte, error) { return append([]byte("sealed:"+id+":"), url...), nil }
	display := func(string) string { return "https://chat.example.com/REDACTED" }
	n, err := u.s.SealWebhookURLs(u.ctx, "slack", seal, display)
	require.NoError(t, err)
	require.Equal(t, 2, n, "the removed chat integration's URL is sealed too")
	var shown string
	var enc []byte
	require.NoError(t, u.s.Pool.QueryRow(u.ctx, `SELECT url, url_enc FROM findings.integrations WHERE id = $1`, legacy.ID).Scan(&shown, &enc))
	require.Equal(t, "https://chat.example.com/REDACTED", shown)
	require.Equal(t, "sealed:"+legacy.ID+":https://chat.example.com/services/T0/B0/secret", string(enc))
	n, err = u.s.SealWebhookURLs(u.ctx, "slack", seal, display)
	require.NoError(t, err)
	require.Zero(t, n, "sealing is done once")
}
