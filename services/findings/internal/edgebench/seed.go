package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// seedFindings writes n approved findings of org straight into the findings
// schema in one statement per table (the counting triggers are bypassed and
// the counters built once, as the triggers would have built them): 10
// repositories, scans of 10,000 first-found findings each (n/10,000 of them),
// every severity and state, and one occurrence per finding in the scan that
// found it. It returns the id of the 43rd scan (or the last one), whose
// findings list is measured.
func seedFindings(ctx context.Context, pool *pgxpool.Pool, org string, n int) (string, error) {
	scans := max(1, n/10000)
	start := time.Now()
	// Loading rows into a table with its secondary indexes maintains each
	// index row by row in random order; building them afterwards sorts
	// once. The list indexes (every index not backing a constraint) are
	// dropped for the load and created again, as they were, after it.
	rows, err := pool.Query(ctx, `SELECT i.indexname, i.indexdef FROM pg_indexes i
		WHERE i.schemaname = 'findings' AND i.tablename IN ('findings', 'occurrences')
		AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname AND c.connamespace = 'findings'::regnamespace)`)
	if err != nil {
		return "", fmt.Errorf("list indexes: %w", err)
	}
	indexes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var x [2]string
		return x, r.Scan(&x[0], &x[1])
	})
	if err != nil {
		return "", fmt.Errorf("list indexes: %w", err)
	}
	for _, ix := range indexes {
		if _, err := pool.Exec(ctx, "DROP INDEX findings."+pgx.Identifier{ix[0]}.Sanitize()); err != nil {
			return "", fmt.Errorf("drop index %s: %w", ix[0], err)
		}
	}
	// One simple-protocol batch of statements: the values are our own
	// uuid and numbers.
	_, err = pool.Exec(ctx, fmt.Sprintf(`
		SET session_replication_role = replica;
		INSERT INTO findings.scans (id, org_id, repo_url, repo_key, scan_type)
			SELECT md5('scan' || g)::uuid, '%[1]s', 'https://git.example.com/acme/repo' || (g %% 10), 'https://git.example.com/acme/repo' || (g %% 10), 'full'
			FROM generate_series(0, %[2]d - 1) g;
		INSERT INTO findings.findings (id, org_id, repo_key, fingerprint, scan_id, title, category, severity, severity_rank, state,
			description, affected_file, affected_code, tags, start_line, end_line, verification_status, found_at, updated_at)
			SELECT md5('f' || g)::uuid, '%[1]s', 'https://git.example.com/acme/repo' || ((g / 10000) %% 10), 'fp' || g,
				md5('scan' || (g / 10000))::uuid, 'SQL injection in handler ' || g, 'injection',
				(ARRAY['critical','high','medium','low','info'])[1 + g %% 5], 5 - g %% 5,
				(ARRAY['open','true_positive','false_positive','accepted_risk','resolved'])[1 + (g / 5) %% 5],
				'User input reaches a query built by string concatenation.', 'app/handlers/user' || (g %% 97) || '.py',
				'cursor.execute("SELECT * FROM users WHERE name = ''" + name + "''")', ARRAY['cwe-89','owasp-a03'], 10 + g %% 50, 10 + g %% 50,
				'approved', timestamptz '2026-01-01' + (g / 3) * interval '1 second', timestamptz '2026-06-01' - (g %% 9973) * interval '1 minute'
			FROM generate_series(0, %[3]d - 1) g;
		INSERT INTO findings.occurrences (scan_id, finding_id, approved, severity_rank, state, found_at, updated_at,
				title_key, description_key, file_key, category)
			SELECT scan_id, id, true, severity_rank, state, found_at, updated_at, title_key, description_key, file_key, category
			FROM findings.findings WHERE org_id = '%[1]s';
		INSERT INTO findings.finding_counts (org_id, scan_id, severity, state, n)
			SELECT org_id, '00000000-0000-0000-0000-000000000000'::uuid, severity, state, count(*) FROM findings.findings WHERE org_id = '%[1]s' GROUP BY 1, 2, 3, 4
			UNION ALL
			SELECT f.org_id, o.scan_id, f.severity, f.state, count(*) FROM findings.findings f JOIN findings.occurrences o ON o.finding_id = f.id
			WHERE f.org_id = '%[1]s' GROUP BY 1, 2, 3, 4;
		SET session_replication_role = DEFAULT;`, org, scans, n))
	if err != nil {
		return "", fmt.Errorf("seed findings: %w", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return "", err
	}
	_, _ = conn.Exec(ctx, "SET maintenance_work_mem = '256MB'")
	for _, ix := range indexes {
		if _, err := conn.Exec(ctx, ix[1]); err != nil {
			conn.Release()
			return "", fmt.Errorf("create index %s: %w", ix[0], err)
		}
	}
	_, _ = conn.Exec(ctx, "RESET maintenance_work_mem")
	conn.Release()
	for _, t := range []string{"findings.findings", "findings.occurrences", "findings.finding_counts", "findings.scans"} {
		if _, err := pool.Exec(ctx, "VACUUM ANALYZE "+t); err != nil {
			return "", fmt.Errorf("vacuum %s: %w", t, err)
		}
	}
	var scan string
	if err := pool.QueryRow(ctx, `SELECT md5('scan' || $1::int)::uuid::text`, min(42, scans-1)).Scan(&scan); err != nil {
		return "", err
	}
	fmt.Printf("seeded %d findings in %s\n", n, time.Since(start).Round(time.Millisecond))
	return scan, nil
}
