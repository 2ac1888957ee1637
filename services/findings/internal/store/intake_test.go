package store

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// fpTraits gives a fingerprint its severity and whether it is verified,
// the same in every stream that reports it.
func fpTraits(fp string) (severity string, verified bool) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(fp))
	v := h.Sum32()
	return Severities[v%uint32(len(Severities))], v%7 != 0
}

func reportedFP(fp string) Reported {
	sev, verified := fpTraits(fp)
	return Reported{Fingerprint: fp, Title: "Finding " + fp, Category: "injection", Severity: sev, Verified: verified,
		Tags: []string{"t"}}
}

// TestConcurrentReports runs eight report streams of one organization at
// once, each a scan reporting overlapping severities in batches and in its
// own order, while counters are folded, and checks that no report fails
// and that every counter, list total and occurrence is exact. Some
// findings were resolved before the scans, and each is reopened once.
func TestConcurrentReports(t *testing.T) {
	t.Parallel()
	const streams, perStream, batchSize, shared = 8, 240, 40, 120
	tests := []struct {
		name  string
		repos int // scans are spread round-robin over this many repositories
	}{
		{"eight scans of one repository", 1},
		{"eight scans of two repositories", 2},
		{"eight scans of eight repositories", 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := newUnit(t)
			ctx, s, org, pool := u.ctx, u.s, u.org, u.s.Pool
			repo := func(i int) string { return fmt.Sprintf("https://git.example.com/acme/r%d", i%tc.repos) }

			// Before the scans: a first scan of each repository found the
			// shared findings; some were then resolved, some marked duplicate.
			resolved := map[string]map[string]bool{} // repo → fingerprint
			for r := range tc.repos {
				first := Scan{ID: uuid.NewString(), OrgID: org, RepoURL: repo(r), ScanType: "full"}
				_, err := s.RegisterScan(ctx, first)
				require.NoError(t, err)
				var batch []Reported
				for i := range shared {
					batch = append(batch, reportedFP(fmt.Sprintf("shared-%d", i)))
				}
				res, err := s.Report(ctx, first, batch, true)
				require.NoError(t, err)
				resolved[repo(r)] = map[string]bool{}
				state := "resolved"
				canonical := ""
				for i, rr := range res {
					if rr.VerificationStatus == Approved && i%5 != 0 {
						canonical = rr.FindingID
					}
				}
				require.NotEmpty(t, canonical)
				for i, rr := range res {
					if rr.VerificationStatus != Approved || i%5 != 0 {
						continue
					}
					if i%10 == 0 { // a duplicate stays closed when seen again
						_, err = s.Apply(ctx, org, rr.FindingID, Update{DuplicateSet: true, DuplicateOf: &canonical}, Actor{UserID: uuid.NewString(), Username: "ana", Source: "api"})
					} else {
						_, err = s.Apply(ctx, org, rr.FindingID, Update{State: &state}, Actor{UserID: uuid.NewString(), Username: "ana", Source: "api"})
						resolved[repo(r)][rr.Fingerprint] = true
					}
					require.NoError(t, err)
				}
			}

			// Each stream reports the shared findings (reopening the
			// resolved ones), findings it shares with its neighbour and its
			// own, shuffled, with a few repeats.
			scans := make([]Scan, streams)
			batches := make([][]Reported, streams)
			for i := range streams {
				scans[i] = Scan{ID: uuid.NewString(), OrgID: org, RepoURL: repo(i), ScanType: "pr"}
				_, err := s.RegisterScan(ctx, scans[i])
				require.NoError(t, err)
				var all []Reported
				for j := range shared {
					all = append(all, reportedFP(fmt.Sprintf("shared-%d", j)))
				}
				for j := range (perStream - shared) / 2 {
					all = append(all, reportedFP(fmt.Sprintf("pair-%d-%d", i/2, j)), reportedFP(fmt.Sprintf("own-%d-%d", i, j)))
				}
				rng := rand.New(rand.NewPCG(uint64(i), 42))
				rng.Shuffle(len(all), func(a, b int) { all[a], all[b] = all[b], all[a] })
				all = append(all, all[:5]...)
				batches[i] = all
			}
			var wg sync.WaitGroup
			errs := make(chan error, streams+1)
			reopenedBy := make([][]string, streams)
			stop := make(chan struct{})
			go func() { // folding runs throughout
				defer close(errs)
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := s.FoldCounts(ctx, 7); err != nil {
						errs <- err
						return
					}
				}
			}()
			for i := range streams {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for off := 0; off < len(batches[i]); off += batchSize {
						res, err := s.Report(ctx, scans[i], batches[i][off:min(off+batchSize, len(batches[i]))], true)
						if err != nil {
							errs <- fmt.Errorf("stream %d: %w", i, err)
							return
						}
						for _, r := range res {
							if r.Reopened {
								reopenedBy[i] = append(reopenedBy[i], scans[i].RepoURL+" "+r.Fingerprint)
							}
						}
					}
				}()
			}
			wg.Wait()
			close(stop)
			for err := range errs {
				require.NoError(t, err)
			}

			// Each resolved finding was reopened by exactly one report.
			reopens := map[string]int{}
			for _, rs := range reopenedBy {
				for _, r := range rs {
					reopens[r]++
				}
			}
			want := 0
			for rp, fps := range resolved {
				for fp := range fps {
					want++
					require.Equal(t, 1, reopens[rp+" "+fp], "reopens of %s %s", rp, fp)
				}
			}
			require.Len(t, reopens, want)
			var audits int
			require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM findings.audit_log WHERE org_id = $1 AND reason LIKE 'Seen again%'`, org).Scan(&audits))
			require.Equal(t, want, audits)

			// The expected findings, from what was reported.
			type key struct{ repo, fp string }
			seenBy := map[key]map[string]bool{} // finding → scans that reported it
			for r := range tc.repos {
				for i := range shared {
					seenBy[key{repo(r), fmt.Sprintf("shared-%d", i)}] = map[string]bool{"first": true}
				}
			}
			for i, b := range batches {
				for _, r := range b {
					k := key{scans[i].RepoURL, r.Fingerprint}
					if seenBy[k] == nil {
						seenBy[k] = map[string]bool{}
					}
					seenBy[k][scans[i].ID] = true
				}
			}
			var n int
			require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM findings.findings WHERE org_id = $1`, org).Scan(&n))
			require.Equal(t, len(seenBy), n, "findings")
			rows, err := pool.Query(ctx, `SELECT repo_key, fingerprint, occurrence_count, verification_status FROM findings.findings WHERE org_id = $1`, org)
			require.NoError(t, err)
			for rows.Next() {
				var rp, fp, status string
				var occ int
				require.NoError(t, rows.Scan(&rp, &fp, &occ, &status))
				require.Equal(t, len(seenBy[key{rp, fp}]), occ, "occurrences of %s %s", rp, fp)
				_, verified := fpTraits(fp)
				require.Equal(t, verified, status == Approved, "verification of %s", fp)
			}
			require.NoError(t, rows.Err())

			// Counters and list totals, exact for the organization and
			// every scan, whatever the folding did, and again after a fold
			// of everything.
			check := func() {
				for _, scan := range append([]string{""}, scanIDs(scans)...) {
					for _, sev := range append([]string{""}, Severities...) {
						for _, state := range []string{"", "open", "resolved"} {
							f := Filter{OrgID: org, ScanID: scan, Severity: sev, State: state, SortBy: "found_at", Limit: 15}
							var direct int64
							require.NoError(t, s.Each(ctx, f, func(Finding, Extra) error { direct++; return nil }))
							_, total, err := s.List(ctx, f)
							require.NoError(t, err)
							require.Equal(t, direct, total, "scan=%q severity=%q state=%q", scan, sev, state)
						}
					}
				}
				// The search counters too: repository, category and found_at
				// window totals.
				since := time.Now().Add(-90 * time.Minute)
				for _, sc := range scans {
					for _, f := range []Filter{{RepoKey: vocab.RepoKey(sc.RepoURL)}, {RepoKey: vocab.RepoKey(sc.RepoURL), Severity: "high", State: "open"},
						{Category: Categories[1]}, {FoundSince: since}, {FoundSince: since, FoundUntil: time.Now().Add(time.Hour), Severity: "low"}} {
						f.OrgID, f.SortBy, f.Limit = org, "found_at", 15
						var direct int64
						require.NoError(t, s.Each(ctx, f, func(Finding, Extra) error { direct++; return nil }))
						_, total, err := s.List(ctx, f)
						require.NoError(t, err)
						require.Equal(t, direct, total, "%+v", f)
					}
				}
				var wantTotal int64
				for k := range seenBy {
					if _, verified := fpTraits(k.fp); verified {
						wantTotal++
					}
				}
				total, err := s.Count(ctx, Filter{OrgID: org})
				require.NoError(t, err)
				require.Equal(t, wantTotal, total)
			}
			check()
			for {
				n, err := s.FoldCounts(ctx, 1000)
				require.NoError(t, err)
				if n == 0 {
					break
				}
			}
			for _, c := range counterTables {
				var pending, rows, keys int
				require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pending), count(*), count(DISTINCT (`+c.key+`))
					FROM findings.`+c.table).Scan(&pending, &rows, &keys))
				require.Zero(t, pending, c.table)
				require.Equal(t, keys, rows, "%s: one settled row per key", c.table)
			}
			check()
		})
	}
}

func scanIDs(scans []Scan) []string {
	out := make([]string, len(scans))
	for i, sc := range scans {
		out[i] = sc.ID
	}
	return out
}

// BenchmarkIntake reports findings per second recorded by Report, with one
// stream and with eight concurrent streams of one organization (each its
// own scan, two per repository, batches of 100 with every severity, a
// quarter of each batch seen before by the other scan of the repository),
// then prints the ratio of the two rates.
func BenchmarkIntake(b *testing.B) {
	ctx := context.Background()
	pool := dbtest.Migrated(b, "findings_store", Migrate)
	s := &Store{Pool: pool}
	org := uuid.NewString()
	const batchSize = 100
	rates := map[int]float64{}
	for _, streams := range []int{1, 8} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			scans := make([]Scan, streams)
			for i := range scans {
				scans[i] = Scan{ID: uuid.NewString(), OrgID: org, RepoURL: fmt.Sprintf("https://git.example.com/acme/b%d-%d", streams, i/2), ScanType: "full"}
				if _, err := s.RegisterScan(ctx, scans[i]); err != nil {
					b.Fatal(err)
				}
			}
			var reported int64
			round := 0
			for b.Loop() {
				// One op: every stream reports one batch.
				err := eachStream(streams, func(i int) error {
					batch := make([]Reported, 0, batchSize)
					for j := range batchSize {
						// A quarter of the fingerprints are the pair's
						// shared ones, reported by both scans.
						fp := fmt.Sprintf("s%d-r%d-%d", i, round, j)
						if j%4 == 0 {
							fp = fmt.Sprintf("p%d-r%d-%d", i/2, round, j)
						}
						batch = append(batch, reportedFP(fp))
					}
					_, err := s.Report(ctx, scans[i], batch, true)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				reported += int64(streams * batchSize)
				round++
			}
			rate := float64(reported) / b.Elapsed().Seconds()
			rates[streams] = rate
			b.ReportMetric(rate, "findings/s")
		})
	}
	if rates[1] > 0 {
		// Printed rather than logged: a benchmark's own log is shown only with -v.
		fmt.Printf("intake: %.0f findings/s with 1 stream, %.0f with 8 streams: ratio %.2f\n", rates[1], rates[8], rates[8]/rates[1])
	}
}

// eachStream runs report(i) for the streams 0 to n-1 at once and returns
// an error one of them returned.
func eachStream(n int, report func(i int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := report(i); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// BenchmarkIntakeRescan reports findings per second recorded by Report when
// a scan reports what the repository's previous scan found (batches of 100
// with every severity): each finding is seen again, so the report adds an
// occurrence and updates the finding in place. The previous scan's report
// of the batch is not timed.
func BenchmarkIntakeRescan(b *testing.B) {
	ctx := context.Background()
	s := &Store{Pool: dbtest.Migrated(b, "findings_store", Migrate)}
	org := uuid.NewString()
	var scans [2]Scan
	for i := range scans {
		scans[i] = Scan{ID: uuid.NewString(), OrgID: org, RepoURL: "https://git.example.com/acme/rescan", ScanType: "full"}
		if _, err := s.RegisterScan(ctx, scans[i]); err != nil {
			b.Fatal(err)
		}
	}
	const batchSize = 100
	round := 0
	var reported int64
	for b.Loop() {
		b.StopTimer()
		batch := make([]Reported, batchSize)
		for j := range batch {
			batch[j] = reportedFP(fmt.Sprintf("r%d-%d", round, j))
		}
		if _, err := s.Report(ctx, scans[0], batch, true); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := s.Report(ctx, scans[1], batch, true)
		if err != nil {
			b.Fatal(err)
		}
		if res[0].Created {
			b.Fatal("a finding seen before was created again")
		}
		reported += batchSize
		round++
	}
	b.ReportMetric(float64(reported)/b.Elapsed().Seconds(), "findings/s")
}

// TestLockSeenReadsOnlyItsFindings checks that a report locking the
// findings it has seen before reads those findings and no others of the
// repository, with either plan (see planModes): a report to a large
// repository must not read the whole of it.
func TestLockSeenReadsOnlyItsFindings(t *testing.T) {
	u := newUnit(t)
	sc := u.scan("https://git.example.com/acme/large")
	u.reportMany(sc, 1200, func(i int) Reported { return reportedFP(fmt.Sprintf("fp-%05d", i)) })
	seen := []string{"fp-00007", "fp-00500", "fp-01199"} // sorted, as report sends them
	for _, mode := range planModes {
		t.Run(mode, func(t *testing.T) {
			p := u.prepare(t, mode, "lock_seen", "uuid, text, text[]", lockSeenSQL, u.org, sc.repoKey(), seen)
			assert.Equal(t, float64(len(seen)), findingsRead(p), "findings rows the lock read (kept or filtered out)")
			fps, err := pgx.CollectRows(p.Run(), func(r pgx.CollectableRow) (string, error) {
				var id, fp, state, status string
				var dup *string
				err := r.Scan(&id, &fp, &state, &status, &dup)
				return fp, err
			})
			require.NoError(t, err)
			assert.Equal(t, seen, fps, "the seen findings, in the order given")
		})
	}
}

// BenchmarkFoldCounts reports the time to fold the counter deltas that
// 1,000 findings leave (ten reports of 100, not timed, into an
// organization that already holds 20,000), every severity and state, with
// texts shared as a scanner's rules share them: five titles, 2,000
// descriptions and 3,000 paths. The fold sums the pending rows of every
// counter table (see FoldCounts), a statement per table and round of
// 1,000 keys, as the service's fold worker does.
func BenchmarkFoldCounts(b *testing.B) {
	ctx := context.Background()
	s := &Store{Pool: dbtest.Migrated(b, "findings_store", Migrate)}
	org := uuid.NewString()
	sc := Scan{ID: uuid.NewString(), OrgID: org, RepoURL: "https://git.example.com/acme/fold", ScanType: "full"}
	if _, err := s.RegisterScan(ctx, sc); err != nil {
		b.Fatal(err)
	}
	n := 0
	report := func(findings int) {
		for range findings / 100 {
			batch := make([]Reported, 100)
			for j := range batch {
				batch[j] = Reported{Fingerprint: fmt.Sprintf("fold-%d", n), Title: fmt.Sprintf("Rule %d", n%5), Category: "injection",
					Severity: Severities[n%len(Severities)], Verified: true, Tags: []string{fmt.Sprintf("cwe-%d", n%40)},
					Description: fmt.Sprintf("Tainted input reaches handler%d.", n%2000), AffectedFile: fmt.Sprintf("src/pkg%d/file%d.go", n%30, n%3000)}
				n++
			}
			if _, err := s.Report(ctx, sc, batch, true); err != nil {
				b.Fatal(err)
			}
		}
	}
	fold := func() {
		for {
			removed, err := s.FoldCounts(ctx, 1000)
			if err != nil {
				b.Fatal(err)
			}
			if removed == 0 {
				return
			}
		}
	}
	report(20000)
	fold()
	for b.Loop() {
		b.StopTimer()
		report(1000)
		b.StartTimer()
		fold()
	}
}
