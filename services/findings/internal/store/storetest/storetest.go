// Package storetest sets up the findings store for the tests of the
// packages built on it: a migrated database of the test's own, and
// approved findings to work on.
package storetest

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// New returns a store over a fresh clone of the migrated findings schema.
// key names the template database: one per test package.
func New(t testing.TB, key string) *store.Store {
	t.Helper()
	return &store.Store{Pool: dbtest.Migrated(t, key, store.Migrate)}
}

// Scan registers a new full scan of repo for org.
func Scan(t testing.TB, s *store.Store, org, repo string) store.Scan {
	t.Helper()
	sc := store.Scan{ID: uuid.NewString(), OrgID: org, RepoURL: repo, ScanType: "full"}
	if _, err := s.RegisterScan(context.Background(), sc); err != nil {
		t.Fatalf("register scan: %v", err)
	}
	return sc
}

// Report reports fs in sc as verified (approved at once) and returns the
// findings' ids in order.
func Report(t testing.TB, s *store.Store, sc store.Scan, fs ...store.Reported) []string {
	t.Helper()
	for i := range fs {
		fs[i].Verified = true
	}
	res, err := s.Report(context.Background(), sc, fs, true)
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	ids := make([]string, len(res))
	for i, r := range res {
		if r.VerificationStatus != store.Approved {
			t.Fatalf("finding %s is %s, not approved", r.Fingerprint, r.VerificationStatus)
		}
		ids[i] = r.FindingID
	}
	return ids
}
