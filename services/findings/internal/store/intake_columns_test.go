package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// Every reported column is stored as sent, whatever its characters: tags
// travel as text[] literals, the rest as arrays of their column types.
func TestReportStoresEveryColumn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := &Store{Pool: dbtest.Migrated(t, "findings_report_columns", Migrate)}
	sc := Scan{ID: uuid.NewString(), OrgID: uuid.NewString(), RepoURL: "https://git.example.com/acme/app", ScanType: "full"}
	_, err := s.RegisterScan(ctx, sc)
	require.NoError(t, err)
	poc, trace, null := `curl "x" \ 'y'`, "graph TD; A-->B", "NULL"
	batch := []Reported{
		{Fingerprint: "fp-1", Title: `Quote " and \ backslash`, Category: "injection", Severity: "critical", Description: "line\nbreak, 日本",
			AffectedFile: "a/b.go", AffectedCode: "x := `y`", ProofOfConcept: &poc, MermaidTrace: &trace, StartLine: 3, EndLine: 9,
			Tags: []string{`q"uote`, `back\slash`, "com,ma", "{brace}", "sp ace", "", "NULL", "ü"}, Verified: true},
		{Fingerprint: "fp-2", Title: "no tags", Category: "xss", Severity: "info", MermaidTrace: &null},
		{Fingerprint: "fp-3", Title: "", Category: "xss", Severity: "low", Tags: []string{"{}", `\"`}, StartLine: 2147483647},
	}
	res, err := s.Report(ctx, sc, batch, true)
	require.NoError(t, err)
	require.Len(t, res, len(batch))
	for i, want := range batch {
		var got Reported
		var rank int16
		var status string
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT fingerprint, title, category, severity, severity_rank, description, affected_file,
			affected_code, proof_of_concept, mermaid_trace, tags, start_line, end_line, verification_status FROM findings.findings WHERE id = $1`,
			res[i].FindingID).Scan(&got.Fingerprint, &got.Title, &got.Category, &got.Severity, &rank, &got.Description, &got.AffectedFile,
			&got.AffectedCode, &got.ProofOfConcept, &got.MermaidTrace, &got.Tags, &got.StartLine, &got.EndLine, &status))
		got.Verified = status == Approved
		if want.Tags == nil {
			want.Tags = []string{}
		}
		require.Equal(t, want, got)
		require.Equal(t, int16(SeverityRank(want.Severity)), rank)
	}
}

// New findings get time-ordered (version 7) ids, so that a later report's
// findings sort after an earlier one's and the indexes that end in the id
// grow at their right edge.
func TestReportFindingIDsAreTimeOrdered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := &Store{Pool: dbtest.Migrated(t, "findings_report_columns", Migrate)}
	sc := Scan{ID: uuid.NewString(), OrgID: uuid.NewString(), RepoURL: "https://git.example.com/acme/ordered", ScanType: "full"}
	_, err := s.RegisterScan(ctx, sc)
	require.NoError(t, err)
	var last uuid.UUID
	for i := range 3 {
		res, err := s.Report(ctx, sc, []Reported{{Fingerprint: fmt.Sprintf("fp-%d", i), Title: "t", Category: "injection", Severity: "high"}}, true)
		require.NoError(t, err)
		id, err := uuid.Parse(res[0].FindingID)
		require.NoError(t, err)
		require.Equal(t, uuid.Version(7), id.Version(), "finding id %s", id)
		require.Greater(t, id.String(), last.String(), "report %d's finding id sorts after the one before", i)
		last = id
	}
}
