package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// referenceSeed fixes the random data and searches of
// TestSearchMatchesReference, so that a failure reproduces;
// VULNSCAN_SEARCH_SEED runs it with another.
func referenceSeed(t *testing.T) uint64 {
	if v := os.Getenv("VULNSCAN_SEARCH_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("VULNSCAN_SEARCH_SEED: %v", err)
		}
		return n
	}
	return 20261130
}

// TestSearchMatchesReference checks List, Count and Each against a
// reference computed in Go (filterMatches over the whole list in each
// order) for random combinations of every filter, sort and page, on data
// shaped to reach the plans the sizes choose between: keys of skewed sizes
// (a q or file prefix over one key, a dozen or a hundred of them, nearly
// all of them), found_at in bursts with ties broken by id, tags from
// nearly every finding to a handful, findings seen again by a rescan,
// triaged ones, unapproved ones, counters partly folded, and another
// organization with the same texts. Small page sizes make deep pages
// cheap to reach: the page near the keys' bound, the walk of the list,
// the tag rows' pages and counts, a scan's key pages and the severity
// window all run, and the test fails if one of them never did, so that it
// cannot pass by missing them. It then reports more findings, triages more
// without folding the counters, and makes bulk changes by filter, each of
// which must match what the reference matches (or be refused above
// MaxBulk) and leave the findings as it says, and searches again.
//
// It does not run in parallel with the package's other tests: it writes
// for most of a minute, and the plan tests beside it wait for VACUUM to
// mark every page of their tables all-visible, which a server this busy
// did not manage within their minute.
func TestSearchMatchesReference(t *testing.T) {
	ctx := context.Background()
	s0, pool := migratedStore(t)
	rec := &statements{}
	s := &Store{Pool: tracedPool(t, pool, rec, 0)}
	seed := referenceSeed(t)
	rng := rand.New(rand.NewPCG(seed, 1))

	org, other := uuid.NewString(), uuid.NewString()
	repos := []string{"https://git.example.com/acme/app", "https://git.example.com/acme/lib", "https://git.example.com/acme/tool"}
	var scans []Scan
	for i, r := range repos {
		scans = append(scans, Scan{ID: uuid.NewString(), OrgID: org, RepoURL: r, ScanType: "full"})
		if i == 0 {
			scans = append(scans, Scan{ID: uuid.NewString(), OrgID: org, RepoURL: r + ".git", ScanType: "full"}) // a rescan of app
		}
	}
	otherScan := Scan{ID: uuid.NewString(), OrgID: other, RepoURL: repos[0], ScanType: "full"}
	repoOf := map[string]string{}
	for _, sc := range append(slices.Clone(scans), otherScan) {
		if _, err := s0.RegisterScan(ctx, sc); err != nil {
			t.Fatal(err)
		}
		repoOf[sc.ID] = vocab.RepoKey(sc.RepoURL)
	}

	// skewed returns 0..n-1, small values far more often than large ones.
	skewed := func(n int) int { return int(math.Pow(rng.Float64(), 3) * float64(n)) }
	rules := []string{"SQL injection in query builder", "Reflected XSS in template", "Path traversal in upload",
		"Command injection in runner", "Hard-coded secret", "Open redirect after login", "Weak hash for passwords",
		"Server-side request forgery", "Insecure deserialization", "Missing authorization check"}
	finding := func(fp string) Reported {
		r := Reported{Fingerprint: fp, Category: Categories[rng.IntN(len(Categories))],
			Severity: Severities[rng.IntN(len(Severities))], Verified: rng.IntN(12) != 0}
		r.Title = rules[skewed(len(rules))]
		if rng.IntN(30) == 0 {
			r.Title += " #" + fp // a title of its own
		}
		r.Description = fmt.Sprintf("Tainted data reaches handler%d without validation.", skewed(300))
		switch d := rng.IntN(20); {
		case d < 16:
			r.AffectedFile = fmt.Sprintf("src/svc%d/pkg%d/file%d.go", skewed(5), skewed(7), skewed(10))
		case d < 19:
			r.AffectedFile = fmt.Sprintf("lib/mod%d.py", skewed(40))
		}
		if rng.IntN(10) < 9 {
			r.Tags = append(r.Tags, "cwe-1")
		}
		if rng.IntN(4) == 0 {
			r.Tags = append(r.Tags, "cwe-2")
		}
		if rng.IntN(12) == 0 {
			r.Tags = append(r.Tags, "pci")
		}
		if rng.IntN(200) == 0 {
			r.Tags = append(r.Tags, "rare")
		}
		return r
	}
	report := func(sc Scan, batch []Reported) {
		for len(batch) > 0 {
			n := min(len(batch), 250)
			if _, err := s0.Report(ctx, sc, batch[:n], true); err != nil {
				t.Fatal(err)
			}
			batch = batch[n:]
		}
	}
	sizes := []int{1200, 0, 500, 300} // app, its rescan (below), lib, tool
	var appBatch []Reported
	for i, sc := range scans {
		var batch []Reported
		for j := range sizes[i] {
			batch = append(batch, finding(fmt.Sprintf("f%d-%d", i, j)))
		}
		if i == 0 {
			appBatch = batch
		}
		if i == 1 { // the rescan sees a third of app's findings again and finds 200 more
			for j, r := range appBatch {
				if j%3 == 0 {
					batch = append(batch, r)
				}
			}
			for j := range 200 {
				batch = append(batch, finding(fmt.Sprintf("f1-%d", j)))
			}
		}
		report(sc, batch)
	}
	var otherBatch []Reported
	for j := range 300 {
		otherBatch = append(otherBatch, finding(fmt.Sprintf("o-%d", j)))
	}
	report(otherScan, otherBatch)

	// found_at in bursts over twelve days: a fifth of each burst at its
	// very start (ties, ordered by id), the rest within three hours.
	base := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	ids, _, err := s0.List(ctx, Filter{OrgID: org, SortBy: "found_at", Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	var idArg []string
	var atArg []time.Time
	for _, fd := range ids {
		at := base.Add(time.Duration(rng.IntN(12)) * 24 * time.Hour)
		if rng.IntN(5) != 0 {
			at = at.Add(time.Duration(rng.IntN(180)) * time.Minute)
		}
		idArg, atArg = append(idArg, fd.ID), append(atArg, at)
	}
	if _, err := pool.Exec(ctx, `UPDATE findings.findings f SET found_at = v.at FROM unnest($1::uuid[], $2::timestamptz[]) v(id, at) WHERE f.id = v.id`,
		idArg, atArg); err != nil {
		t.Fatal(err)
	}
	// Triage one in every: states, and a severity now and then.
	states := vocab.FindingStates.Strings()
	triage := func(every int) {
		all, _, err := s0.List(ctx, Filter{OrgID: org, SortBy: "found_at", Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range all {
			if rng.IntN(every) != 0 {
				continue
			}
			st := states[1+rng.IntN(len(states)-1)]
			u := Update{State: &st}
			if rng.IntN(3) == 0 {
				sev := Severities[rng.IntN(len(Severities))]
				u.Severity = &sev
			}
			if _, err := s0.Apply(ctx, org, fd.ID, u, Actor{UserID: uuid.NewString(), Username: "ana", Source: "api"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	triage(8)
	// Fold some counter keys and leave the rest pending.
	if _, err := s0.FoldCounts(ctx, 40); err != nil {
		t.Fatal(err)
	}

	// The whole list in each order is the reference the searches are cut
	// from.
	type order struct {
		sortBy string
		desc   bool
	}
	ordered := map[order][]Finding{}
	inScan := map[string]map[string]bool{}
	var orders []order
	for _, sortBy := range []string{"found_at", "updated_at", "severity"} {
		orders = append(orders, order{sortBy, false}, order{sortBy, true})
	}
	// refresh reads the reference again, in the orders given.
	refresh := func(orders ...order) {
		for _, o := range orders {
			all, total, err := s.List(ctx, Filter{OrgID: org, SortBy: o.sortBy, Desc: o.desc, Limit: 10000})
			if err != nil {
				t.Fatal(err)
			}
			if total != int64(len(all)) || len(all) < 1800 {
				t.Fatalf("list of %d findings, total %d", len(all), total)
			}
			ordered[o] = all
		}
		for _, sc := range scans {
			inScan[sc.ID] = scanMembers(t, s, sc.ID)
		}
	}
	refresh(orders...)
	matching := func(f Filter, o order) []string {
		var want []string
		for _, fd := range ordered[o] {
			if filterMatches(f, fd, inScan, repoOf) {
				want = append(want, fd.ID)
			}
		}
		return want
	}

	texts := []string{
		"handler", "handler1", "handler2", "handler17", "handler5 ", "HANDLER4", "andler 2", // descriptions: all, ~111, ~111, 11, 1 key
		"injection", "secret #", "xss in", // titles
		"file3.go", "pkg6/", "mod1", ".py", // paths
		"validation.", "nothing matches this", "a", "%", "_",
	}
	prefixes := []string{"src/", "src/svc0/", "src/svc1/pkg0/", "src/svc0/pkg0/file0.go", "lib/", "lib/mod3", "src/svc4/pkg6/", "nope/"}
	tags := []string{"cwe-1", "cwe-2", "pci", "rare", "none"}
	pick := func(p float64) bool { return rng.Float64() < p }
	// A window's ends: a date, a whole hour or any minute, as often.
	day := func() time.Time {
		at := base.Add(time.Duration(rng.IntN(13))*24*time.Hour - time.Hour)
		switch rng.IntN(3) {
		case 0:
			return at.Truncate(24 * time.Hour)
		case 1:
			return at.Add(time.Duration(rng.IntN(4)) * time.Hour)
		}
		return at.Add(time.Duration(rng.IntN(4*60)) * time.Minute)
	}

	// randomFilter returns a search: one or more of the search filters,
	// or a scan, a severity or a state, with any others.
	randomFilter := func() Filter {
		for {
			f := Filter{OrgID: org}
			if pick(0.55) {
				f.Text = texts[rng.IntN(len(texts))]
			}
			if pick(0.35) {
				f.FilePrefix = prefixes[rng.IntN(len(prefixes))]
			}
			if pick(0.3) {
				f.Tag = tags[rng.IntN(len(tags))]
			}
			if pick(0.2) {
				f.Severity = Severities[rng.IntN(len(Severities))]
			}
			if pick(0.2) {
				f.State = states[rng.IntN(len(states))]
			}
			if pick(0.12) {
				f.Category = Categories[rng.IntN(len(Categories))]
			}
			if pick(0.12) {
				f.RepoKey = vocab.RepoKey(repos[rng.IntN(len(repos))])
			}
			if pick(0.2) {
				f.ScanID = scans[rng.IntN(len(scans))].ID
			}
			if pick(0.2) {
				f.FoundSince = day()
			}
			if pick(0.15) {
				f.FoundUntil = day()
			}
			if f.Searching() || f.Severity != "" || f.State != "" || f.ScanID != "" { // the spec's own lists are tested elsewhere
				return f
			}
		}
	}
	cases := 0
	check := func(f Filter) {
		cases++
		o := order{[]string{"found_at", "updated_at", "severity"}[rng.IntN(3)], pick(0.5)}
		f.SortBy, f.Desc = o.sortBy, o.desc
		want := matching(f, o)
		label := fmt.Sprintf("seed %d case %d: %+v", seed, cases, describeFilter(f))
		limit := []int{1, 2, 3, 5, 15, 40}[rng.IntN(6)]
		last := max(0, (len(want)-1)/limit*limit)
		offsets := []int{0, limit, last, len(want), rng.IntN(len(want) + 1), len(want) * 2 / 3 / limit * limit}
		for _, off := range offsets {
			f.Limit, f.Offset = limit, off
			list, total, err := s.List(ctx, f)
			if err != nil {
				r := rec.reads()
				t.Fatalf("%s: %v\nlast statements:\n%s", label, err, strings.Join(r[max(0, len(r)-3):], "\n--\n"))
			}
			got := make([]string, len(list))
			for i, fd := range list {
				got[i] = fd.ID
			}
			exp := want[min(off, len(want)):min(off+limit, len(want))]
			if !slices.Equal(got, exp) || total != int64(len(want)) {
				t.Fatalf("%s limit=%d offset=%d:\n got %v total %d\nwant %v total %d", label, limit, off, got, total, exp, len(want))
			}
		}
		f.Limit, f.Offset = 0, 0
		if n, err := s.Count(ctx, f); err != nil || n != int64(len(want)) {
			t.Fatalf("%s: count %d (%v), want %d", label, n, err, len(want))
		}
		if cases%5 == 0 {
			var exported []string
			if err := s.Each(ctx, f, func(fd Finding, _ Extra) error {
				exported = append(exported, fd.ID)
				return nil
			}); err != nil || !slices.Equal(exported, want) {
				t.Fatalf("%s: export of %d findings (%v), want %d", label, len(exported), err, len(want))
			}
		}
	}
	for range 200 {
		check(randomFilter())
	}

	// Then more findings (new texts and paths, their counters pending),
	// more triage without a fold, and bulk changes by filter, each of
	// which must match what the reference matches (or refuse a filter
	// matching more than MaxBulk) and leave the list as the reference
	// then says; then the searches again.
	var late []Reported
	for j := range 150 {
		late = append(late, finding(fmt.Sprintf("late-%d", j)))
	}
	report(scans[len(scans)-1], late)
	triage(10)
	byFoundAt := order{"found_at", false}
	refresh(byFoundAt)
	// The first filter matches nearly every finding, more than a bulk
	// change may touch.
	filters := []Filter{{OrgID: org, Tag: "cwe-1"}}
	for range 12 {
		filters = append(filters, randomFilter())
	}
	for i, f := range filters {
		f.SortBy = byFoundAt.sortBy
		want := matching(f, byFoundAt)
		st := states[rng.IntN(len(states))]
		res, err := s0.ApplyBulk(ctx, org, nil, &f, Update{State: &st}, Actor{UserID: uuid.NewString(), Username: "ana", Source: "api"})
		label := fmt.Sprintf("seed %d bulk %d: %s", seed, i, describeFilter(f))
		if len(want) > MaxBulk {
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("%s: %d matches, want the filter refused, got %+v, %v", label, len(want), res, err)
			}
			continue
		}
		if i == 0 {
			t.Fatalf("%s: %d matches, want more than %d", label, len(want), MaxBulk)
		}
		if err != nil || res.Matched != len(want) {
			t.Fatalf("%s: matched %d (%v), want %d", label, res.Matched, err, len(want))
		}
		refresh(byFoundAt)
		byID := map[string]Finding{}
		for _, fd := range ordered[byFoundAt] {
			byID[fd.ID] = fd
		}
		for _, id := range want {
			if byID[id].State != st {
				t.Fatalf("%s: finding %s is %s, want %s", label, id, byID[id].State, st)
			}
		}
	}
	refresh(orders...)
	for range 100 {
		check(randomFilter())
	}

	// Every plan the sizes choose between ran at least once.
	plans := map[string]string{
		"a page found near the keys' bound":   "WITH y AS MATERIALIZED",
		"a walk of the list testing keys":     "WHERE f.id = p.id OFFSET 0",
		"a page of a tag's rows":              "FROM findings.finding_tags t WHERE",
		"a scan's page from its occurrences":  "FROM findings.occurrences o",
		"a union of keys' pages":              "SELECT m.id, m.found_at",
		"keys tested in a hash":               "))) IS TRUE",
		"a complement of keys":                "))) IS FALSE",
		"a tag checked on each key's match":   "t.finding_id = f.id AND t.tag =",
		"a window counted from hour counters": "FROM findings.finding_hour_counts",
	}
	ran := strings.Join(rec.reads(), "\n")
	for name, marker := range plans {
		if !strings.Contains(ran, marker) {
			t.Errorf("no search ran %s (%q)", name, marker)
		}
	}
}

// describeFilter renders f's filters for a failure message.
func describeFilter(f Filter) string {
	var parts []string
	add := func(name, v string) {
		if v != "" {
			parts = append(parts, name+"="+fmt.Sprintf("%q", v))
		}
	}
	add("q", f.Text)
	add("file", f.FilePrefix)
	add("tag", f.Tag)
	add("severity", f.Severity)
	add("state", f.State)
	add("category", f.Category)
	add("repo", f.RepoKey)
	add("scan", f.ScanID)
	if !f.FoundSince.IsZero() {
		add("since", f.FoundSince.Format(time.RFC3339))
	}
	if !f.FoundUntil.IsZero() {
		add("until", f.FoundUntil.Format(time.RFC3339))
	}
	add("sort", f.SortBy)
	if f.Desc {
		parts = append(parts, "desc")
	}
	return strings.Join(parts, " ")
}
