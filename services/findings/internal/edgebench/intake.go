package main

import (
	"context"
	"fmt"
	"runtime"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// batchSize is the number of findings in one ReportFindings call.
const batchSize = 100

// intakeBatch is batch i of worker w: batchSize findings whose fingerprints
// no other batch uses, so that every one is new.
func intakeBatch(prefix string, w int, i int64) []*findingsv1.ReportedFinding {
	out := make([]*findingsv1.ReportedFinding, batchSize)
	sev := []string{"critical", "high", "medium", "low", "info"}
	for k := range out {
		out[k] = &findingsv1.ReportedFinding{
			Fingerprint: fmt.Sprintf("%s-%d-%d-%d", prefix, w, i, k), Title: "SQL injection in handler", Category: "injection",
			Severity: sev[k%5], Description: "User input reaches a query built by string concatenation.",
			AffectedFile: fmt.Sprintf("app/handlers/user%d.py", k), AffectedCode: `cursor.execute("SELECT * FROM users WHERE name = '" + name + "'")`,
			Tags: []string{"cwe-89", "owasp-a03"}, StartLine: int32(10 + k), EndLine: int32(10 + k), Verified: true,
		}
	}
	return out
}

// intakeScans registers one scan per worker (a scan reports its batches one
// after the other) and returns their ids.
func intakeScans(ctx context.Context, c findingsv1.FindingsIntakeServiceClient, org string, n int) ([]string, error) {
	ids := make([]string, n)
	for w := range ids {
		ids[w] = uuid.NewString()
		if _, err := c.RegisterScan(ctx, &findingsv1.RegisterScanRequest{ScanId: ids[w], OrgId: org,
			RepoUrl: fmt.Sprintf("https://git.example.com/acme/intake-%s", ids[w]), ScanType: "full"}); err != nil {
			return nil, fmt.Errorf("register scan: %w", err)
		}
	}
	return ids, nil
}

// reportVia returns the system path's request: one ReportFindings call.
func reportVia(c findingsv1.FindingsIntakeServiceClient, scans []string, prefix string) func(ctx context.Context, w int, i int64) error {
	return func(ctx context.Context, w int, i int64) error {
		resp, err := c.ReportFindings(ctx, &findingsv1.ReportFindingsRequest{ScanId: scans[w], Findings: intakeBatch(prefix, w, i)})
		if err != nil {
			return err
		}
		if len(resp.GetResults()) != batchSize || !resp.GetResults()[0].GetCreated() {
			return fmt.Errorf("report: %d results, first created=%t", len(resp.GetResults()), resp.GetResults()[0].GetCreated())
		}
		return nil
	}
}

// insertDirect returns the floor's request: the same batch written with
// two COPY statements (findings, then their occurrences) in one
// transaction, the least a batched insert of these rows can cost. It keeps
// no idempotency and computes no result. Like the service's intake, it
// writes at most GOMAXPROCS batches at once (store.IntakeSlots tells why),
// so that both sides pay the same for the database's contention.
func insertDirect(pool *pgxpool.Pool, org string, scans []string, repos []string, prefix string) func(ctx context.Context, w int, i int64) error {
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	return func(ctx context.Context, w int, i int64) error {
		slots <- struct{}{}
		defer func() { <-slots }()
		batch := intakeBatch(prefix, w, i)
		rows := make([][]any, len(batch))
		occ := make([][]any, len(batch))
		for k, f := range batch {
			id, err := uuid.NewV7() // time-ordered, as intake makes them
			if err != nil {
				return err
			}
			rank := map[string]int16{"critical": 5, "high": 4, "medium": 3, "low": 2, "info": 1}[f.Severity]
			rows[k] = []any{id, org, repos[w], f.Fingerprint, scans[w], f.Title, f.Category, f.Severity, rank, f.Description,
				f.AffectedFile, f.AffectedCode, f.Tags, f.StartLine, f.EndLine, "approved"}
			occ[k] = []any{scans[w], id}
		}
		tx, err := pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"findings", "findings"}, []string{"id", "org_id", "repo_key", "fingerprint", "scan_id",
			"title", "category", "severity", "severity_rank", "description", "affected_file", "affected_code", "tags", "start_line", "end_line",
			"verification_status"}, pgx.CopyFromRows(rows)); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"findings", "occurrences"}, []string{"scan_id", "finding_id"}, pgx.CopyFromRows(occ)); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
}
