package store

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
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
