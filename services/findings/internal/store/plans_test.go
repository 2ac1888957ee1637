package store

import (
	"testing"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// planModes are the two plans a prepared statement runs with (see
// dbtest.PlanModes).
var planModes = dbtest.PlanModes

// prepare prepares query (with parameters of types, "uuid, text[]") as
// name under plan mode on the unit's database (see dbtest.Prepare).
func (u *unit) prepare(t *testing.T, mode, name, types, query string, args ...any) *dbtest.Prepared {
	t.Helper()
	return u.prepareWith(t, nil, mode, name, types, query, args...)
}

// prepareWith is prepare with settings (SET LOCAL statements) applied
// before the statement is prepared, as the store applies them.
func (u *unit) prepareWith(t *testing.T, settings []string, mode, name, types, query string, args ...any) *dbtest.Prepared {
	t.Helper()
	return dbtest.Prepare(t, u.s.Pool, settings, mode, name, types, query, args...)
}

// findingsRead executes the statement under EXPLAIN ANALYZE and returns
// the rows its scans of the findings table read: those they returned and
// those their filters removed.
func findingsRead(p *dbtest.Prepared) float64 {
	return dbtest.RowsRead(p.Explain(), "findings", false)
}
