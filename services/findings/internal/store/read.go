package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/vulnscan/vulnscan/pkg/db"
)

// Filter selects and orders approved findings of one organization. Every
// condition set combines with the others by AND.
type Filter struct {
	OrgID    string
	ScanID   string // "" for every scan
	Severity string // "" for any
	State    string // "" for any
	SortBy   string // found_at, updated_at or severity
	Desc     bool
	Limit    int
	Offset   int

	// Search filters; zero values select everything.
	FoundSince time.Time // found_at at or after
	FoundUntil time.Time // found_at strictly before
	RepoKey    string    // the repository, as RepoKey normalizes its URL
	Category   string
	Tag        string // one of the finding's tags, exactly
	FilePrefix string // affected_file starts with it, byte for byte
	Text       string // case-insensitive substring of title, description or affected_file

	// keys holds the keys a q or file prefix search without a scan matches,
	// as Resolve finds them; nil before.
	keys *searchKeys
	// texts is the store's copies of organizations' texts, which a q is
	// matched against when the copy is current (see textCache); nil
	// matches every q through the trigram indexes.
	texts *textCache
	// qKeys holds, for q beside a file prefix (whose keys f.keys holds), the
	// keys of the texts and paths q matches, from the copy of the
	// organization's texts that Resolve found current in its snapshot;
	// pages and totals test them on the prefix's rows rather than matching
	// q through the trigram indexes in each statement (3 ms and more per
	// statement for a q in thousands of texts). Nil matches q on the server.
	qKeys *searchKeys
	// rankLo and rankHi, when not zero, bound severity_rank (see rankWindow).
	rankLo, rankHi int
	// precount, when precounted, is the exact number of findings f
	// selects (within the severities rankLo and rankHi bound), read before
	// the page (see tagPrecounted, countPrecounted), so that a deep page
	// is read from the nearer end.
	precount   int64
	precounted bool
	// scanDriven, with precounted, says that the scan has no more of the
	// findings of f's severity and state than the tag: its page is read
	// from the scan's occurrences, each checked for the tag.
	scanDriven bool
	// keysTested says that the rows the statement reads are found by
	// other means (a walk of a tag's rows or of the list) and only tested
	// against the resolved keys (see searchKeys.match).
	keysTested bool
	// unwalked has Resolve read the keys' indexes rather than walk the
	// organization's list or the scan's occurrences: List's second try when
	// a bounded walk did not reach its page (see searchKeys.walkBudget).
	unwalked bool
}

// searchKeys are the keys of the distinct texts and paths a search
// matches, per key column of the findings: for q the titles, descriptions
// and paths that contain it, for a file prefix the paths that start with it.
// Only keys with findings of the filter's severity and state are held (the
// key counters tell which), and with a tag across every scan, or beside a
// file prefix with q, only those with findings of a severity that the
// tag's findings, or q's matches, have: the others can match nothing the
// filter selects, so pages and counts need not read them.
type searchKeys struct {
	title, description, file []string
	// not marks, per column (title, description, file), keys held as their
	// complement: the organization's other texts of that column. When most
	// of a column's texts match, the few that do not are the smaller set to
	// carry and check, and a finding matches through the column when its
	// key is not among them (every finding's texts are in the organization's
	// distinct texts). A complement is exact only within the snapshot that
	// read it: List and Count read it and the findings in one snapshot.
	not [3]bool
	// matched holds, per column, the approved findings with the filter's
	// severity and state (with a tag, or a prefix's q, in its severities)
	// that match through its keys, from the key counters.
	matched [3]int64
	// bySeverity holds, per column, the findings with the filter's state
	// that match through its keys, per severity in Severities' order.
	bySeverity [3][]int64
	// counts holds, for a page past the first or under a filter (see
	// matchSQL), per column not held as a complement, each key's findings
	// that the search selects (with the filter's severity and state, from
	// the counters), in the order of the column's keys (see keyShares);
	// otherwise nothing.
	counts [3][]int64
	// severities holds, for a page past the first sorted by severity
	// without a severity filter, per column not held as a complement, each
	// key's findings with the filter's state per severity, in Severities'
	// order, in the order of the column's keys (see inRanks); otherwise
	// nothing.
	severities [3][][]int64
	// hits is the number of keys held, and for a column held as its
	// complement the number of its matching texts.
	hits int64
	// tagged is, for a search with a tag across every scan, the
	// organization's findings with the tag, from the tag counters (see
	// keyDriven).
	tagged int64
	// scanned is, for a search within a scan, the scan's approved
	// findings over every severity and state, from the counters (see
	// scanKeyCountQuery).
	scanned int64
	// walk is set when a page is better found by walking the scan's
	// occurrences or the organization's list in order, checking each
	// row's keys, than by reading the keys' indexes (the occurrences' for
	// a scan, the findings' without): when the keys are so many, or match
	// so much of the list, that reading each one's share of the page costs
	// more than walking the list to the page's end.
	walk bool
	// walkBudget bounds a walk of the organization's list or of a scan's
	// occurrences: the entries, under the filters other than the keys,
	// that it reads at most (see listIDs, scanSearchPage). The choice to
	// walk takes the matches as spread evenly over the list (see walked),
	// and matches that all lie at its far end would have the walk read
	// every other finding first: 58 ms for page 1 of 60,000 matches
	// behind 240,000 newer findings. The budget is twice
	// the walk that costs what reading the keys' indexes would, rounded up
	// to a power of two (few distinct statements) and at least
	// walkBudgetMin; a walk that spends it without filling its page is
	// dropped, and List reads the page from the keys' indexes instead. It
	// is 0, and the walk unbounded, when the organization (the scan) holds
	// no more findings than the budget.
	walkBudget int64
}

// walkBudgetMin is the least walkBudget: about half a millisecond of
// walking, which a search may spend on its first try whatever its
// estimate.
const walkBudgetMin = 4096

// budgetFor returns walkBudget for a walk that costs what reading the
// keys' indexes does after entries entries.
func budgetFor(entries float64) int64 {
	b := int64(walkBudgetMin)
	for float64(b) < 2*entries {
		b *= 2
	}
	return b
}

// keyColumns are the findings' key columns, in searchKeys' order.
var keyColumns = []string{"title", "description", "file"}

// match renders the condition that a row with key columns (alias a: a
// finding, or an occurrence, which carries copies of them) matches through
// column i, whose keys are the parameter ?. filter says that the
// condition only tests rows found otherwise (see hashedKeysMin).
func (k *searchKeys) match(a string, i int, filter bool) string {
	col := a + "." + keyColumns[i] + "_key"
	if filter && len(k.sets()[i]) >= hashedKeysMin {
		if k.not[i] {
			return "(" + col + " IN (SELECT unnest(?::uuid[]))) IS FALSE"
		}
		return "(" + col + " IN (SELECT unnest(?::uuid[]))) IS TRUE"
	}
	c := col + " = ANY(?::uuid[])"
	if k.not[i] {
		return "NOT (" + c + ")"
	}
	return c
}

// hashedKeysMin is the least number of keys that a condition testing rows
// found otherwise (a tag's rows, walked in the tag's index; the
// organization's list, walked in order, see walkPage) looks up in a hash
// rather than an array. After five runs of a statement the server may keep
// a generic plan, made without the parameters' values, and there tests col
// = ANY($n) against each of the array's elements in turn for every row
// (only an array written into the statement is hashed): at a million
// findings, a tag of 25,000 with the 140 paths of a prefix took 11-13 ms a
// page, against 4-7 ms in its first five runs, and with the 1,111
// descriptions of a q 63-81 ms against 9-12 ms. The subquery in a condition
// that is not one of the statement's top-level conjuncts is run once into a
// hash (IS TRUE keeps the server from turning it into a join, which would
// lose the walk's order). Below this many keys the array is as cheap, and
// its selectivity is known to the planner.
//
// Walks of a scan's occurrences (scanSearchPage) keep the array: there a
// generic plan may still read the occurrences' key indexes, which only the
// array can drive, and with the hash it read a rescan's whole description
// index (20 ms against 13 ms for q over 1,111 descriptions).
const hashedKeysMin = 9

// cond appends to conds and args the condition that a row with key
// columns (alias a) matches through one of the columns cols (indexes in
// keyColumns): none when a column holds the complement of no key (every
// text of it matches, and so every row), false when no column holds a key
// or a complement, else the columns' conditions, leaving out those without
// keys, which match no row. A condition on one column leaves the column's
// index to serve it alone. filter says that the rows are found otherwise
// and only tested (see match).
func (k *searchKeys) cond(a string, cols []int, filter bool, conds []string, args []any) ([]string, []any) {
	if slices.ContainsFunc(cols, k.all) {
		return conds, args
	}
	var ors []string
	for _, i := range cols {
		keys := k.sets()[i]
		if len(keys) == 0 {
			continue
		}
		args = append(args, db.UUIDArray(keys))
		ors = append(ors, strings.ReplaceAll(k.match(a, i, filter), "?", "$"+strconv.Itoa(len(args))))
	}
	switch len(ors) {
	case 0:
		return append(conds, "false"), args
	case 1:
		return append(conds, ors[0]), args
	}
	return append(conds, "("+strings.Join(ors, " OR ")+")"), args
}

// tested appends to conds and args the condition that a row with key
// columns (alias a), found through other keys (a file prefix's), matches
// through one of its columns, as cond does, in a form that no index
// serves: tested on the rows read, never driving the read. (A test the
// planner could index, col = ANY of a few keys, might otherwise have a
// generic plan read q's keys' findings for each of the prefix's keys.)
func (k *searchKeys) tested(a string, conds []string, args []any) ([]string, []any) {
	n := len(conds)
	conds, args = k.cond(a, []int{0, 1, 2}, true, conds, args)
	if len(conds) > n {
		conds[n] = "(" + conds[n] + ") IS TRUE"
	}
	return conds, args
}

// everything reports whether some column holds the complement of no key:
// every text of the column matches, and so every finding (each has a key
// in every column, among the organization's texts), within the snapshot
// that read the keys.
func (k *searchKeys) everything() bool { return k.all(0) || k.all(1) || k.all(2) }

// all reports whether column i holds the complement of no key.
func (k *searchKeys) all(i int) bool { return k.not[i] && len(k.sets()[i]) == 0 }

// sets returns the keys of each column, in keyColumns' order.
func (k *searchKeys) sets() [][]string { return [][]string{k.title, k.description, k.file} }

// setSet sets the keys of column i (in keyColumns' order).
func (k *searchKeys) setSet(i int, keys []string) {
	switch i {
	case 0:
		k.title = keys
	case 1:
		k.description = keys
	default:
		k.file = keys
	}
}

// columns returns the key columns with matching keys and their keys. It is
// only for keys without complements (see indexed).
func (k *searchKeys) columns() (cols []string, keys [][]string) {
	for i, ks := range k.sets() {
		if len(ks) > 0 {
			cols = append(cols, keyColumns[i])
			keys = append(keys, ks)
		}
	}
	return cols, keys
}

// indexed reports whether pages and counts can read the keys' indexes:
// walk is not set and no column holds a complement.
func (k *searchKeys) indexed() bool { return !k.walk && k.not == [3]bool{} }

// Resolve returns f with the keys its q or file prefix matches, looked up
// in the organization's distinct texts and paths, the matches' counts from
// the key counters, and whether its pages should read the keys' indexes or
// walk the list (see searchKeys.walk). List and Count resolve their filter
// and run its queries in one snapshot; Queries renders the keyed queries
// only for a resolved one.
func (s *Store) Resolve(ctx context.Context, f Filter) (Filter, error) {
	return resolve(ctx, s.Pool, s.withTexts(f))
}

// resolve is Resolve on q.
func resolve(ctx context.Context, q db.DBTX, f Filter) (Filter, error) {
	if (f.Text == "" && f.FilePrefix == "") || f.keys != nil {
		return f, nil
	}
	m, err := matchKeys(ctx, q, f, true)
	if err != nil {
		return f, fmt.Errorf("search keys: %w", err)
	}
	k := &m.searchKeys
	f.keys = k
	if m.qKeys != nil {
		f.qKeys = m.qKeys
		if m.qKeys.everything() {
			// q matches every text of a column, and so every finding:
			// the search is the prefix's alone (its keys were read as
			// such, q's severities being every severity).
			f.Text, f.qKeys = "", nil
		}
	}
	if k.hits == 0 {
		return f, nil
	}
	if k.everything() && (f.Text == "" || f.FilePrefix == "") {
		// Every finding matches: the filter is the one without q or the
		// prefix, served by the lists' own indexes and counters. (With both,
		// the keys are the prefix's and q is still to be checked.)
		f.Text, f.FilePrefix, f.keys = "", "", nil
		return f, nil
	}
	// Every approved finding has one key per column, so a complement's
	// matches are the organization's findings less the complement's.
	var matches int64 // over every severity and state, a finding matching through two columns counted twice
	for i := range keyColumns {
		every, some := m.sums[i][0], m.sums[i][1]
		sevs := slices.Clone(m.sumsBySeverity[i])
		if k.not[i] {
			every, some = m.org-every, m.orgMatching-some
			for j := range sevs {
				sevs[j] = m.orgBySeverity[j] - sevs[j]
			}
		}
		matches += every
		k.matched[i], k.bySeverity[i] = some, sevs
	}
	if f.ScanID != "" {
		// Occurrences walked in the scan's list order, each read from the
		// heap, against the index entries read through the keys: one
		// stream per key and severity rank (see scanKeyPage), each up to
		// the page's end, and no more than the scan's matches, estimated
		// as the organization's share.
		//
		// The scan's matches may be far fewer than its share of the
		// organization's, or lie at the far end of its list: the walk then
		// reads every occurrence first. So it is bounded as the
		// organization's list walk is (see walkBudget), by twice the walk
		// that costs what the keys' streams would, and List reads the page
		// from the keys' indexes when the walk falls short.
		//
		// Where the keys are the matching texts themselves (no
		// complement), and the estimate would have the page walk the scan
		// or read more streams than matches, the scan's key counters say
		// which of them the scan holds: the keys it does not hold are
		// dropped (each would be a stream of nothing, and a scan of one
		// repository holds few of an organization's texts), and the
		// scan's matches are estimated from the share of the keys it
		// holds besides its share of the organization's findings. Where
		// the keys' page is cheap by the estimate, the lookup's statement
		// would cost more than it could save.
		k.scanned = m.all
		end := int64(f.Offset + f.Limit)
		choose := func(scanMatches int64) {
			streams := k.hits * int64(len(Severities))
			keyed := min(scanMatches, streams*end) + streams
			k.walkBudget = 0
			if k.walk = !f.unwalked && 4*min(m.all, end*m.all/max(scanMatches, 1)) < keyed; k.walk {
				if b := budgetFor(float64(keyed) / 4); b < m.all {
					k.walkBudget = b // else the walk cannot read more than its budget
				}
			}
		}
		scanMatches := matches * m.all / max(m.org, 1)
		choose(scanMatches)
		hits := k.hits
		if k.not == [3]bool{} && hits > scanKeysHeldMin && hits <= scanKeysHeldMax && (k.walk || hits*int64(len(Severities)) > scanMatches) {
			if err := k.holdOnly(ctx, q, f); err != nil {
				return f, fmt.Errorf("search keys in the scan: %w", err)
			}
			if k.hits == 0 {
				k.walk, k.walkBudget = false, 0
				return f, nil
			}
			choose(scanMatches * k.hits / hits)
		}
	} else {
		// Index entries read per key against entries walked in the list. A
		// key reads its index up to the page's end in the list's order
		// (each key column has an index in every order the list sorts by).
		end := int64(f.Offset + f.Limit)
		keys := float64(min(matches, k.hits*end))
		if k.walk = !f.unwalked && f.walkCost()*f.walked(k, &m, end, matches) < keys; k.walk {
			if b := budgetFor(keys / f.walkCost()); b < m.all {
				k.walkBudget = b // else the walk cannot read more than its budget
			}
		}
	}
	if !k.walk && k.not != [3]bool{} {
		// The keys' indexes need the matching keys themselves.
		pos, err := matchKeys(ctx, q, f, false)
		if err != nil {
			return f, fmt.Errorf("search keys: %w", err)
		}
		pos.matched, pos.bySeverity, pos.walk = k.matched, k.bySeverity, false
		f.keys = &pos.searchKeys
	}
	return f, nil
}

// walkCost is the price, in index entries, of each finding a walk of the
// organization's list for f passes (see walked): it tests the entry's keys
// in a hash, about two entries' cost where the list's index carries every
// column the walk tests (see walkIndexOnly), else a few, for the row it
// reads. Sorted by severity, the keys' pages read only the severities the
// page spans and the keys with findings there (see rankWindow), which the
// walk does not: it keeps the higher price there. So does a file prefix
// with q: the keys are the prefix's and q is tested on top, so the matches
// counted are only a bound on those the walk finds, and a q that keeps few
// of them would have the walk read much of the list (the keys' indexes
// read only the prefix's findings, whatever q keeps).
func (f Filter) walkCost() float64 {
	if f.walkIndexOnly() && f.SortBy != "severity" && (f.FilePrefix == "" || f.Text == "") {
		return 2
	}
	return 4
}

// walked estimates how many of the organization's findings a walk of its
// list (see walkPage) reads to hold end of f's matches, given the keys k
// resolved from m and the matches over every severity and state. Sorted
// by found_at or update time, the matches are taken as spread evenly
// over the list. Under a severity, or sorted by severity, the counters
// say more: a rule's findings mostly share one severity, so the matches
// may all lie in the last severities the list reaches, after every
// finding of the others, and a walk reads those first (it is not cut to
// the severities the page spans). Where the counters put the matches
// nearer than an even spread would, the even spread stands: the keys'
// pages, which read only the severities the page spans, gain as much
// (see rankWindow).
func (f Filter) walked(k *searchKeys, m *matched, end, matches int64) float64 {
	even := float64(end) * float64(m.all) / float64(max(matches, 1))
	if (f.SortBy != "severity" && f.Severity == "") || len(m.orgBySeverity) != len(Severities) {
		return even
	}
	bySeverity := make([]int64, len(Severities)) // the matches, with the filter's state
	for i := range keyColumns {
		if len(k.bySeverity[i]) != len(Severities) {
			return even
		}
		for s, n := range k.bySeverity[i] {
			bySeverity[s] += n
		}
	}
	if f.Severity != "" {
		s := slices.Index(Severities, f.Severity)
		if s < 0 {
			return 0
		}
		return max(even, float64(end)*float64(m.orgBySeverity[s])/float64(max(bySeverity[s], 1)))
	}
	var read float64
	for _, s := range severityOrder(f.Desc) {
		if end <= 0 {
			break
		}
		if bySeverity[s] >= end {
			read += float64(end) * float64(m.orgBySeverity[s]) / float64(bySeverity[s])
			break
		}
		read += float64(m.orgBySeverity[s])
		end -= bySeverity[s]
	}
	return max(even, read)
}

// wideLookupRows is about how many counter rows, read in index order,
// cost as much as a lookup of one key's (a descent of the index and a
// subquery of its own): 1,111 lookups of a key's one row took 7.5 ms,
// 5,000 rows read and tested in a hash 3.5 ms. wideSample is how many of a
// column's matching keys matchKeys looks up to learn how many counter
// rows a key has.
const (
	wideLookupRows = 10
	wideSample     = 8
)

// complementMin is the least number of matching texts of a column that
// Resolve may hold as their complement: fewer are cheap to carry as they
// are.
const complementMin = 64

// matched is what matchKeys reads.
type matched struct {
	searchKeys
	// sums holds, per column, the findings matching through the keys held
	// (the complement's when not) over every severity and state and with
	// the filter's.
	sums [3][2]int64
	// all counts the findings of the filter's scan, or the organization's;
	// org and orgMatching the organization's, over every severity and
	// state and with the filter's.
	all, org, orgMatching int64
	// sumsBySeverity and orgBySeverity are the per-severity counts, with
	// the filter's state, of sums and of the organization's findings. (Not
	// named bySeverity: the keys' own field, which resolve derives from
	// these, would then be hidden behind it.)
	sumsBySeverity [3][]int64
	orgBySeverity  []int64
	// textsCurrent is set when q was matched against the store's copy of
	// the organization's texts, current in the statement's snapshot.
	textsCurrent bool
	// qKeys is, for q beside a file prefix matched against the copy, q's
	// keys from it (see Filter.qKeys).
	qKeys *searchKeys
}

// matchKeys reads, in one statement, the keys f's q or file prefix
// matches per column, their counts from the counters, and the scan's and
// organization's findings. With complements, a column where at least
// complementMin texts, and most of them, match holds the keys of the texts
// that do not (see searchKeys.not).
//
// In a snapshot the statement runs with a generic plan (see genericPlans).
func matchKeys(ctx context.Context, q db.DBTX, f Filter, complements bool) (matched, error) {
	t := f.textCopy()
	sql, args := f.matchSQLOf(t, complements)
	var m matched
	var err error
	if sn, ok := q.(*snapshot); ok {
		b := &pgx.Batch{}
		b.Queue(genericPlans)
		b.Queue(noSeqScans)
		b.Queue(sql, args...).Query(func(rows pgx.Rows) error { return m.read(rows) })
		b.Queue(customPlans)
		b.Queue(seqScans)
		err = sn.SendBatch(ctx, b).Close()
	} else {
		var rows pgx.Rows
		if rows, err = q.Query(ctx, sql, args...); err == nil {
			err = m.read(rows)
		}
	}
	switch {
	case err != nil:
	case m.textsCurrent && t != nil && f.FilePrefix != "":
		m.qKeys = t.qKeys(f.Text) // the copy the statement found current
	case !m.textsCurrent && f.textCached():
		f.texts.stale(f.OrgID)
	}
	return m, err
}

// textCached reports whether f's q may be matched against a copy of the
// organization's texts: q lowered the same in the process as by the
// server. Beside a file prefix the keys are the prefix's, and the copy
// gives q's own (see Filter.qKeys).
func (f Filter) textCached() bool {
	if f.texts == nil || f.Text == "" {
		return false
	}
	_, ok := asciiLower(f.Text)
	return ok
}

// textCopy returns the copy of the organization's texts that f's q may be
// matched against, or nil.
func (f Filter) textCopy() *orgTexts {
	if !f.textCached() {
		return nil
	}
	return f.texts.lookup(f.OrgID)
}

// genericPlans and customPlans surround matchKeys' statement in a
// snapshot. The statement's plan has the same shape whatever the pattern
// or prefix (the texts' trigram index or the paths' byte-order range, then
// a lookup per key), but planning it for its arguments costs more than
// running it: a custom plan took 1.2–1.9 ms more per search for q, and
// 0.6–2 ms more for a file prefix, whose custom plans the server kept
// choosing. A generic plan is made once per connection. It reads a word
// that every text contains through the trigram index too, about 0.8 ms
// slower than the scan a custom plan would choose.
//
// A generic plan does not know the organization, and takes its share of
// the texts and paths for the average: with a few organizations, a third
// of them, whose sequential scan looks cheaper than any index, while the
// organization searching may hold a thousandth of them (reading 20,000
// texts for an organization of 1,000). noSeqScans keeps the statement on
// its indexes, each led by the organization (the texts' and paths' primary
// keys, their trigram indexes of migration 0030, the counters): its work
// follows the organization's texts, not every tenant's. The transaction's
// other statements are then planned for their values (customPlans), as
// the search snapshot's are from its start (see searchSnapshot).
//
// customPlans keeps a statement from running on a plan the server made
// once, without the values, where that plan depends on them. Left to
// itself (plan_cache_mode auto), the server plans a prepared statement for
// its values five times and then keeps the plan made without them if that
// looks no costlier, for every later run on the connection whatever the
// values. At 1,000,000 findings it did so within ten runs for the pages of
// a single key with a repository and of a scan's keys; on skewed data the
// plan it kept for a scan's q read nine times the occurrences of the plan
// for the values (TestSearchesPlannedForTheirValues), and other search
// pages' plans made without their values took 21–302 ms where their own
// took 1.3–2.3 ms (see keyOrdered, indexOrdered).
const (
	genericPlans = "SET LOCAL plan_cache_mode = force_generic_plan"
	noSeqScans   = "SET LOCAL enable_seqscan = off"
	customPlans  = "SET LOCAL plan_cache_mode = force_custom_plan"
	seqScans     = "SET LOCAL enable_seqscan TO DEFAULT"
)

// read reads matchKeys' rows into m and closes them. The keys come as
// uuid[] in binary: as text[], the server formatting 1,111 keys and pgx
// parsing the literal cost 1–2 ms of a search's lookup.
func (m *matched) read(rows pgx.Rows) error {
	defer rows.Close()
	for rows.Next() {
		var i int
		var hits, every, some int64
		var not bool
		var ids []pgtype.UUID
		var sevs []int64
		var counts []int64
		var keySevs [][]int64
		if err := rows.Scan(&i, &hits, &not, &ids, &counts, &keySevs, &every, &some, &sevs, &m.all, &m.org, &m.orgMatching, &m.orgBySeverity, &m.tagged, &m.textsCurrent); err != nil {
			return err
		}
		keys := make([]string, len(ids))
		for j, id := range ids {
			keys[j] = id.String()
		}
		m.hits += hits
		m.not[i], m.sums[i], m.sumsBySeverity[i], m.counts[i], m.severities[i] = not, [2]int64{every, some}, sevs, counts, keySevs
		m.setSet(i, keys)
	}
	return rows.Err()
}

// perSeverity renders, for counter rows (alias a), the sums of n with the
// filter's state ($3) per severity, in Severities' order.
func perSeverity(a string) string {
	sums := make([]string, len(Severities))
	for i, s := range Severities {
		sums[i] = `coalesce(` + severitySum(a, s) + `, 0)`
	}
	return strings.Join(sums, ", ")
}

// keySeverityCols renders, for one key's counter rows (alias a), the sums
// of n with the filter's state ($3) per severity, in Severities' order, as
// columns s0, s1, …; keySeveritySums sums those columns over the keys.
func keySeverityCols(a string) string {
	cols := make([]string, len(Severities))
	for i, s := range Severities {
		cols[i] = severitySum(a, s) + ` AS s` + strconv.Itoa(i)
	}
	return strings.Join(cols, ", ")
}

// severitySum renders the sum of n over counter rows (alias a) of severity
// s with the filter's state ($3).
func severitySum(a, s string) string {
	return `sum(` + a + `.n) FILTER (WHERE ` + a + `.severity = '` + strings.ReplaceAll(s, "'", "''") + `' AND ($3 = '' OR ` + a + `.state = $3))`
}

// keySeverityRow renders keySeverityCols' columns of alias a as an array,
// in Severities' order.
func keySeverityRow(a string) string {
	cols := make([]string, len(Severities))
	for i := range Severities {
		cols[i] = `coalesce(` + a + `.s` + strconv.Itoa(i) + `, 0)`
	}
	return `ARRAY[` + strings.Join(cols, ", ") + `]`
}

// keySeveritySums sums keySeverityCols' columns of alias a.
func keySeveritySums(a string) string {
	sums := make([]string, len(Severities))
	for i := range Severities {
		sums[i] = `coalesce(sum(` + a + `.s` + strconv.Itoa(i) + `), 0)`
	}
	return strings.Join(sums, ", ")
}

// matchSQL renders matchKeys' statement, a row per column in keyColumns'
// order, with its arguments.
func (f Filter) matchSQL(complements bool) (string, []any) {
	return f.matchSQLOf(f.textCopy(), complements)
}

// matchSQLOf is matchSQL with q matched against the copy t of the
// organization's texts when the statement finds it current (t nil: on the
// server).
func (f Filter) matchSQLOf(t *orgTexts, complements bool) (string, []any) {
	scan := f.ScanID
	if scan == "" {
		scan = nilScan
	}
	args := []any{f.OrgID, f.Severity, f.State, scan, complements}
	// The matching texts and paths, and those of a column (v.field) that do
	// not match.
	var match, textMiss, fileMiss, qMatch string
	if f.FilePrefix != "" {
		args = append(args, f.prefixArgs()...)
		match = `SELECT 'file' AS field, x.key FROM (` + prefixKeys(6) + `) x`
		textMiss = `SELECT t.key FROM findings.search_texts t WHERE false` // a prefix matches paths alone
		fileMiss = `SELECT t.key FROM findings.search_files t WHERE t.org_id = $1 AND NOT (` + prefixCond("t", 6) + `)`
		if f.Text != "" {
			args = append(args, f.textArg())
			qMatch = qMatches(len(args), f.Text)
		}
	} else {
		args = append(args, f.textArg())
		match = qMatches(6, f.Text)
		textMiss = `SELECT t.key FROM findings.search_texts t WHERE t.org_id = $1 AND t.field = v.field AND NOT (t.folded LIKE ` + lowered(6) + `)`
		fileMiss = `SELECT t.key FROM findings.search_files t WHERE t.org_id = $1 AND NOT (t.folded LIKE ` + lowered(6) + `)`
	}
	matches := `m AS MATERIALIZED (SELECT x.field, count(*) AS hits, array_agg(x.key) AS keys FROM (` + match + `) x GROUP BY x.field)`
	current := `false`
	switch {
	case t != nil && f.FilePrefix != "":
		var freshCTE string
		freshCTE, qMatch, args = cachedQMatchSQL(t, f.Text, qMatch, qSeverityKeysMax+1, args)
		matches = freshCTE + `,
		` + matches
		current = copyFresh
	case t != nil:
		matches, textMiss, fileMiss, args = cachedMatchSQL(t, f.Text, complements, match, textMiss, fileMiss, args)
		current = copyFresh
	}
	var qSeverities string
	if qMatch != "" {
		qSeverities = prefixQSeverities(qMatch)
	}
	// The counter rows (alias c) of column v.field's keys, of the findings
	// every key is counted against (the scan's, or the organization's), and
	// of the organization's: within a repository and/or a category when the
	// search is scoped to them (see keyScoped).
	keyRows := `findings.finding_key_counts c WHERE c.org_id = $1 AND c.field = v.field`
	allRows := `findings.finding_counts c WHERE c.org_id = $1 AND c.scan_id = $4`
	orgRows := `findings.finding_counts c WHERE c.org_id = $1 AND c.scan_id = '` + nilScan + `'`
	if f.keyScoped() {
		var scope string
		if f.RepoKey != "" {
			args = append(args, f.RepoKey)
			scope += ` AND c.repo_key = $` + strconv.Itoa(len(args))
		}
		if f.Category != "" {
			args = append(args, f.Category)
			scope += ` AND c.category = $` + strconv.Itoa(len(args))
		}
		keyRows = `findings.finding_key_search_counts c WHERE c.org_id = $1 AND c.field = v.field` + scope
		orgRows = `findings.finding_search_counts c WHERE c.org_id = $1` + scope
		// Without a scan, the findings counted against are the
		// organization's ($4 is the nil scan; naming it gives it its type).
		allRows = orgRows + ` AND $4::uuid = '` + nilScan + `'`
	}
	// The organization's findings with the tag, for a search with one across
	// every scan (see keyDriven; within a scan a tag's search is read from
	// the scan's occurrences or the tag's rows whatever the sizes).
	//
	// With such a tag, a key's findings are counted (some, below) only in
	// the severities the tag's findings have (with the filter's state): a
	// finding with both the tag and the key is counted in its severity by
	// both counters. A key with none there matches nothing the search
	// selects and is not held, so that a q whose texts belong to rules of
	// other severities than the tag's answers at once, without reading the
	// tag's rows to find no match.
	tagged, tagSeverities := `0::bigint`, ``
	if f.Tag != "" && f.ScanID == "" {
		args = append(args, f.Tag)
		tag := `$` + strconv.Itoa(len(args))
		tagged = `(SELECT coalesce(sum(c.n), 0) FROM findings.finding_tag_counts c WHERE c.org_id = $1 AND c.tag = ` + tag + `)::bigint`
		tagSeverities = ` AND c.severity = ANY (ARRAY(SELECT (` + severitiesByRank() + `)[g.severity_rank] FROM findings.finding_tag_counts g
			WHERE g.org_id = $1 AND g.tag = ` + tag + ` AND ($3 = '' OR g.state = $3) GROUP BY g.severity_rank HAVING sum(g.n) > 0))`
	}
	// Per column: the matching texts' number and keys (h, gathered for
	// every column in one pass over the matches); the column's texts, from
	// the text counters (a, search_text_counts, read only when at least
	// complementMin match): when complements are allowed and they are most
	// of the column's texts, the keys held are those of the texts that do
	// not (n.neg, c), read only when there are any; the keys held, and
	// their findings from the counters (x). A word in every text thus reads
	// the texts once, through the trigram index, rather than reading each
	// text again to find none that does not match.
	//
	// The counters are read a lookup per key (keyCounts), or in one read of
	// the column's counter rows in their index, each tested in a hash of
	// the matches (w, built once; IS TRUE keeps it a test rather than a
	// join, which a generic plan would price for a guessed ten keys), when
	// that reads fewer rows than the lookups' cost in rows (n.wide, see
	// wideLookupRows): a column's texts times its keys' rows each (the
	// first wideSample keys' rows, looked up) against its matching keys
	// times wideLookupRows and their rows (the sample's keys are looked up
	// one by one whatever the planner makes of the counters' statistics:
	// a join it may turn round read every counter row of the column, 12,030
	// of them, to find eight keys' rows, while the counters of a database
	// just filled had not been analyzed). With 1,111 of 5,000
	// descriptions, a row each, the counters took 7.5 ms by lookups and
	// 3.5 ms in one read. The counters of a repository or a category hold
	// a key's rows of every repository and category, more rows per key
	// than a read of the column's would repay, so a scoped search looks
	// keys up.
	// A key's findings the search selects (some) are those of the filter's
	// severity and state, and of the severities a tag's findings or a
	// prefix's q's matches have.
	selected := tagSeverities
	if qSeverities != "" {
		selected += ` AND coalesce(c.severity = ANY ((SELECT qs.sevs FROM qs)::text[]), true)`
	}
	keySums := `sum(c.n) AS every, sum(c.n) FILTER (WHERE ($2 = '' OR c.severity = $2) AND ($3 = '' OR c.state = $3)` + selected + `) AS some,
		` + keySeverityCols("c")
	keyCounts := `SELECT c.* FROM unnest(CASE WHEN n.neg THEN c.keys ELSE h.keys END) k(key) CROSS JOIN LATERAL (
			SELECT k.key, ` + keySums + ` FROM ` + keyRows + ` AND c.key = k.key) c`
	wide, hashed := `false`, ``
	if !f.keyScoped() {
		hashed = `,
		w AS MATERIALIZED (SELECT m.field, unnest(m.keys) AS key FROM m)`
		wide = `NOT n0.neg AND h.hits >= ` + strconv.Itoa(complementMin) + ` AND (SELECT s.rows > 0 AND h.hits * (` + strconv.Itoa(wideLookupRows) + ` * s.keys + s.rows) >= a.n * s.rows
			FROM (SELECT count(DISTINCT c.key) AS keys, count(*) AS rows FROM unnest(h.keys[1:` + strconv.Itoa(wideSample) + `]) z(key)
				CROSS JOIN LATERAL (SELECT c.key FROM ` + keyRows + ` AND c.key = z.key OFFSET 0) c) s)`
		keyCounts += ` WHERE NOT n.wide
			UNION ALL
			SELECT c.key, ` + keySums + ` FROM ` + keyRows + ` AND n.wide AND ((c.field, c.key) IN (SELECT w.field, w.key FROM w)) IS TRUE
			GROUP BY c.key`
	}
	// The findings of each key held (see keyShares), and their severities,
	// for a page within some severities alone (see rankWindow, inRanks):
	// read only for a page past the first or under a filter, the pages that
	// cut many keys at a bound (see keyBounds; a first page of a few keys
	// may be cut too, its keys then sharing it equally), and the severities
	// only past the first page when sorted by them. For 1,111 keys they
	// cost about 0.25 and 0.85 ms of the lookup, which a first page, mostly
	// found by walking the list, would not repay.
	counts, severities := `'{}'::bigint[]`, `'{}'::bigint[]`
	if f.Offset > 0 || f.keyFiltered() {
		counts = `coalesce(array_agg(c.some) FILTER (WHERE c.some > 0), '{}')`
	}
	if f.SortBy == "severity" && f.Severity == "" && f.Offset > 0 {
		severities = `coalesce(array_agg(` + keySeverityRow("c") + `) FILTER (WHERE c.some > 0), '{}')`
	}
	return `WITH ` + matches + hashed + qSeverities + `
		SELECT v.i, CASE WHEN n.neg THEN h.hits ELSE cardinality(x.live) END, n.neg,
			(CASE WHEN n.neg THEN c.keys ELSE x.live END)::uuid[], (CASE WHEN n.neg THEN '{}' ELSE x.counts END)::bigint[],
			(CASE WHEN n.neg THEN '{}' ELSE x.severities END)::bigint[],
			x.every, x.some, x.sevs,
			(SELECT coalesce(sum(c.n), 0) FROM ` + allRows + `)::bigint,
			(SELECT coalesce(sum(c.n), 0) FROM ` + orgRows + `)::bigint,
			(SELECT coalesce(sum(c.n), 0) FROM ` + orgRows + ` AND ($2 = '' OR c.severity = $2) AND ($3 = '' OR c.state = $3))::bigint,
			(SELECT ARRAY[` + perSeverity("c") + `] FROM ` + orgRows + `)::bigint[],
			` + tagged + `, ` + current + `
		FROM (VALUES (0, 'title'), (1, 'description'), (2, 'file')) v(i, field)
		CROSS JOIN LATERAL (SELECT coalesce(sum(m.hits), 0) AS hits, coalesce(min(m.keys), '{}') AS keys FROM m WHERE m.field = v.field) h
		CROSS JOIN LATERAL (SELECT coalesce(sum(t.n), 0) AS n FROM findings.search_text_counts t
			WHERE t.org_id = $1 AND t.field = v.field AND h.hits >= ` + strconv.Itoa(complementMin) + `) a
		CROSS JOIN LATERAL (SELECT $5 AND h.hits >= ` + strconv.Itoa(complementMin) + ` AND a.n < 2 * h.hits AS neg) n0
		CROSS JOIN LATERAL (SELECT n0.neg, ` + wide + ` AS wide) n
		CROSS JOIN LATERAL (SELECT coalesce(array_agg(z.key), '{}') AS keys FROM (
			SELECT y.key FROM (` + textMiss + `) y WHERE v.field <> 'file'
			UNION ALL SELECT y.key FROM (` + fileMiss + `) y WHERE v.field = 'file'
			LIMIT h.hits) z WHERE n.neg AND a.n > h.hits) c
		CROSS JOIN LATERAL (SELECT coalesce(sum(c.every), 0)::bigint AS every, coalesce(sum(c.some), 0)::bigint AS some,
				ARRAY[` + keySeveritySums("c") + `]::bigint[] AS sevs,
				coalesce(array_agg(c.key) FILTER (WHERE c.some > 0), '{}') AS live,
				` + counts + ` AS counts,
				` + severities + ` AS severities
			FROM (` + keyCounts + `) c) x
		ORDER BY v.i`, args
}

// qSeverityKeysMax is the most keys (texts and paths) a q beside a file
// prefix may match for its severities to prune the prefix's keys (see
// prefixQSeverities): each key's counters are a lookup, about 7 µs.
const qSeverityKeysMax = 64

// prefixQSeverities renders, for a file prefix with q, the common table
// expression qs of the severities of the findings that match q (with the
// filter's state, $3), from the key counters of the texts and paths q
// matches (the rows (field, key) of qMatch), or NULL when q matches more
// than qSeverityKeysMax of them. A finding that matches both is counted in its
// severity by its path's counters and by those of the text or path through
// which q matches it, so the prefix's paths without findings of those
// severities match nothing the search selects and are not held: a q
// through rules of other severities than the prefix's findings then
// answers from the lookup, where the prefix's paths were read to find no
// match.
func prefixQSeverities(qMatch string) string {
	limit := strconv.Itoa(qSeverityKeysMax + 1)
	return `,
		qk AS MATERIALIZED (SELECT z.field, z.key FROM (` + qMatch + `) z LIMIT ` + limit + `),
		qs AS MATERIALIZED (SELECT CASE WHEN (SELECT count(*) FROM qk) > ` + strconv.Itoa(qSeverityKeysMax) + ` THEN NULL ELSE ARRAY(
			SELECT c.severity FROM qk CROSS JOIN LATERAL (SELECT c.severity, c.n FROM findings.finding_key_counts c
				WHERE c.org_id = $1 AND c.field = qk.field AND c.key = qk.key AND ($3 = '' OR c.state = $3) OFFSET 0) c
			GROUP BY c.severity HAVING sum(c.n) > 0) END AS sevs)`
}

// severitiesByRank renders an array of the severities indexed by their
// ranks.
func severitiesByRank() string {
	byRank := make([]string, len(Severities))
	for _, sv := range Severities {
		byRank[SeverityRank(sv)-1] = `'` + sv + `'`
	}
	return `ARRAY[` + strings.Join(byRank, ", ") + `]::text[]`
}

// Searching reports whether f has a search filter, which the counters do
// not cover.
func (f Filter) Searching() bool {
	return !f.FoundSince.IsZero() || !f.FoundUntil.IsZero() || f.RepoKey != "" || f.Category != "" || f.Tag != "" ||
		f.FilePrefix != "" || f.Text != ""
}

// searchCounted reports whether the search counters
// (finding_search_counts) hold f's total: its only search filters are the
// repository and the category, and it spans every scan.
func (f Filter) searchCounted() bool {
	return f.ScanID == "" && (f.RepoKey != "" || f.Category != "") && f.FoundSince.IsZero() && f.FoundUntil.IsZero() &&
		f.Tag == "" && f.FilePrefix == "" && f.Text == ""
}

// rankBounds adds, through add, the conditions of f's rank bounds (see
// rankBand) on the severity rank column col: an equality for one rank, so
// that a rank index yields found_at order.
func (f Filter) rankBounds(col string, add func(cond string, v any)) {
	switch {
	case f.rankHi != 0 && f.rankLo == f.rankHi:
		add(col+" = ?", f.rankLo)
	case f.rankHi != 0:
		add(col+" >= ?", f.rankLo)
		add(col+" <= ?", f.rankHi)
	}
}

// rankIs renders the condition that the severity rank column col holds
// severity s's rank (the parameter ?), with that rank: never true for an
// unknown severity, which has no rank.
func rankIs(col, s string) (cond string, rank int) {
	if !slices.Contains(Severities, s) {
		return "false AND " + col + " = ?", 0
	}
	return col + " = ?", SeverityRank(s)
}

// where renders the filter's conditions and arguments.
func (f Filter) where() (string, []any) {
	conds, args := f.unkeyedWhere()
	conds, args = f.keyConds("f", conds, args)
	return strings.Join(conds, " AND "), args
}

// unkeyedWhere returns the filter's conditions (alias f) and arguments
// other than those of its file prefix and q (see keyConds).
func (f Filter) unkeyedWhere() ([]string, []any) {
	args := []any{f.OrgID}
	conds := []string{"f.org_id = $1", "f.verification_status = 'approved'"}
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	switch {
	case f.Severity != "" && f.SortBy == "updated_at":
		// findings_list_sev_updated and _sev_state_updated hold the
		// severity itself in update order.
		add("f.severity = ?", f.Severity)
	case f.Severity != "":
		// The rank stands for the severity (one each): findings_list_rank
		// and _state_rank yield found_at order within it, and the search
		// indexes carry it, so the page stays an index-only scan (migration
		// 0024 dropped the indexes on the severity name in found_at order).
		add(rankIs("f.severity_rank", f.Severity))
	}
	if f.State != "" {
		add("f.state = ?", f.State)
	}
	if f.ScanID != "" {
		// A lookup per row (OFFSET 0 keeps it one): the rows come from an
		// index of the other filters, often far fewer than the scan's.
		add("EXISTS (SELECT 1 FROM findings.occurrences o WHERE o.scan_id = ? AND o.finding_id = f.id OFFSET 0)", f.ScanID)
	}
	f.rankBounds("f.severity_rank", add)
	if !f.FoundSince.IsZero() {
		add("f.found_at >= ?", f.FoundSince)
	}
	if !f.FoundUntil.IsZero() {
		add("f.found_at < ?", f.FoundUntil)
	}
	if f.RepoKey != "" {
		add("f.repo_key = ?", f.RepoKey)
	}
	if f.Category != "" {
		add("f.category = ?", f.Category)
	}
	if f.Tag != "" {
		add("EXISTS (SELECT 1 FROM findings.finding_tags t WHERE t.org_id = $1 AND t.approved AND t.tag = ? AND t.finding_id = f.id)", f.Tag)
	}
	return conds, args
}

// keyConds appends to conds and args the conditions of f's file prefix and
// q on the key columns of alias a (a finding, or an occurrence's copies):
// membership in the resolved keys, or else the key subqueries.
func (f Filter) keyConds(a string, conds []string, args []any) ([]string, []any) {
	switch k := f.keys; {
	case k != nil && f.FilePrefix != "": // the keys are the prefix's
		conds, args = k.cond(a, []int{2}, f.keysTested, conds, args)
	case f.FilePrefix != "":
		args = append(args, f.prefixArgs()...)
		conds = append(conds, a+".file_key IN ("+prefixKeys(len(args)-2)+")")
	}
	switch k := f.keys; {
	case k != nil && f.FilePrefix == "" && f.Text != "": // the keys are q's
		conds, args = k.cond(a, []int{0, 1, 2}, f.keysTested, conds, args)
	case f.qKeys != nil && f.Text != "": // q's keys beside the prefix's, from the copy
		conds, args = f.qKeys.tested(a, conds, args)
	case f.Text != "":
		args = append(args, f.textArg())
		p := len(args)
		conds = append(conds, "("+a+".title_key IN ("+textKeys(p, f.Text)+") OR "+a+".description_key IN ("+textKeys(p, f.Text)+
			") OR "+a+".file_key IN ("+fileTextKeys(p, f.Text)+"))")
	}
	return conds, args
}

// The key subqueries of the search filters. q and a file prefix are first
// matched against the organization's distinct texts and paths
// (search_texts, search_files: few rows, see migration 0017), and a finding
// matches through the keys of its title, description and file. Each takes
// the number of its first argument; the organization is always $1.

// textKeys renders the keys of the titles and descriptions that contain
// the pattern $p (see textArg) for q, case-insensitively (see foldedLike).
func textKeys(p int, q string) string {
	return `SELECT t.key FROM findings.search_texts t WHERE t.org_id = $1 AND ` + foldedLike("t", p, q)
}

// qMatches renders the fields and keys of the titles, descriptions and
// paths that contain the pattern $p for q (see textKeys, fileTextKeys).
func qMatches(p int, q string) string {
	return `SELECT t.field, t.key FROM findings.search_texts t WHERE t.org_id = $1 AND ` + foldedLike("t", p, q) + `
		UNION ALL SELECT 'file', x.key FROM (` + fileTextKeys(p, q) + `) x`
}

// fileTextKeys renders the keys of the paths that contain the pattern $p,
// case-insensitively as textKeys.
func fileTextKeys(p int, q string) string {
	return `SELECT t.key FROM findings.search_files t WHERE t.org_id = $1 AND ` + foldedLike("t", p, q)
}

// foldedLike renders the condition that the text or path of alias a
// contains q, the pattern $p: its lowered form (migration 0023) LIKE the
// lowered pattern, which is what ILIKE does in a multibyte encoding,
// without lowering each text again. The trigram indexes of the lowered
// forms (led by the organization, migration 0030) serve it. A q without
// three ASCII letters or digits in a row may yield no trigram, and a
// trigram index then reads every entry it holds, every organization's
// (3-4 s at 1,000,000 texts): such a q is matched by a condition that no
// index serves, over the organization's own texts, found through an index
// led by the organization.
func foldedLike(a string, p int, q string) string {
	col := a + ".folded"
	if !hasTrigram(q) {
		col = "(" + col + " || '')"
	}
	return col + ` LIKE ` + lowered(p)
}

// lowered renders the pattern $p lowered as the texts' lowered forms are
// (lower, in the server's collation), once per statement: an uncorrelated
// subquery is evaluated once, where lower($p) in a condition is evaluated
// again for every text the condition tests (0.7 ms of the 3.4 ms a q
// contained in 5,000 descriptions took to match them).
func lowered(p int) string { return `(SELECT lower($` + strconv.Itoa(p) + `))` }

// hasTrigram reports whether q holds three ASCII letters or digits in a
// row, which yield a trigram of pg_trgm whatever the server's locale.
func hasTrigram(q string) bool {
	run := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			if run++; run == 3 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// prefixKeys renders the keys of the paths that start with $p+2, byte for
// byte, found as the byte-order range [$p, $p+1) in search_files_prefix
// (see prefixArgs).
func prefixKeys(p int) string {
	return `SELECT t.key FROM findings.search_files t WHERE t.org_id = $1 AND ` + prefixCond("t", p)
}

// prefixCond renders prefixKeys' condition on the paths (alias a).
func prefixCond(a string, p int) string {
	lo, hi, pre := "$"+strconv.Itoa(p), "$"+strconv.Itoa(p+1), "$"+strconv.Itoa(p+2)
	return a + `.path COLLATE "C" >= ` + lo + ` AND (` + hi + ` = '' OR ` + a + `.path COLLATE "C" < ` + hi + `) AND starts_with(` + a + `.path, ` + pre + `)`
}

// textArg is the LIKE pattern of q: q is a case-insensitive substring of
// the title, the description or the affected file, each on its own, every
// character of q standing for itself.
func (f Filter) textArg() string { return "%" + EscapeLike(f.Text) + "%" }

// prefixArgs are prefixKeys' arguments: the least and the first excluded
// path of the prefix's range ("" when no path is excluded) and the prefix.
func (f Filter) prefixArgs() []any {
	hi, _ := prefixEnd(f.FilePrefix)
	return []any{f.FilePrefix, hi, f.FilePrefix}
}

// prefixEnd returns the least string greater than every string that starts
// with p, in byte order (which is code point order in UTF-8): p with its
// last code point incremented, skipping surrogates and dropping code points
// that cannot grow. ok is false when no such string exists.
func prefixEnd(p string) (string, bool) {
	rs := []rune(p)
	for len(rs) > 0 {
		last := rs[len(rs)-1]
		switch {
		case last == unicode.MaxRune:
			rs = rs[:len(rs)-1]
			continue
		case last == 0xD7FF:
			rs[len(rs)-1] = 0xE000
		default:
			rs[len(rs)-1] = last + 1
		}
		return string(rs), true
	}
	return "", false
}

// EscapeLike makes every character of s match itself in a LIKE or ILIKE
// pattern with the default escape character.
func EscapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// orderBy renders the sort with its tie-breakers found_at then id, all in
// one direction so that a single index serves it forwards or backwards.
func (f Filter) orderBy(alias string) string { return f.orderByID(alias, "id") }

// orderByID is orderBy with the finding's id in column idCol.
func (f Filter) orderByID(alias, idCol string) string {
	dir := " ASC"
	if f.Desc {
		dir = " DESC"
	}
	cols := f.orderCols(idCol)
	for i, c := range cols {
		cols[i] = alias + "." + c + dir
	}
	return strings.Join(cols, ", ")
}

// orderCols returns the columns of the list's order, the finding's id in
// column idCol.
func (f Filter) orderCols(idCol string) []string {
	switch f.SortBy {
	case "updated_at":
		return []string{"updated_at", "found_at", idCol}
	case "severity":
		if f.Severity != "" || (f.rankHi != 0 && f.rankLo == f.rankHi) { // one severity: the rank is constant
			return []string{"found_at", idCol}
		}
		return []string{"severity_rank", "found_at", idCol}
	default:
		return []string{"found_at", idCol}
	}
}

// List returns one page of findings and the exact number of matches. The
// page and the total are read in one round trip (Queries gives the SQL),
// after Resolve's for q or a file prefix, all in one snapshot.
func (s *Store) List(ctx context.Context, f Filter) ([]Finding, int64, error) {
	var list []Finding
	var total int64
	var cut bool // a bounded walk spent its budget short of the page
	f = s.withTexts(f)
	// A snapshot for the SET LOCAL of its plans: made once for the page
	// queued below (see plannedOnce), else for their values from the
	// start (see customPlans). Its BEGIN and COMMIT travel with its
	// statements, in the round trips the list takes anyway.
	var settings []string
	if !f.plannedOnce() {
		settings = []string{customPlans}
	}
	err := inSnapshot(ctx, s.Pool, func(q batchDBTX) error {
		f, err := resolve(ctx, q, f)
		if err != nil {
			return err
		}
		defer func() {
			if k := f.keys; k != nil && k.walk && k.walkBudget > 0 {
				cut = int64(len(list)) < min(int64(f.Limit), total-int64(f.Offset))
			}
		}()
		offset := f.Offset
		f, known, counted, err := f.sized(ctx, q)
		if err != nil {
			return err
		}
		if counted && int64(offset) >= known {
			total = known // the page lies past the matches: nothing to read
			return nil
		}
		if n, ok := f.keyTotal(); ok && int64(f.Offset) >= n {
			total = n // the page lies past the matches: nothing to read
			return nil
		}
		pageSQL, pageArgs, totalSQL, totalArgs := f.Queries()
		b := &pgx.Batch{}
		generic := f.plannedOnce()
		totalFirst := generic && !f.totalPlannedOnce() // before the plans are made once
		queueTotal := func() {
			if counted {
				total = known
				return
			}
			b.Queue(totalSQL, totalArgs...).QueryRow(func(row pgx.Row) error { return row.Scan(&total) })
		}
		if totalFirst {
			queueTotal()
		}
		if generic {
			b.Queue(genericPlans) // until the COMMIT sent with the page
		}
		b.Queue(pageSQL, pageArgs...).Query(func(rows pgx.Rows) error {
			var err error
			list, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Finding, error) { return scanFinding(r) })
			return err
		})
		if !totalFirst {
			queueTotal()
		}
		return sendLast(ctx, q, b)
	}, settings...)
	if err != nil {
		return nil, 0, fmt.Errorf("list findings: %w", err)
	}
	if cut {
		// The matches lie further along the list than an even spread
		// would put them: the page is read again, in a snapshot of its
		// own, from the keys' indexes.
		f.unwalked = true
		return s.List(ctx, f)
	}
	if list == nil {
		list = []Finding{}
	}
	return list, total, nil
}

// sized returns f, resolved, as List reads its page, with its exact total
// where that is counted before the page (counted): for a window sorted by
// severity, its band (see windowBand); for a tag, the end its page is read
// from (see tagSized); else where the page's statement depends on the
// total (see countPrecounted). Its statements must run in the page's
// snapshot.
func (f Filter) sized(ctx context.Context, q batchDBTX) (_ Filter, total int64, counted bool, _ error) {
	f, total, counted, err := f.windowBand(ctx, q)
	if err != nil || counted {
		return f, total, counted, err
	}
	switch {
	case f.tagPrecounted():
		f, total, err = f.tagSized(ctx, q)
		return f, total, err == nil, err
	case f.countPrecounted():
		sql, args := f.countQuery()
		if err := q.QueryRow(ctx, sql, args...).Scan(&total); err != nil {
			return f, 0, false, fmt.Errorf("count: %w", err)
		}
		f.precounted, f.precount = true, total
		return f, total, true, nil
	}
	return f, 0, false, nil
}

// Queries returns the two statements List runs for f, with their
// arguments: the page (the finding columns of findingCols, in list order)
// and the exact total (one bigint). They are exported so that a benchmark
// floor can run exactly the store's SQL.
//
// The page is chosen by an inner query that walks only an index (the list
// and search indexes of the organization, for a scan the occurrences' own
// list or key indexes, for a tag the tag rows' own), and the outer query
// fetches those rows. The total is a sum over counters where they cover
// the filters (see countQuery), else a count of the matches, which the
// search indexes (for a tag, the tag rows' indexes) serve.
func (f Filter) Queries() (page string, pageArgs []any, total string, totalArgs []any) {
	switch {
	case f.ScanID != "" && (!f.Searching() || f.scanRepoOnly()):
		page, pageArgs = f.scanPage()
	case f.precounted && f.scanDriven:
		page, pageArgs = f.scanSearchPage()
	case f.Tag != "" && !f.keyDriven():
		page, pageArgs = f.tagPage()
	case f.ScanID != "" && f.keys != nil && f.keys.indexed():
		page, pageArgs = f.scanKeyPage()
	case f.ScanID != "":
		page, pageArgs = f.scanSearchPage()
	case f.keys != nil && f.keys.indexed():
		page, pageArgs = f.keyPage()
	case f.keys != nil:
		page, pageArgs = f.walkPage()
	default:
		var ids string
		ids, pageArgs = f.listIDs()
		page = `SELECT ` + findingCols + ` FROM findings.findings f JOIN (` + ids + `) p ON p.id = f.id
			ORDER BY ` + f.orderBy("f")
	}
	total, totalArgs = f.countQuery()
	return page, pageArgs, total, totalArgs
}

// walkPage renders the query of one page of a resolved q or file prefix
// search (without a scan or tag) whose keys are better tested on a walk of
// the organization's list, in order, than read from their indexes (see
// searchKeys.walk). Many keys are tested in a hash (see hashedKeysMin), and
// the page's findings are fetched one by one by id (OFFSET 0 keeps the
// lookup apart): a generic plan, which prices the walk's test at half the
// rows and the page's LIMIT at a guess, otherwise fetched the page's 15
// findings through a hash of every finding (127 ms for q over 1,111
// descriptions).
func (f Filter) walkPage() (string, []any) {
	f.keysTested = true
	ids, args := f.listIDs()
	return `SELECT ` + findingCols + ` FROM (` + ids + `) p
		CROSS JOIN LATERAL (SELECT * FROM findings.findings f WHERE f.id = p.id OFFSET 0) f
		ORDER BY ` + f.orderBy("f"), args
}

// listIDs renders the ids of f's page, read from the findings in list
// order under f's conditions (see where), with the arguments. A walk of
// the list (see walkPage) reads at most its budget of entries (see
// searchKeys.walkBudget): its conditions other than the keys' select them
// in list order, as far as the budget (a number in the statement, for the
// planner to price the index's order rather than a sort), and the keys are
// tested on those alone.
func (f Filter) listIDs() (string, []any) {
	if k := f.keys; k != nil && k.walk && k.walkBudget > 0 {
		conds, args := f.unkeyedWhere()
		cols := append(f.orderCols("id"), "title_key", "description_key", "file_key")
		inner := `SELECT f.` + strings.Join(cols, ", f.") + ` FROM findings.findings f WHERE ` + strings.Join(conds, " AND ") +
			` ORDER BY ` + f.orderBy("f") + ` LIMIT ` + strconv.FormatInt(k.walkBudget, 10)
		keyed, args := f.keyConds("f", []string{"true"}, args)
		cut, args := f.pageCut(f.Limit, f.Offset, args)
		return `SELECT f.id FROM (` + inner + `) f WHERE ` + strings.Join(keyed, " AND ") + ` ORDER BY ` + f.orderBy("f") + cut, args
	}
	where, args := f.where()
	cut, args := f.pageCut(f.Limit, f.Offset, args)
	return `SELECT f.id FROM findings.findings f WHERE ` + where + ` ORDER BY ` + f.orderBy("f") + cut, args
}

// plannedOnce reports whether f's page and total run on plans made once
// per statement and connection (genericPlans) rather than for their
// values on every run: the spec's lists (a severity, a state, a scan and
// a sort, no search filter), the searches on columns whose page one index
// yields in order for any values (see indexOrdered), and q or a file
// prefix read the same way from its keys' indexes (see keyOrdered; its
// total is planned for its values, see totalPlannedOnce). Planning a page
// for its values cost more than running it: about 0.7–0.9 ms against 0.2
// ms for a first page (the planner weighs each of the findings' indexes),
// on every request. The page's LIMIT is written into the statement
// (pageCut): a generic plan prices a LIMIT it does not know at a tenth
// of the rows, and chose a hash join over every finding (0.5–1 s at
// 1,000,000 findings) where the list's index in order, cut at 15 rows, is
// the plan for every page. The OFFSET stays a parameter, so each sort and
// filter has one statement per page size (a search over several keys one
// per page: each key yields up to the page's end, see pageCount).
// TestSpecListsPlannedOnce and TestColumnSearchesPlannedOnce check the
// statements' generic plans.
func (f Filter) plannedOnce() bool {
	if f.keys != nil || f.Text != "" || f.FilePrefix != "" {
		return f.keyOrdered()
	}
	if !f.Searching() || f.scanRepoOnly() {
		return true
	}
	return f.ScanID == "" && f.indexOrdered()
}

// totalPlannedOnce reports whether f's total, too, runs on a plan made once
// (see plannedOnce): not a single key's count (see keyOrdered), whose plan
// weighs the key's matches against the other filters' (a window's generic
// plan read every finding of the window rather than the key's), and which
// the key counters give without a statement in most cases (see keyTotal).
func (f Filter) totalPlannedOnce() bool {
	return f.keys == nil && f.plannedOnce()
}

// A list condition held as an equality in the leading columns of an index
// (see indexOrdered).
const (
	eqRank     = 1 << iota // the severity as its rank
	eqSeverity             // the severity by name
	eqState
	eqRepo
	eqCategory
)

// orderedBy lists, for each order of a list (the first of its order
// columns, see orderCols), the sets of equalities that one index of the
// findings holds ahead of that order, as the migrations leave them:
// findings_list_rank, _state_rank, _sev_updated, findings_search_repo,
// _repo_rank, _repo_updated, _repo_category, …
var orderedBy = map[string][]int{
	"found_at": {0, eqRank, eqState, eqState | eqRank, eqRepo, eqRepo | eqRank, eqCategory, eqCategory | eqRank,
		eqRepo | eqCategory, eqRepo | eqCategory | eqRank},
	"severity_rank": {0, eqState, eqRepo, eqCategory, eqRepo | eqCategory},
	"updated_at":    {0, eqSeverity, eqState, eqSeverity | eqState, eqRepo, eqCategory},
}

// tagOrderedBy is orderedBy for a tag's rows (finding_tags_found, _rank
// and _updated).
var tagOrderedBy = map[string][]int{"found_at": {0, eqRank}, "severity_rank": {0}, "updated_at": {0}}

// indexOrdered reports whether f, a search on columns across every scan
// (a repository, a category, a tag, a found_at window, with a severity
// and a state), is read from one index that holds each of its equalities
// ahead of its order, and a window as a range of that order: reading it
// in order to the page's end reads the page's end and nothing else,
// whatever the values, so that the plan made once for the statement is
// the one made for any values. Where no index holds them all (a category
// with a state, a window in update order, a tag with a repository), the
// plan depends on how many findings each condition keeps, and is made for
// the values each time.
func (f Filter) indexOrdered() bool {
	sets := orderedBy
	if f.Tag != "" {
		sets = tagOrderedBy
	}
	return f.orderedIn(sets)
}

// keyOrderedBy is orderedBy for the indexes of each key column
// (findings_search_title, _title_rank, _title_state, …, _description,
// _file, …), which lead with the key.
var keyOrderedBy = map[string]map[string][]int{
	"title":       {"found_at": {0, eqRank, eqState, eqState | eqRank}, "severity_rank": {0, eqState}, "updated_at": {0, eqState}},
	"description": {"found_at": {0, eqRank}, "severity_rank": {0}, "updated_at": {0}},
	"file":        {"found_at": {0, eqRank}, "severity_rank": {0}, "updated_at": {0}},
}

// keyOrdered reports whether f, a q or a file prefix (or both) across
// every scan, is read from the indexes of its keys (see keyPage), each
// key's in the list's order with the equalities of f's other filters
// ahead of that order, as indexOrdered has it, and a window as a range of
// it: each key's index is then read to the page's end (or to a bound, see
// keyBound) whatever the keys, and the page cut from their union, so the
// plan made once is the one made for any values. A tag counts where it is
// checked per key match (see keyDriven), as a lookup of each one. A
// repository or a category does not: the key indexes carry them, but not
// ahead of the order, so the plan made for their values may read a rare
// repository's findings in place of a common key's (a repository and a
// category with 40 file keys read three times the rows planned once). A
// walk of the list (searchKeys.walk) is planned for its values too: its
// generic plan took 16.9 ms against 10.9 ms for page 1,000 of q over
// 1,111 descriptions.
func (f Filter) keyOrdered() bool {
	k := f.keys
	if k == nil || !k.indexed() || f.ScanID != "" || f.Tag != "" && !f.keyDriven() || f.RepoKey != "" || f.Category != "" {
		return false
	}
	cols, _ := k.columns()
	if len(cols) == 0 {
		return false
	}
	if f.rankHi == 0 {
		f = f.rankWindow() // as keyPage reads it
	}
	for _, col := range cols {
		if !f.orderedIn(keyOrderedBy[col]) {
			return false
		}
	}
	return true
}

// orderedIn reports whether one of sets (for each order, the sets of
// equalities an index holds ahead of it) holds each of f's equalities
// ahead of f's order, with f's window a range of that order.
func (f Filter) orderedIn(sets map[string][]int) bool {
	order := f.orderCols("id")[0]
	eq := 0
	switch {
	case f.Severity != "" && order == "updated_at":
		eq |= eqSeverity
	case f.Severity != "" || f.rankHi != 0 && f.rankLo == f.rankHi:
		eq |= eqRank
	case f.rankHi != 0:
		return false // a band of ranks: a range ahead of the order
	}
	if f.State != "" {
		eq |= eqState
	}
	if f.RepoKey != "" {
		eq |= eqRepo
	}
	if f.Category != "" {
		eq |= eqCategory
	}
	if (!f.FoundSince.IsZero() || !f.FoundUntil.IsZero()) && order != "found_at" {
		return false
	}
	return slices.Contains(sets[order], eq)
}

// pageCut renders the LIMIT and OFFSET of a page of f, read as limit rows
// after offset, with args and their arguments appended: the LIMIT written
// into the statement where f is planned once (see plannedOnce), else a
// parameter, as the OFFSET always is.
func (f Filter) pageCut(limit, offset int, args []any) (string, []any) {
	lim, args := f.pageCount(limit, args)
	args = append(args, offset)
	return ` LIMIT ` + lim + ` OFFSET $` + strconv.Itoa(len(args)), args
}

// pageCount renders n, a number of findings that bounds what a page of f
// reads (its LIMIT, its end), with args and their arguments appended: a
// number written into the statement where f is planned once (see
// plannedOnce), else a parameter. A generic plan prices a LIMIT it does
// not know at a tenth of the rows it bounds (see plannedOnce).
func (f Filter) pageCount(n int, args []any) (string, []any) {
	if f.plannedOnce() {
		return strconv.Itoa(max(n, 0)), args
	}
	args = append(args, n)
	return `$` + strconv.Itoa(len(args)), args
}

// keyPage renders the query of one page of a resolved q or file prefix
// search (without a scan or tag). The search's keys drive it: a single
// matching key reads its key column's index (findingsearch_title, … of
// migration 0017, in the list's order) like a filter on one column; with
// several, each key's index yields at most the findings up to the page's
// end, with the other filters applied on the index's columns, and the page
// is cut, in list order, from their union (a finding matching through two
// columns counts once). A page thus reads at most the page's end per key:
// its cost grows with the number of matching keys, not of findings.
func (f Filter) keyPage() (string, []any) {
	f = f.rankWindow()
	in := f.reversed() // the page as the inner query reads it
	cols, keys := f.keys.columns()
	if len(cols) == 1 && len(keys[0]) == 1 {
		where, args := in.keyWhere()
		args = append(args, keys[0][0])
		key := len(args)
		cut, args := f.pageCut(in.Limit, in.Offset, args)
		return `SELECT ` + findingCols + ` FROM findings.findings f JOIN (SELECT f.id FROM findings.findings f WHERE ` + where +
			` AND f.` + cols[0] + `_key = $` + strconv.Itoa(key) + ` ORDER BY ` + in.orderBy("f") + cut +
			`) p ON p.id = f.id ORDER BY ` + f.orderBy("f"), args
	}
	if len(cols) == 1 && in.keyBounds(len(keys[0]), cols[0]) && in.Offset >= in.Limit {
		return f.keyDeepPage(in, cols[0], keys[0])
	}
	union, args, bounded := in.keyUnion(true)
	return f.unionPage(in, union, args, bounded)
}

// keyDeepPage renders the query of f's page, read as in says (see
// reversed), past its first page, for keys of one column col whose
// findings a bound cuts (see keyBound): in.Offset findings come before the
// page. Where the bound holds, the page is found near it rather than by
// collecting every finding up to it.
//
// Each key's j-th finding (y, the one the bound b is read from; j its
// share of the page's end, see keyShares) says how many of its findings lie
// up to the bound: j and those after its j-th up to the bound, a few where
// keys are spread evenly over the list; a key holding fewer than j is
// counted up to the bound. With those n (c), the page lies w = n less the
// offset back from the bound, its last row w-th. A second bound (b2) is
// read the same way back from the first: with each key's share j2 of w
// (its share j scaled by w over the shares' sum, rounded up, at least one),
// each key's j2-th finding back from the bound (y2), and the earliest of
// them when the shares of the keys holding one make at least w, else
// none. The findings from the second bound to the first then hold the
// page's, and are few: each key yields them back from the bound, at most
// w, and the page is cut from their union in reverse. So the findings up
// to the bound are skipped inside the indexes (the j-th findings' offsets)
// and counted mostly from y, and only the findings near the page are
// fetched and sorted. (Each key's count is a subquery fenced by OFFSET 0,
// so that the planner does not copy it into each sum that reads it.)
//
// Where no bound holds, where a key's count reaches the page's end (each
// key is counted up to that), or where the findings up to the bound are
// twice the page's end, the page is cut from each key's findings up to the
// page's end and the bound, in order (see unionPage).
func (f Filter) keyDeepPage(in Filter, col string, keys []string) (string, []any) {
	where, args := in.keyWhere()
	n := in.Offset + in.Limit
	e, args := f.pageCount(n, args)
	l, args := f.pageCount(in.Limit, args)
	args = append(args, db.UUIDArray(keys), in.keys.keyShares(col, keys, n), in.Offset)
	k, j, o := "$"+strconv.Itoa(len(args)-2), "$"+strconv.Itoa(len(args)-1), "$"+strconv.Itoa(len(args))+"::bigint"
	l += "::bigint"
	reverse := in
	reverse.Desc = !in.Desc
	b, back := in.boundRows(), reverse.boundRows()
	from := `FROM findings.findings f WHERE ` + where + ` AND f.` + col + `_key = `
	upToBound := ` AND (` + b.of("f") + `) ` + b.atOrBefore + ` (SELECT ` + b.of("b") + ` FROM b)`
	near := `(SELECT b.past FROM b) = 0 AND NOT (SELECT c.capped FROM c) AND (SELECT c.n FROM c) < 2 * ` + e + `::bigint`
	j2 := `greatest(((SELECT c.w FROM c) * k.j + (SELECT c.shares FROM c) - 1) / (SELECT c.shares FROM c), 1)`
	return `WITH y AS MATERIALIZED (
			SELECT k.key, k.j, z.* FROM unnest(` + k + `::uuid[], ` + j + `::bigint[]) k(key, j) LEFT JOIN LATERAL (
				SELECT ` + b.of("f") + ` ` + from + `k.key ORDER BY ` + in.orderBy("f") + ` OFFSET k.j - 1 LIMIT 1) z ON true),
		b AS MATERIALIZED (SELECT b.* FROM (
				(SELECT ` + b.of("y") + `, 0 AS past FROM y WHERE y.id IS NOT NULL AND (SELECT sum(y.j) FILTER (WHERE y.id IS NOT NULL) FROM y) >= ` + e + `
					ORDER BY ` + reverse.orderBy("y") + ` LIMIT 1)
				UNION ALL SELECT ` + b.past + `, 1) b ORDER BY b.past LIMIT 1),
		c AS MATERIALIZED (SELECT coalesce(sum(z.n), 0)::bigint AS n, coalesce(bool_or(z.n >= ` + e + `), false) AS capped,
				coalesce(sum(z.n), 0)::bigint - ` + o + ` AS w, greatest(sum(y.j), 1)::bigint AS shares
			FROM y CROSS JOIN LATERAL (SELECT CASE WHEN y.id IS NULL
				THEN (SELECT count(*) FROM (SELECT 1 ` + from + `y.key` + upToBound + ` LIMIT y.j) q)
				ELSE y.j + (SELECT count(*) FROM (SELECT 1 ` + from + `y.key AND (` + b.of("f") + `) ` + b.after + ` (` + b.of("y") + `)` + upToBound +
		` LIMIT ` + e + ` - y.j) q) END AS n OFFSET 0) z
			WHERE (SELECT b.past FROM b) = 0),
		y2 AS MATERIALIZED (SELECT z.* FROM unnest(` + k + `::uuid[], ` + j + `::bigint[]) k(key, j) CROSS JOIN LATERAL (
				SELECT ` + j2 + ` AS j2, ` + b.of("f") + ` ` + from + `k.key` + upToBound + ` ORDER BY ` + reverse.orderBy("f") + ` OFFSET ` + j2 + ` - 1 LIMIT 1) z
			WHERE ` + near + `),
		b2 AS MATERIALIZED (SELECT b2.* FROM (
				(SELECT ` + b.of("y2") + `, 0 AS past FROM y2 WHERE (SELECT sum(y2.j2) FROM y2) >= (SELECT c.w FROM c)
					ORDER BY ` + in.orderBy("y2") + ` LIMIT 1)
				UNION ALL SELECT ` + back.past + `, 1) b2 ORDER BY b2.past LIMIT 1)
		SELECT ` + findingCols + ` FROM findings.findings f JOIN (
			(SELECT x.id, x.found_at, x.severity_rank, x.updated_at FROM unnest(` + k + `::uuid[]) k(key) CROSS JOIN LATERAL (
				SELECT f.id, f.found_at, f.severity_rank, f.updated_at ` + from + `k.key` + upToBound + `
					AND (` + b.of("f") + `) ` + back.atOrBefore + ` (SELECT ` + b.of("b2") + ` FROM b2)
				ORDER BY ` + reverse.orderBy("f") + ` LIMIT greatest((SELECT c.w FROM c), 0)) x
			WHERE ` + near + `
			ORDER BY ` + reverse.orderBy("x") + ` LIMIT ` + l + ` OFFSET greatest((SELECT c.w FROM c) - ` + l + `, 0))
			UNION ALL
			(SELECT x.id, x.found_at, x.severity_rank, x.updated_at FROM unnest(` + k + `::uuid[]) k(key) CROSS JOIN LATERAL (
				SELECT f.id, f.found_at, f.severity_rank, f.updated_at ` + from + `k.key` + upToBound + ` ORDER BY ` + in.orderBy("f") + ` LIMIT ` + e + `) x
			WHERE NOT (` + near + `)
			ORDER BY ` + in.orderBy("x") + ` LIMIT ` + l + ` OFFSET ` + o + `)) p ON p.id = f.id
		ORDER BY ` + f.orderBy("p"), args
}

// boundRows renders the comparisons of a finding's place in a list's
// order with a bound's (see keyBound, keyDeepPage).
type boundRows struct {
	cols              []string // the order's columns
	past              string   // a place past every finding, as a row of the columns' types
	atOrBefore, after string   // the comparisons of a row at or before another in the order, and strictly after
}

// of renders the order's columns of alias a, as a row.
func (b boundRows) of(a string) string {
	row := make([]string, len(b.cols))
	for i, c := range b.cols {
		row[i] = a + "." + c
	}
	return strings.Join(row, ", ")
}

// boundRows returns the boundRows of f's order.
func (f Filter) boundRows() boundRows {
	b := boundRows{cols: f.orderCols("id"), atOrBefore: "<=", after: ">"}
	past := map[string]string{"found_at": "'infinity'::timestamptz", "updated_at": "'infinity'::timestamptz",
		"id": "'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid", "severity_rank": "6::smallint"}
	if f.Desc {
		b.atOrBefore, b.after = ">=", "<"
		past = map[string]string{"found_at": "'-infinity'::timestamptz", "updated_at": "'-infinity'::timestamptz",
			"id": "'00000000-0000-0000-0000-000000000000'::uuid", "severity_rank": "0::smallint"}
	}
	row := make([]string, len(b.cols))
	for i, c := range b.cols {
		row[i] = past[c]
	}
	b.past = strings.Join(row, ", ")
	return b
}

// keyBounds reports whether keys of column col (see keyBound) are cut at
// a bound for f's page: they are at least two, their findings at least
// twice the page's end, and either the page's end reaches twice the keys
// (so that each key yields its share of it, j >= 2) or the search filters
// the keys' findings by a repository, a category, a severity or a state.
// Each key then reads its index entries until it holds the page's end of
// matches or runs out, and under such a filter a key with fewer matches
// than that reads every entry it has (a path's findings in every
// repository, to keep those in one); cut at the bound, each reads about
// as far as its first match past the other keys' first. Without one, a
// key's first entries are its matches, and the bound's own reads would
// only add to a first page's.
func (f Filter) keyBounds(keys int, col string) bool {
	n := f.Offset + f.Limit
	matched := f.keys.matched[slices.Index(keyColumns, col)]
	return keys >= 2 && matched >= 2*int64(n) && (n >= 2*keys || f.keyFiltered())
}

// walkIndexOnly reports whether a walk of the organization's list for f
// (see walkPage) reads the list's index alone: its entries carry the
// found_at, the id, the update time, the severity rank and the search keys
// (migration 0048), but no state, repository, category or tag, nor, in
// update order, the severity, which a walk under such a filter reads from
// each row.
func (f Filter) walkIndexOnly() bool {
	return f.State == "" && f.RepoKey == "" && f.Category == "" && f.Tag == "" && f.ScanID == "" &&
		(f.Severity == "" || f.SortBy != "updated_at")
}

// keyFiltered reports whether f filters its keys' findings by a
// repository, a category, a severity or a state (see keyBounds).
func (f Filter) keyFiltered() bool {
	return f.RepoKey != "" || f.Category != "" || f.Severity != "" || f.State != ""
}

// unionPage renders the query of f's page cut from union (rows of id,
// found_at, severity_rank and updated_at, with the arguments args): the
// rows are ordered and cut as inner says (f itself, or f read from the
// other end, see reversed), and the page's findings are returned in f's
// order. bounded says whether the union's keys are cut at a bound.
func (f Filter) unionPage(inner Filter, union string, args []any, bounded bool) (string, []any) {
	l, args := f.pageCount(inner.Limit, args)
	args = append(args, inner.Offset)
	o := "$" + strconv.Itoa(len(args))
	if !bounded || inner.Offset < inner.Limit {
		return `SELECT ` + findingCols + ` FROM findings.findings f JOIN (
		SELECT m.id, m.found_at, m.severity_rank, m.updated_at FROM (` + union + `) m
		ORDER BY ` + inner.orderBy("m") + ` LIMIT ` + l + ` OFFSET ` + o + `) p ON p.id = f.id
		ORDER BY ` + f.orderBy("p"), args
	}
	// A deeper page of keys cut at a bound (see keyBound), which makes the
	// union hold about the rows up to the page's end: when it holds fewer
	// than twice those, the page is its last rows up to that end, taken
	// from the other end of the union, and ranking a heap of those few
	// costs much less than sorting every row up to the page's end.
	// Otherwise (keys of very uneven sizes) the rows up to the page's end
	// are sorted. Without a bound the union is sorted as it is: holding the
	// rows to count them would cost more than it saves.
	opposite := inner
	opposite.Desc = !inner.Desc
	l, o = l+"::bigint", o+"::bigint"
	return `WITH m AS MATERIALIZED (` + union + `), c AS MATERIALIZED (SELECT count(*) AS n FROM m)
		SELECT ` + findingCols + ` FROM findings.findings f JOIN (
		(SELECT m.id, m.found_at, m.severity_rank, m.updated_at FROM m WHERE (SELECT n FROM c) < 2 * (` + o + ` + ` + l + `)
			ORDER BY ` + opposite.orderBy("m") + `
			LIMIT greatest(least(` + l + `, (SELECT n FROM c) - ` + o + `), 0) OFFSET greatest((SELECT n FROM c) - ` + o + ` - ` + l + `, 0))
		UNION ALL
		(SELECT m.id, m.found_at, m.severity_rank, m.updated_at FROM m WHERE (SELECT n FROM c) >= 2 * (` + o + ` + ` + l + `)
			ORDER BY ` + inner.orderBy("m") + ` LIMIT ` + l + ` OFFSET ` + o + `)) p ON p.id = f.id
		ORDER BY ` + f.orderBy("p"), args
}

// reversed returns f with its page read from the other end of the list,
// in the opposite order, when the page lies nearer that end and the
// number of findings the keyed query selects is known exactly (see
// keySelected, or counted before the page): each key then yields the
// findings up to the reversed page's end, fewer than up to the page's, and
// fewer are sorted. The caller orders the page it reads as f does.
// Otherwise f is returned as it is.
func (f Filter) reversed() Filter {
	n, ok := f.keySelected()
	switch {
	case ok:
	case f.precounted: // counted before the page (see countPrecounted)
		n = f.precount
	default:
		return f
	}
	return f.reversedAt(n)
}

// reversedAt is reversed for a query that selects n findings before its
// limit and offset.
func (f Filter) reversedAt(n int64) Filter {
	if f.Limit <= 0 {
		return f
	}
	rows := min(int64(f.Limit), n-int64(f.Offset)) // the page's findings
	if rows <= 0 {
		return f
	}
	from := n - int64(f.Offset) - rows // the reversed page's offset
	if from >= int64(f.Offset) {
		return f
	}
	f.Desc, f.Offset, f.Limit = !f.Desc, int(from), int(rows)
	return f
}

// keySelected returns the exact number of findings a resolved search's
// keyed query selects before its limit and offset, as the key counters
// give it (see keyCountQuery): ok is false unless f is counted by them and
// its findings match through one column alone, so that the column's sum
// counts each once. Within a severity window (see rankWindow) it is the
// window's severities' sum.
func (f Filter) keySelected() (n int64, ok bool) {
	if !f.keyCounted() || !f.keys.indexed() {
		return 0, false
	}
	col := -1
	for i, m := range f.keys.matched {
		if m != 0 {
			if col >= 0 {
				return 0, false
			}
			col = i
		}
	}
	if col < 0 {
		return 0, true
	}
	if f.rankHi == 0 {
		return f.keys.matched[col], true
	}
	return f.inBand(f.keys.bySeverity[col]), true
}

// inBand returns the sum of counts (per severity, in Severities' order) of
// the severities within f's rank bounds (see rankBand).
func (f Filter) inBand(counts []int64) int64 {
	var n int64
	for i, s := range Severities {
		if r := SeverityRank(s); r >= f.rankLo && r <= f.rankHi {
			n += counts[i]
		}
	}
	return n
}

// rankWindow returns f, sorted by severity, with its page found among the
// severities the page spans alone: the matches' counts per severity (from
// the key counters, when they hold f's total, see keyCountQuery) tell how
// many findings the severities before the page's hold, which the page then
// skips by the rank bounds rather than by reading them. Otherwise, or when
// the counts do not cover every match, f is returned as it is.
func (f Filter) rankWindow() Filter {
	if f.SortBy != "severity" || f.Severity != "" || f.Limit <= 0 || !f.keyCounted() {
		return f
	}
	col := -1
	for i, n := range f.keys.matched {
		if n != 0 {
			if col >= 0 {
				return f // two columns: the counts may count a finding twice
			}
			col = i
		}
	}
	if col < 0 || len(f.keys.bySeverity[col]) != len(Severities) {
		return f
	}
	counts := f.keys.bySeverity[col]
	var sum int64
	for _, n := range counts {
		sum += n
	}
	if sum != f.keys.matched[col] {
		return f
	}
	w := f.rankBand(counts)
	if w.rankHi != 0 {
		w.keys = w.keys.inRanks(col, w.rankLo, w.rankHi)
	}
	return w
}

// inRanks returns k for a page within the severities ranked lo to hi (see
// rankWindow) with column i holding only the keys with findings of those
// severities (with the filter's state, see severities), and their counts
// those findings, so that the page reads no index of a key without any and
// shares itself among the others by what they hold there (see keyShares).
// A rule's title and description usually come with one severity, so a
// page within one severity skips most of a wide search's keys. The page's
// own conditions bound the rank, so the keys left out could yield
// nothing. Without the keys' severities, or when no key would remain, k is
// returned as it is.
func (k *searchKeys) inRanks(i, lo, hi int) *searchKeys {
	keys, sevs := k.sets()[i], k.severities[i]
	if len(sevs) != len(keys) {
		return k
	}
	var kept []string
	var counts []int64
	var keptSevs [][]int64
	for j, key := range keys {
		var n int64
		for s, c := range sevs[j] {
			if r := SeverityRank(Severities[s]); r >= lo && r <= hi {
				n += c
			}
		}
		if n > 0 {
			kept = append(kept, key)
			counts = append(counts, n)
			keptSevs = append(keptSevs, sevs[j])
		}
	}
	if len(kept) == 0 {
		return k
	}
	c := *k
	c.setSet(i, kept)
	c.counts[i], c.severities[i] = counts, keptSevs
	return &c
}

// scanKeysHeldMin and scanKeysHeldMax bound the keys whose scan counters
// resolve reads (see holdOnly): a statement more, about as dear as the
// five index streams of a dozen keys, and a probe a key, at about 1 µs,
// against the five streams each key the scan does not hold would cost a
// page, at a few µs each.
const (
	scanKeysHeldMin = 16
	scanKeysHeldMax = 1 << 14
)

// holdOnly keeps, of each column's keys, those that the scan of f holds,
// by the scan's key counters (finding_scan_key_counts, an index probe per
// key, in the snapshot of the search's other statements), with their
// counts and severities, and sets hits to the keys kept. A key whose
// counter rows in the scan are all zero (or that has none) is in none of
// the scan's approved occurrences, so the search's pages and totals are
// unchanged without it; a key whose delta rows, not yet folded, cancel
// out is kept, which costs its streams and nothing else. The keys must not
// be held as complements. A scan of another organization holds no key.
func (k *searchKeys) holdOnly(ctx context.Context, q db.DBTX, f Filter) error {
	var fields, keys []string
	for i, set := range k.sets() {
		for _, key := range set {
			fields, keys = append(fields, keyColumns[i]), append(keys, key)
		}
	}
	rows, err := q.Query(ctx, `SELECT k.field, k.key::text FROM unnest($3::text[], $4::uuid[]) k(field, key)
		WHERE EXISTS (SELECT 1 FROM findings.finding_scan_key_counts c
				WHERE c.scan_id = $2 AND c.field = k.field AND c.key = k.key AND c.n <> 0)
			AND EXISTS (SELECT 1 FROM findings.scans s WHERE s.id = $2 AND s.org_id = $1)`,
		f.OrgID, f.ScanID, fields, db.UUIDArray(keys))
	if err != nil {
		return err
	}
	defer rows.Close()
	held := make(map[[2]string]bool)
	for rows.Next() {
		var field, key string
		if err := rows.Scan(&field, &key); err != nil {
			return err
		}
		held[[2]string{field, key}] = true
	}
	if err := rows.Err(); err != nil {
		return err
	}
	k.hits = 0
	for i, set := range k.sets() {
		var kept []string
		var counts []int64
		var sevs [][]int64
		for j, key := range set {
			if !held[[2]string{keyColumns[i], key}] {
				continue
			}
			kept = append(kept, key)
			if len(k.counts[i]) == len(set) {
				counts = append(counts, k.counts[i][j])
			}
			if len(k.severities[i]) == len(set) {
				sevs = append(sevs, k.severities[i][j])
			}
		}
		k.setSet(i, kept)
		if k.counts[i] != nil {
			k.counts[i] = counts
		}
		if k.severities[i] != nil {
			k.severities[i] = sevs
		}
		k.hits += int64(len(kept))
	}
	return nil
}

// severityOrder returns the indexes of Severities in the order a list
// sorted by severity reads them: Severities run from the highest rank
// down, which a descending sort reads first.
func severityOrder(desc bool) []int {
	order := make([]int, len(Severities))
	for i := range order {
		order[i] = i
	}
	if !desc {
		slices.Reverse(order)
	}
	return order
}

// rankBand returns f, sorted by severity, with its page found among the
// severities it spans alone, given the exact number of f's matches of each
// severity (counts, in Severities' order): the page skips the severities
// before it by the rank bounds (rankLo, rankHi) and its offset less their
// matches, rather than by reading them. When the page lies past every
// match, f is returned as it is.
func (f Filter) rankBand(counts []int64) Filter {
	start, end := int64(f.Offset), int64(f.Offset+f.Limit)
	var before int64 // the matches of the severities read before
	lo, hi := 0, 0
	for _, i := range severityOrder(f.Desc) {
		n := counts[i]
		if n > 0 && before+n > start && before < end { // a severity without matches holds no row of the page
			r := SeverityRank(Severities[i])
			if hi == 0 {
				f.Offset -= int(before)
				lo, hi = r, r
			}
			lo, hi = min(lo, r), max(hi, r)
		}
		before += n
	}
	if hi == 0 {
		return f
	}
	f.rankLo, f.rankHi = lo, hi
	return f
}

// windowBanded reports whether f is a found_at window sorted by severity
// whose page windowBand may find within one severity: its only other
// filter is the state, across every scan, so that the hour counters count
// its matches per severity (see hourWindow).
func (f Filter) windowBanded() bool {
	if f.SortBy != "severity" || f.Severity != "" || f.Limit <= 0 || f.rankHi != 0 {
		return false
	}
	_, _, ok := f.hourWindow()
	return ok
}

// windowBand returns f (see windowBanded) with its page found among the
// window's findings of the one severity the page lies in, whose number per
// severity the hour counters give: the page then reads that severity's
// rank index (findings_list_rank, _state_rank) in found_at order from the
// window's start, as far as the page's end in it, instead of sorting every
// finding of the window by severity. A page across two severities, whose
// ranks the index holds apart, is left as it is. The counts also make f's
// exact total, returned with counted set; they must come from the page's
// snapshot.
func (f Filter) windowBand(ctx context.Context, q db.DBTX) (_ Filter, total int64, counted bool, _ error) {
	if !f.windowBanded() {
		return f, 0, false, nil
	}
	sql, args, _ := f.hourCountQuery(true)
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return f, 0, false, fmt.Errorf("window counts: %w", err)
	}
	counts := make([]int64, len(Severities))
	var rank int
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&rank, &n}, func() error {
		total += n
		for i, s := range Severities {
			if SeverityRank(s) == rank {
				counts[i] += n
			}
		}
		return nil
	}); err != nil {
		return f, 0, false, fmt.Errorf("window counts: %w", err)
	}
	if b := f.rankBand(counts); b.rankLo == b.rankHi {
		f = b
	}
	return f, total, true, nil
}

// keyWhere renders the conditions of a resolved search other than its
// keys: the spec's and the other search filters, and q when the keys are
// a prefix's.
func (f Filter) keyWhere() (string, []any) {
	rest := f
	rest.Text, rest.FilePrefix, rest.keys, rest.Tag = "", "", nil, ""
	if f.FilePrefix != "" {
		rest.Text = f.Text
	}
	where, args := rest.where()
	if f.Tag != "" {
		// A tag (see keyDriven) is checked per key match in the tag rows'
		// primary key, a lookup each (OFFSET 0 keeps it one): as a join,
		// the server read every row of the tag to hash them.
		args = append(args, f.Tag)
		where += ` AND EXISTS (SELECT 1 FROM findings.finding_tags t WHERE t.finding_id = f.id AND t.tag = $` + strconv.Itoa(len(args)) + ` OFFSET 0)`
	}
	return where, args
}

// keyUnion renders the findings matching a resolved search through each
// of its keys (see keyPage), as rows of id, found_at, severity_rank and
// updated_at, with the arguments. With limit, each key yields at most the
// findings up to the end of f's page, and no further than a bound when
// its keys are many and match many more findings than that (see
// keyBound); bounded says whether that bound is set.
func (f Filter) keyUnion(limit bool) (union string, args []any, bounded bool) {
	where, args := f.keyWhere()
	cut, end := "", ""
	if limit {
		end, args = f.pageCount(f.Offset+f.Limit, args)
		cut = ` ORDER BY ` + f.orderBy("f") + ` LIMIT ` + end
	}
	cols, keys := f.keys.columns()
	if len(cols) == 0 {
		return `SELECT f.id, f.found_at, f.severity_rank, f.updated_at FROM findings.findings f WHERE ` + where + ` AND false` + cut, args, false
	}
	branches := make([]string, len(cols))
	for i, col := range cols {
		args = append(args, db.UUIDArray(keys[i]))
		k := len(args)
		bound := ""
		if limit {
			bound, args = f.keyBound(col, keys[i], where, args, k, end)
			bounded = bounded || bound != ""
		}
		branches[i] = `SELECT x.* FROM unnest($` + strconv.Itoa(k) + `::uuid[]) k(key) CROSS JOIN LATERAL (
			SELECT f.id, f.found_at, f.severity_rank, f.updated_at FROM findings.findings f
			WHERE ` + where + ` AND f.` + col + `_key = k.key` + bound + cut + `) x`
	}
	return strings.Join(branches, " UNION "), args, bounded
}

// keyBound renders, for the keys of column col (keys, parameter $k) of a
// resolved search with conditions where, a condition that keeps each key's
// findings at or before a bound in the list's order, with the arguments;
// "" when it would not pay. The first n = end findings of the list are
// all kept: with j a key's share of n (see keyShares), every key holding
// at least j findings has its first j at or before the latest of the
// keys' j-th findings, so when the shares of those keys make at least n
// that j-th finding is the bound; otherwise the bound is past every
// finding. The keys' j-th findings are read from their indexes in the
// list's order (each key column has one per order: migrations 0017, 0026
// and 0028), and it pays when the keys are many and their findings many
// more than n: each key then yields about its share of the page's end
// rather than up to all of it, and the page is cut from about n findings
// rather than every key's (see unionPage).
func (f Filter) keyBound(col string, keys []string, where string, args []any, k int, end string) (string, []any) {
	if !f.keyBounds(len(keys), col) {
		return "", args
	}
	args = append(args, f.keys.keyShares(col, keys, f.Offset+f.Limit))
	j := "$" + strconv.Itoa(len(args))
	b := f.boundRows()
	reverse := f
	reverse.Desc = !f.Desc
	// The j-th finding of each key (y, j its share), the latest of them
	// with the shares of the keys holding one (b), and the bound: b when
	// those shares make at least n findings, else past every finding.
	return ` AND (` + b.of("f") + `) ` + b.atOrBefore + ` (SELECT ` + b.of("b") + ` FROM (
				SELECT ` + b.of("b") + `, 0 AS past FROM (
					SELECT ` + b.of("y") + `, sum(k.j) OVER () AS shares FROM unnest($` + strconv.Itoa(k) + `::uuid[], ` + j + `::bigint[]) k(key, j) CROSS JOIN LATERAL (
						SELECT ` + b.of("f") + ` FROM findings.findings f WHERE ` + where + ` AND f.` + col + `_key = k.key
						ORDER BY ` + f.orderBy("f") + ` OFFSET k.j - 1 LIMIT 1) y
					ORDER BY ` + reverse.orderBy("y") + ` LIMIT 1) b
				WHERE b.shares >= ` + end + `
				UNION ALL SELECT ` + b.past + `, 1) b ORDER BY b.past LIMIT 1)`, args
}

// keyShares returns each of keys' share (keys of column col, in the
// order counts holds them) of the first n findings of their union, for a
// bound (see keyBound, keyDeepPage): its part of the findings the keys
// hold between them (see counts), rounded up and at least one, so that
// the shares make n or more. Each key's share of a list's first n then
// ends at about the same place in the list where its findings are spread
// like the others', whatever their numbers. Equal shares leave the bound
// at the share's end in the key holding the fewest, far past the others'
// (a key of 10 findings among keys of 1,000, each spread over the list,
// reaches an equal share a hundred times further down than they do), or
// leave none when such keys hold fewer than their share. Without counts
// for the keys (or where they hold none), the shares are equal:
// ceil(n / keys).
func (k *searchKeys) keyShares(col string, keys []string, n int) []int64 {
	shares := make([]int64, len(keys))
	var counts []int64
	if i := slices.Index(keyColumns, col); i >= 0 && len(k.counts[i]) == len(keys) {
		counts = k.counts[i]
	}
	var sum int64
	for _, c := range counts {
		sum += max(c, 0)
	}
	for j := range shares {
		if sum == 0 {
			shares[j] = int64((n + len(keys) - 1) / len(keys))
			continue
		}
		shares[j] = max((int64(n)*max(counts[j], 0)+sum-1)/sum, 1)
	}
	return shares
}

// scanWhere renders the conditions selecting the occurrences of f's scan
// (alias o) whose findings are approved and match f, with the arguments.
// An occurrence carries copies of its finding's list keys, key columns and
// category (migrations 0002, 0020 and 0032), so the spec's filters, the
// found_at window, q, the file prefix and the category are checked on the
// occurrence itself, a repository on the scan and a tag in the tag rows'
// primary key; none looks up the finding. The scan must be
// the organization's: the keys are those of its texts, which another
// organization's findings may share. With keys false, q and the file
// prefix are left out (see scanKeyPage).
func (f Filter) scanWhere(keys bool) (string, []any) {
	args := []any{f.OrgID, f.ScanID}
	conds := []string{"o.scan_id = $2", "o.approved", "EXISTS (SELECT 1 FROM findings.scans s WHERE s.id = $2 AND s.org_id = $1)"}
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.Severity != "" {
		add(rankIs("o.severity_rank", f.Severity))
	}
	if f.State != "" {
		add("o.state = ?", f.State)
	}
	f.rankBounds("o.severity_rank", add)
	if !f.FoundSince.IsZero() {
		add("o.found_at >= ?", f.FoundSince)
	}
	if !f.FoundUntil.IsZero() {
		add("o.found_at < ?", f.FoundUntil)
	}
	if keys {
		conds, args = f.keyConds("o", conds, args)
	} else if f.FilePrefix != "" && f.Text != "" { // the keys are the prefix's; q is checked here
		rest := f
		rest.FilePrefix, rest.keys = "", nil
		conds, args = rest.keyConds("o", conds, args)
	}
	if f.RepoKey != "" {
		// A scan's findings are all of its repository's: a finding is
		// its organization's, repository's and fingerprint's, and a scan
		// records occurrences only of its own repository's findings
		// (Report). The repository is checked once, on the scan.
		add(scanRepoCond("?"), f.RepoKey)
	}
	if f.Category != "" {
		add("o.category = ?", f.Category) // the occurrence's copy (migration 0032)
	}
	if f.Tag != "" {
		// The occurrence's finding has the tag: a lookup in the tag rows'
		// primary key alone (the occurrence is approved, as its finding and
		// so its tag rows are, and the scan is the organization's).
		add("EXISTS (SELECT 1 FROM findings.finding_tags t WHERE t.finding_id = o.finding_id AND t.tag = ?)", f.Tag)
	}
	return strings.Join(conds, " AND "), args
}

// scanSearchPage renders the query of one page of a scan's findings with
// search filters, walking the scan's occurrences in list order and
// checking each one (see scanWhere), stopping at the page: the way when
// most of the scan matches, or q matches so many texts that reading each
// key's entries costs more (see Resolve), or, for a tag, when the scan has
// fewer findings than the tag (see tagSized), whose page is then
// read from the nearer end.
func (f Filter) scanSearchPage() (string, []any) {
	in := f.inner()
	if k := f.keys; k != nil && k.walk && k.walkBudget > 0 {
		// A bounded walk (see searchKeys.walkBudget): the occurrences under
		// the conditions other than q and the file prefix, in list order as
		// far as the budget (a number, for the planner to price the index's
		// order rather than a sort), and q and the prefix tested on those
		// alone, in a hash where the keys are many.
		rest := f
		rest.Text, rest.FilePrefix, rest.keys, rest.qKeys = "", "", nil, nil
		where, args := rest.scanWhere(false)
		f.keysTested = true
		keyed, args := f.keyConds("o", []string{"true"}, args)
		walk := `(SELECT o.finding_id, o.severity_rank, o.found_at, o.updated_at, o.title_key, o.description_key, o.file_key
			FROM findings.occurrences o WHERE ` + where + ` ORDER BY ` + in.orderByID("o", "finding_id") +
			` LIMIT ` + strconv.FormatInt(k.walkBudget, 10) + `) o`
		return f.rowsPage(in, "o", walk+" WHERE "+strings.Join(keyed, " AND "), args, "")
	}
	where, args := f.scanWhere(true)
	return f.rowsPage(in, "o", "findings.occurrences o WHERE "+where, args, "")
}

// scanKeyPage renders the query of one page of a resolved q or file prefix
// search within a scan (without a tag), read from the occurrences' key
// indexes (occurrences_search_title, … of migration 0020: a scan's
// occurrences of a key in severity rank order, then found_at). Each key
// yields at most the findings up to the page's end in the list's order: in
// severity order straight from its index, in found_at order one stream per
// severity rank, in update order from all of the key's occurrences. The
// page is cut, in list order, from their union (a finding matching through
// two columns counts once).
func (f Filter) scanKeyPage() (string, []any) {
	in := f.inner()
	where, args := f.scanWhere(false)
	end, args := f.pageCount(in.Offset+in.Limit, args)
	cut := ` ORDER BY ` + in.orderByID("o", "finding_id") + ` LIMIT ` + end
	// found_at order: the index holds it within each severity rank.
	perRank := f.SortBy != "severity" && f.SortBy != "updated_at" && f.Severity == ""
	cols, keys := f.keys.columns()
	if len(cols) == 0 {
		cols, keys = []string{"file"}, [][]string{{}}
	}
	if len(cols) == 1 && len(keys[0]) == 1 {
		// One key read in one stream (in found_at order, of one severity
		// rank): its entries are in the page's order, and the page is
		// read from them directly, as a one-column filter's. (In update
		// order they are sorted, as a union's would be, without the
		// union.)
		ranks := f.keys.ranks(slices.Index(keyColumns, cols[0]))
		if !perRank || len(ranks) == 1 {
			where, args := f.scanWhere(false)
			args = append(args, keys[0][0])
			where += ` AND o.` + cols[0] + `_key = $` + strconv.Itoa(len(args))
			if perRank {
				args = append(args, ranks[0])
				where += ` AND o.severity_rank = $` + strconv.Itoa(len(args))
			}
			return f.rowsPage(in, "o", "findings.occurrences o WHERE "+where, args, "")
		}
	}
	branches := make([]string, 0, len(cols))
	for i, col := range cols {
		args = append(args, db.UUIDArray(keys[i]))
		from, cond := `unnest($`+strconv.Itoa(len(args))+`::uuid[]) k(key)`, ""
		if perRank {
			args = append(args, f.keys.ranks(slices.Index(keyColumns, col)))
			from += ` CROSS JOIN unnest($` + strconv.Itoa(len(args)) + `::smallint[]) r(rank)`
			cond = " AND o.severity_rank = r.rank"
		}
		branches = append(branches, `SELECT x.* FROM `+from+` CROSS JOIN LATERAL (
			SELECT o.finding_id AS id, o.found_at, o.severity_rank, o.updated_at FROM findings.occurrences o
			WHERE `+where+cond+` AND o.`+col+`_key = k.key`+cut+`) x`)
	}
	return f.unionPage(in, strings.Join(branches, " UNION "), args, false)
}

// inner returns f as a page's inner query reads it: from the other end
// when its total was counted before the page (see reversedAt), otherwise
// as it is.
func (f Filter) inner() Filter {
	if f.precounted {
		return f.reversedAt(f.precount)
	}
	return f
}

// ranks returns the severity ranks of the findings that match through
// column i's keys, as the key counters give them across the organization
// (bySeverity, with the filter's state): a scan's matches are among them.
// Without the counts, every rank.
func (k *searchKeys) ranks(i int) []int16 {
	var out []int16
	for j, s := range Severities {
		if len(k.bySeverity[i]) != len(Severities) || k.bySeverity[i][j] != 0 {
			out = append(out, int16(SeverityRank(s)))
		}
	}
	return out
}

// rowsPage renders the query of one page chosen from rows (alias a) that
// carry a finding's id (finding_id) and list keys, read from from with
// args, ordered and cut as in says (f itself, or f read from the other
// end, see reversed); the outer query fetches the findings, with the extra
// conditions recheck when not "", in f's order.
func (f Filter) rowsPage(in Filter, a, from string, args []any, recheck string) (string, []any) {
	cut, args := f.pageCut(in.Limit, in.Offset, args)
	q := `SELECT ` + findingCols + ` FROM findings.findings f JOIN (
		SELECT ` + a + `.finding_id AS id, ` + a + `.severity_rank, ` + a + `.found_at, ` + a + `.updated_at FROM ` + from +
		` ORDER BY ` + in.orderByID(a, "finding_id") + cut + `) p ON p.id = f.id ` + recheck + `
		ORDER BY ` + f.orderBy("p")
	return q, args
}

// tagFrom renders the rows of f's tag (finding_tags, alias t), with the
// severity, state, found_at, category and repository conditions on the tag
// rows' own copies of the list keys and of those columns (migration 0035),
// and q and a file prefix on their copies of the finding's search keys
// (0045), all of which the tag indexes' entries carry. A scan is checked on
// the tag row itself, through the scan's occurrence of its finding (an
// index-only lookup). Joining the findings to check any of these read each
// tag row's finding: 200 ms for a tag of 25,000 findings with a scan,
// 21–59 ms with a repository, about 108 ms with a q that matches none of
// them.
func (f Filter) tagFrom() (string, []any) {
	rest := f
	rest.Tag, rest.Severity, rest.State, rest.FoundSince, rest.FoundUntil = "", "", "", time.Time{}, time.Time{}
	rest.Category, rest.RepoKey = "", ""
	rest.keysTested = true // the tag's index yields the rows
	var conds []string
	args := []any{f.OrgID}
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.ScanID != "" {
		add("EXISTS (SELECT 1 FROM findings.occurrences o WHERE o.scan_id = ? AND o.finding_id = t.finding_id)", f.ScanID)
	}
	conds = append(conds, "t.org_id = $1", "t.approved")
	// q and a file prefix are checked on the tag rows' copies of the
	// finding's keys (migration 0045), which the tag indexes carry (0046).
	conds, args = rest.keyConds("t", conds, args)
	add("t.tag = ?", f.Tag)
	if f.Severity != "" {
		add(rankIs("t.severity_rank", f.Severity))
	}
	f.rankBounds("t.severity_rank", add)
	if f.State != "" {
		add("t.state = ?", f.State)
	}
	if !f.FoundSince.IsZero() {
		add("t.found_at >= ?", f.FoundSince)
	}
	if !f.FoundUntil.IsZero() {
		add("t.found_at < ?", f.FoundUntil)
	}
	if f.Category != "" {
		add("t.category = ?", f.Category)
	}
	if f.RepoKey != "" {
		add("t.repo_key = ?", f.RepoKey)
	}
	return "findings.finding_tags t WHERE " + strings.Join(conds, " AND "), args
}

// tagPage renders the query of one page of the findings with f's tag: the
// page is chosen from finding_tags, whose indexes hold the tag's rows in
// each list order, and the outer query fetches those rows. When the total
// is known before the page (see tagPrecounted), a page nearer the end is
// read from there: the tag rows read (each checked for its scan,
// repository or category) grow with the page's distance from the end it
// is read from.
//
// A page of few matches (see tagFenced) is instead cut from all of them,
// read through the index that holds their severity and found_at range, and
// sorted: walking the tag's rows in the list's order would check each of
// the tag's rows until the page is full, every row of the tag when the
// matches are fewer than a page.
//
// A page that is not counted first and whose tag index checks a state,
// category or repository row by row (see tagWalkChecks) is read only when
// the tag counters hold a match (see tagCounters): a search that matches
// nothing would otherwise read every row of the tag to find none.
func (f Filter) tagPage() (string, []any) {
	from, args := f.tagFrom()
	if !f.precounted && f.tagWalkChecks() {
		if counters, cargs, ok := f.tagCounters(); ok {
			// An uncorrelated condition: the server evaluates it once,
			// before the walk, which it skips when it is false.
			from += ` AND EXISTS (SELECT 1 FROM ` + shiftParams(counters, len(args)) + ` AND n <> 0)`
			args = append(args, cargs...)
		}
	}
	if f.tagFenced() {
		// OFFSET 0 keeps the planner from reading the rows in the list's
		// order to stop at the page's end.
		from = `(SELECT t.finding_id, t.severity_rank, t.found_at, t.updated_at FROM ` + from + ` OFFSET 0) t`
	}
	return f.rowsPage(f.inner(), "t", from, args, "WHERE f.org_id = $1 AND f.verification_status = 'approved'")
}

// tagWalkChecks reports whether every tag index checks one of f's filters
// row by row: a state, a category or a repository, which no tag index
// leads with. (A severity or a found_at window that the order's index
// checks row by row is counted first instead, see tagFenceable.)
func (f Filter) tagWalkChecks() bool {
	return f.Tag != "" && (f.State != "" || f.Category != "" || f.RepoKey != "")
}

// shiftParams returns sql with each parameter reference $n renumbered
// $(n+by), so that a statement's arguments can follow another's.
func shiftParams(sql string, by int) string {
	var b strings.Builder
	for i := 0; i < len(sql); i++ {
		if sql[i] != '$' {
			b.WriteByte(sql[i])
			continue
		}
		j := i + 1
		for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
			j++
		}
		if j == i+1 {
			b.WriteByte('$')
			continue
		}
		n, _ := strconv.Atoi(sql[i+1 : j])
		b.WriteString("$" + strconv.Itoa(n+by))
		i = j - 1
	}
	return b.String()
}

// keyDrivenRatio is how many of a tag's rows, read from the tag's index
// with each one's keys checked on the entry, cost about as much as one of
// a search's key matches read from its key's index with the tag checked
// through the tag rows' primary key (see keyDriven).
const keyDrivenRatio = 8

// keyDriven reports whether f, a tag with a resolved q or file prefix
// across every scan, is read from its keys' indexes, each match checked
// for the tag, rather than from the tag's rows, each checked for the keys:
// when the keys' matches, as the key counters give them with f's severity
// and state, are fewer than a keyDrivenRatio-th of the tag's findings. A
// tag of 10,000 with a q of 200 matches thus reads about 200 key entries
// and checks each, where the tag's index would read 10,000 entries,
// every one of them when none matches.
func (f Filter) keyDriven() bool {
	k := f.keys
	if f.Tag == "" || f.ScanID != "" || k == nil || !k.indexed() {
		return false
	}
	var matches int64
	for _, m := range k.matched {
		matches += m
	}
	return matches*keyDrivenRatio < k.tagged
}

// tagFenceRows is the most matches a tag's page is cut from by sorting
// them all (see tagFenced). Sorting a thousand index entries costs about
// as much as walking a few hundred of the tag's rows, which is what a
// page of fifteen costs when one of the tag's rows in twenty matches.
const tagFenceRows = 1000

// tagFenceable reports whether f's only filters besides its tag are a
// severity and a found_at window that the tag's index yielding f's order
// (finding_tags_found, _rank or _updated) checks row by row rather than
// holding them in its leading columns: a severity or a window in update
// order, or a window in severity order across severities. Such a page
// reads the tag's rows until it holds a page of matches, so that the
// matches' share of the tag decides its cost, and every row of the tag is
// read when none matches; but the tag's rank and found_at indexes hold
// those filters as a range, which yields the matches and no other row.
// (A state, category, repository or scan is checked row by row through
// every tag index: the range would hold the rows they reject too, and the
// walk at least stops once the page is full.)
func (f Filter) tagFenceable() bool {
	rest := f
	rest.Tag, rest.Severity, rest.FoundSince, rest.FoundUntil = "", "", time.Time{}, time.Time{}
	if f.Tag == "" || rest.State != "" || rest.ScanID != "" || rest.Searching() {
		return false
	}
	window := !f.FoundSince.IsZero() || !f.FoundUntil.IsZero()
	switch f.SortBy {
	case "updated_at":
		return f.Severity != "" || window
	case "severity":
		return window && f.Severity == "" && f.rankHi == 0
	default:
		return false
	}
}

// tagFenced reports whether f's page, its total known first, is cut from
// all of its matches rather than by walking the tag's rows in order: its
// filters allow it (see tagFenceable) and the matches are fewer than
// tagFenceRows.
func (f Filter) tagFenced() bool {
	return f.precounted && f.precount < tagFenceRows && f.tagFenceable()
}

// scanPage renders the query of one page of a scan's findings. The page is
// chosen from the scan's occurrences alone, which carry their finding's list
// keys: with the scan, state and severity rank as equalities and the sort
// key next, one of the occurrences_list indexes yields the page by an
// index-only scan in either direction. The outer query fetches those rows,
// checking organization and approval on the findings themselves.
func (f Filter) scanPage() (string, []any) {
	args := []any{f.OrgID, f.ScanID}
	conds := []string{"o.scan_id = $2", "o.approved"}
	if f.Severity != "" {
		cond, rank := rankIs("o.severity_rank", f.Severity)
		args = append(args, rank)
		conds = append(conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.State != "" {
		args = append(args, f.State)
		conds = append(conds, "o.state = $"+strconv.Itoa(len(args)))
	}
	if f.RepoKey != "" { // see scanRepoOnly
		args = append(args, f.RepoKey)
		conds = append(conds, scanRepoCond("$"+strconv.Itoa(len(args))))
	}
	cut, args := f.pageCut(f.Limit, f.Offset, args) // planned once (see plannedOnce)
	q := `SELECT ` + findingCols + ` FROM findings.findings f JOIN (
		SELECT o.finding_id AS id, o.severity_rank, o.found_at, o.updated_at FROM findings.occurrences o
		WHERE ` + strings.Join(conds, " AND ") + ` ORDER BY ` + f.orderByID("o", "finding_id") + cut + `) p ON p.id = f.id
		WHERE f.org_id = $1 AND f.verification_status = 'approved'
		ORDER BY ` + f.orderBy("p")
	return q, args
}

// scanRepoOnly reports whether f's only search filter is a repository,
// within a scan: the scan's findings are all of its own repository's (see
// scanWhere), so the filter keeps all of them or none, as the scan's
// repository says, and the scan's list and counters serve it.
func (f Filter) scanRepoOnly() bool {
	rest := f
	rest.RepoKey = ""
	return f.ScanID != "" && f.RepoKey != "" && !rest.Searching()
}

// scanRepoCond renders the condition that the scan ($2) is of the
// repository p: every finding of the scan is then of it (see scanWhere).
func scanRepoCond(p string) string {
	return "EXISTS (SELECT 1 FROM findings.scans s WHERE s.id = $2 AND s.repo_key = " + p + ")"
}

// Count returns the exact number of approved findings matching f.
func (s *Store) Count(ctx context.Context, f Filter) (int64, error) {
	var total int64
	f = s.withTexts(f)
	err := s.searchSnapshot(ctx, f, func(q batchDBTX) error {
		f, err := resolve(ctx, q, f)
		if err != nil {
			return err
		}
		if n, ok := f.keyTotal(); ok {
			total = n
			return nil
		}
		sql, args := f.countQuery()
		b := &pgx.Batch{}
		b.Queue(sql, args...).QueryRow(func(r pgx.Row) error { return r.Scan(&total) })
		return sendLast(ctx, q, b)
	})
	if err != nil {
		return 0, fmt.Errorf("count findings: %w", err)
	}
	return total, nil
}

// batchDBTX runs queries and batches: a pool or a transaction.
type batchDBTX interface {
	db.DBTX
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// sendLast sends b, the last statements fn of searchSnapshot runs, and
// reads them through their callbacks; in a snapshot, the COMMIT goes with
// them.
func sendLast(ctx context.Context, q batchDBTX, b *pgx.Batch) error {
	if sn, ok := q.(*snapshot); ok {
		return sn.sendClosing(ctx, b).Close()
	}
	return q.SendBatch(ctx, b).Close()
}

// searchSnapshot runs fn on the pool or, when f has q or a file prefix, is
// a window sorted by severity (see windowBanded) or is counted before its
// page (see tagPrecounted, countPrecounted), in a read-only
// transaction whose statements share one snapshot, so that the keys
// Resolve reads (complements included), the counters it and windowBand
// sum and the page agree with each other, and are planned for their
// values (see customPlans). The transaction's BEGIN and COMMIT travel with
// its statements (see snapshot).
func (s *Store) searchSnapshot(ctx context.Context, f Filter, fn func(q batchDBTX) error) error {
	if f.Text == "" && f.FilePrefix == "" && !f.windowBanded() && !f.tagPrecounted() && !f.countPrecounted() {
		return fn(s.Pool)
	}
	return inSnapshot(ctx, s.Pool, fn, customPlans)
}

// countQuery renders the exact total of f: from the counters when they
// cover f's filters (finding_counts for the spec's filters,
// finding_search_counts for repository and category, finding_hour_counts
// for the whole hours of a found_at window, the tag counters for a tag
// with a scan, a repository or a category, see tagCounters), else a count
// of the matches.
func (f Filter) countQuery() (string, []any) {
	if f.searchCounted() {
		return `SELECT coalesce(sum(n), 0)::bigint FROM findings.finding_search_counts
		WHERE org_id = $1 AND ($2 = '' OR repo_key = $2) AND ($3 = '' OR category = $3)
			AND ($4 = '' OR severity = $4) AND ($5 = '' OR state = $5)`,
			[]any{f.OrgID, f.RepoKey, f.Category, f.Severity, f.State}
	}
	if from, args, ok := f.tagCounters(); ok {
		return `SELECT coalesce(sum(n), 0)::bigint FROM ` + from, args
	}
	if f.keyDriven() {
		union, args, _ := f.keyUnion(false)
		return `SELECT count(*) FROM (` + union + `) m`, args
	}
	if f.Tag != "" {
		from, args := f.tagFrom()
		return `SELECT count(*) FROM ` + from, args
	}
	if q, args, ok := f.hourCountQuery(false); ok {
		return q, args
	}
	if q, args, ok := f.keyCountQuery(); ok {
		return q, args
	}
	if q, args, ok := f.scanKeyCountQuery(); ok {
		return q, args
	}
	if f.Searching() && f.ScanID != "" && !f.scanRepoOnly() {
		// The keys' indexes or a walk of the scan, as the planner finds
		// cheaper for the keys' sizes.
		where, args := f.scanWhere(true)
		return `SELECT count(*) FROM findings.occurrences o WHERE ` + where, args
	}
	if f.scanRepoOnly() {
		return f.countersQuery()
	}
	if f.keys != nil && f.keys.not == [3]bool{} {
		union, args, _ := f.keyUnion(false)
		return `SELECT count(*) FROM (` + union + `) m`, args
	}
	if f.Searching() {
		where, args := f.where()
		return `SELECT count(*) FROM findings.findings f WHERE ` + where, args
	}
	return f.countersQuery()
}

// scanKeyCountQuery renders the exact total of a resolved q or file
// prefix search (not both) within a scan, with at most a severity and a
// state besides, from the scan's key counters (finding_scan_key_counts):
// the sum over the keys of the one column whose keys it holds, as every
// approved occurrence is counted once per column. A column held as its
// complement (see searchKeys.not) matches the scan's approved occurrences
// less those of the complement's keys: the scan's count (finding_counts,
// which counts the same occurrences) less the complement's sum, where a
// count of the matches tested each of the scan's occurrences against the
// complement (65 ms for a scan of 300,000). The complement is the
// organization's texts, a lookup of the scan's counters each, which costs
// about what counting scanLookupOccurrences of the scan's occurrences does:
// a scan with fewer findings than that many times the complement's keys
// counts its occurrences. ok is false then, and when the keys span two
// columns (a finding matching through both would count twice) or f has
// other filters; the matches are then counted.
func (f Filter) scanKeyCountQuery() (q string, args []any, ok bool) {
	rest := f
	rest.Text, rest.FilePrefix, rest.ScanID, rest.Severity, rest.State = "", "", "", "", ""
	if f.ScanID == "" || f.keys == nil || rest.Searching() || (f.Text != "" && f.FilePrefix != "") ||
		(f.Severity != "" && !slices.Contains(Severities, f.Severity)) {
		return "", nil, false
	}
	col := -1
	for i, keys := range f.keys.sets() {
		if len(keys) > 0 || f.keys.not[i] {
			if col >= 0 {
				return "", nil, false
			}
			col = i
		}
	}
	if col < 0 {
		return `SELECT 0::bigint`, nil, true
	}
	if f.keys.not[col] && f.keys.scanned < scanLookupOccurrences*int64(len(f.keys.sets()[col])) {
		return "", nil, false
	}
	rank := int16(0)
	if f.Severity != "" {
		rank = int16(SeverityRank(f.Severity))
	}
	// A lookup per key, kept apart from the join (OFFSET 0): the scan's
	// counter rows of a column hold every key its findings have (a
	// rescan's, thousands of paths), which a join would read whole.
	keyed := `SELECT c.n FROM unnest($4::uuid[]) k(key) CROSS JOIN LATERAL (
			SELECT c.n FROM findings.finding_scan_key_counts c
			WHERE c.scan_id = $2 AND c.field = $3 AND c.key = k.key AND ($5 = 0 OR c.severity_rank = $5) AND ($6 = '' OR c.state = $6) OFFSET 0) c`
	args = []any{f.OrgID, f.ScanID, keyColumns[col], db.UUIDArray(f.keys.sets()[col]), rank, f.State}
	if f.keys.not[col] {
		keyed = `SELECT c.n FROM findings.finding_counts c
			WHERE c.org_id = $1 AND c.scan_id = $2 AND ($7 = '' OR c.severity = $7) AND ($6 = '' OR c.state = $6)
			UNION ALL SELECT -x.n FROM (` + keyed + `) x`
		args = append(args, f.Severity)
	}
	return `SELECT coalesce(sum(c.n), 0)::bigint FROM (` + keyed + `) c
		WHERE EXISTS (SELECT 1 FROM findings.scans s WHERE s.id = $2 AND s.org_id = $1)`, args, true
}

// scanLookupOccurrences is about how many of a scan's occurrences, each
// tested against a complement in a hash, are counted in the time of one
// lookup of a key's counters: 1,500 lookups took 2.3 ms, 300,000
// occurrences 65 ms.
const scanLookupOccurrences = 7

// tagCounters returns the counter rows (FROM and WHERE, with their
// arguments) whose sum is the total of f when f is a tag's findings with
// no search filter but a scan, or a repository and a category, or
// neither (with the spec's severity and state): finding_scan_tag_counts,
// finding_tag_search_counts or finding_tag_counts. $1 is the
// organization, $2 the tag, $3 the severity rank (0 for any) and $4 the
// state (empty for any), then the scan, or the repository and category
// (each empty for any). ok is false for other filters.
func (f Filter) tagCounters() (from string, args []any, ok bool) {
	table := f.tagCounterTable()
	if table == "" {
		return "", nil, false
	}
	rank := int16(0)
	if f.Severity != "" {
		rank = int16(SeverityRank(f.Severity))
	}
	args = []any{f.OrgID, f.Tag, rank, f.State}
	from = `findings.` + table + ` WHERE org_id = $1 AND tag = $2 AND ($3 = 0 OR severity_rank = $3) AND ($4 = '' OR state = $4)`
	switch table {
	case "finding_scan_tag_counts":
		return from + ` AND scan_id = $5`, append(args, f.ScanID), true
	case "finding_tag_search_counts":
		return from + ` AND ($5 = '' OR repo_key = $5) AND ($6 = '' OR category = $6)`, append(args, f.RepoKey, f.Category), true
	default:
		return from, args, true
	}
}

// tagCounterTable returns the tag counter table that holds f's total (see
// tagCounters), or "" when none does.
func (f Filter) tagCounterTable() string {
	rest := f
	rest.Tag, rest.RepoKey, rest.Category, rest.ScanID = "", "", "", ""
	switch {
	case f.Tag == "" || rest.Searching() || (f.Severity != "" && !slices.Contains(Severities, f.Severity)):
		return ""
	case f.ScanID != "" && (f.RepoKey != "" || f.Category != ""):
		return ""
	case f.ScanID != "":
		return "finding_scan_tag_counts"
	case f.RepoKey != "" || f.Category != "":
		return "finding_tag_search_counts"
	default:
		return "finding_tag_counts"
	}
}

// tagPrecounted reports whether List reads f's total from the tag
// counters (see tagCounters) before its page, to read the page from where
// it costs least (see tagSized): always within a scan (the page's side
// depends on the sizes), otherwise for a page past the first, and for a
// first page whose walk would check its severity or window row by row (see
// tagFenceable): a search the counters show to be empty then reads no
// page, and one of few matches reads only those (see tagFenced). Other
// first pages are read from their start whatever the total.
func (f Filter) tagPrecounted() bool {
	if f.tagCounterTable() == "" || f.Limit <= 0 {
		return false
	}
	return f.ScanID != "" || f.Offset > 0 || f.tagFenceable()
}

// countPrecounted reports whether List counts f's matches before its
// page, with the count statement the page would otherwise be sent with: a
// scan's search, a tag's search that no counters hold and a file prefix
// with q (q checked on each of the prefix's index entries), past page 1;
// such a tag's first page whose walk would check its window row by row
// (see tagPrecounted), or its q or file prefix on the tag's rows (see
// keyDriven); and the first page of a file prefix with q. The count reads
// the matches either way (with q, every row of the tag or every entry of
// the prefix); knowing it first lets a page nearer the end be read from
// there (see inner), an empty search skip its page (which would read every
// one of those to find none) and one of few matches read only those (see
// tagFenced), for one more round trip.
func (f Filter) countPrecounted() bool {
	if f.Limit <= 0 || f.tagCounterTable() != "" {
		return false
	}
	prefixQ := f.ScanID == "" && f.Text != "" && f.FilePrefix != ""
	if f.Offset <= 0 {
		return f.tagFenceable() || (f.Tag != "" && (f.Text != "" || f.FilePrefix != "") && !f.keyDriven()) || prefixQ
	}
	return f.Tag != "" || prefixQ || (f.ScanID != "" && f.Searching() && !f.scanRepoOnly())
}

// tagSized returns f (see tagPrecounted) ready for its page, with its
// exact total, from counters in one round trip: the matches of each
// severity and, within a scan, the scan's findings and the organization's
// with the tag (each with f's severity and state, the totals of the scan
// alone and of the tag alone). They must come from the page's snapshot.
//
// Within a scan the page is read from the smaller side, each of its rows
// checked against the other: both spread the matches about as evenly (a
// tag's findings over the scan's, a scan's over the tag's), except that a
// scan's new findings are found together, so that walking the tag's rows
// in found_at order from a scan far from either end reads every tag row
// between (a scan of 10,000 and a tag of 25,000 in a million findings: 6.6
// ms for page 1, 18 ms for the last, against about 2 ms from the scan's
// occurrences). Sorted by severity, the page is bound to the severities it
// spans (see rankBand), so that it does not read the rows of the
// severities before it; and it is read from the nearer end of those (see
// reversedAt).
func (f Filter) tagSized(ctx context.Context, q batchDBTX) (Filter, int64, error) {
	from, args, _ := f.tagCounters()
	var cols []string
	counts := make([]int64, len(Severities))
	dest := make([]any, len(counts))
	for i, s := range Severities {
		cols = append(cols, `coalesce(sum(n) FILTER (WHERE severity_rank = `+strconv.Itoa(SeverityRank(s))+`), 0)::bigint`)
		dest[i] = &counts[i]
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT `+strings.Join(cols, ", ")+` FROM `+from, args...).QueryRow(func(row pgx.Row) error { return row.Scan(dest...) })
	var inScan, withTag int64
	if f.ScanID != "" {
		scan, tag := f, f
		scan.Tag, tag.ScanID = "", ""
		for _, side := range []struct {
			f Filter
			n *int64
		}{{scan, &inScan}, {tag, &withTag}} {
			sql, args := side.f.countQuery()
			b.Queue(sql, args...).QueryRow(func(row pgx.Row) error { return row.Scan(side.n) })
		}
	}
	if err := q.SendBatch(ctx, b).Close(); err != nil {
		return f, 0, fmt.Errorf("tag counts: %w", err)
	}
	var total int64
	for _, n := range counts {
		total += n
	}
	f.precounted, f.precount, f.scanDriven = true, total, f.ScanID != "" && inScan <= withTag
	if f.SortBy == "severity" && f.Severity == "" && f.Limit > 0 {
		if b := f.rankBand(counts); b.rankHi != 0 {
			f, f.precount = b, b.inBand(counts)
		}
	}
	return f, total, nil
}

// countersQuery renders the sum of the counters (finding_counts) of f's
// scan, or of the organization's findings without one, with f's severity
// and state: f's total when it has no search filter, or, within a scan,
// only its repository (see scanRepoOnly), which keeps the scan's count
// when the scan is of that repository and nothing otherwise.
func (f Filter) countersQuery() (string, []any) {
	scan := f.ScanID
	if scan == "" {
		scan = nilScan
	}
	q := `SELECT coalesce(sum(n), 0)::bigint FROM findings.finding_counts
		WHERE org_id = $1 AND scan_id = $2 AND ($3 = '' OR severity = $3) AND ($4 = '' OR state = $4)`
	args := []any{f.OrgID, scan, f.Severity, f.State}
	if f.ScanID != "" && f.RepoKey != "" {
		args = append(args, f.RepoKey)
		q += ` AND ` + scanRepoCond("$5")
	}
	return q, args
}

// keyCountable reports whether the key counters can count f's q or file
// prefix: its other filters are at most severity, state, a repository and
// a category, across every scan.
func (f Filter) keyCountable() bool {
	rest := f
	rest.Text, rest.FilePrefix, rest.Severity, rest.State, rest.RepoKey, rest.Category = "", "", "", "", "", ""
	return f.ScanID == "" && !rest.Searching()
}

// keyCounted reports whether f is a resolved q or file prefix search (not
// both) that the key counters count (see keyCountable):
// finding_key_counts, or finding_key_search_counts with a repository or a
// category (see keyScoped).
func (f Filter) keyCounted() bool {
	return f.keys != nil && f.keyCountable() && (f.Text == "" || f.FilePrefix == "")
}

// keyScoped reports whether Resolve reads the key counters of f within a
// repository and/or a category (finding_key_search_counts, and the
// organization's findings from finding_search_counts): f has either and
// the key counters can count it (see keyCountable: across every scan, with
// no tag and no found_at window). The counts then hold only f's repository
// and category, so that the key counters count f's matches (see
// keyCounted), keys without findings there are dropped, and the choice
// between reading the keys and walking the list weighs the findings of the
// repository or category alone.
func (f Filter) keyScoped() bool {
	return (f.RepoKey != "" || f.Category != "") && f.keyCountable()
}

// keyCountQuery renders the exact total of a resolved q or file prefix
// search whose other filters are at most severity, state, a repository and
// a category (see keyCounted), from the key counters as Resolve summed
// them: every finding has one key per column, so the sum over the matching
// keys of one column counts each match once. When findings with f's
// severity and state match through more than one column, whose sums could
// count a finding twice, the total is a count of the union of the keys'
// matches instead, read from the key indexes. ok is false when f is not
// resolved, has other filters, or needs that count with complements (see
// searchKeys.not).
func (f Filter) keyCountQuery() (q string, args []any, ok bool) {
	if !f.keyCounted() {
		return "", nil, false
	}
	if n, ok := f.keyTotal(); ok {
		return `SELECT $1::bigint`, []any{n}, true
	}
	if f.keys.not != [3]bool{} {
		return "", nil, false
	}
	union, args, _ := f.keyUnion(false)
	return `SELECT count(*) FROM (` + union + `) m`, args, true
}

// keyTotal returns the exact total of a resolved search from what Resolve
// read: none when its keys leave nothing to match (no column holds a key
// or a complement), else, when the key counters count f (see keyCounted)
// and its matches go through one column alone, that column's sum. ok is
// false otherwise.
func (f Filter) keyTotal() (n int64, ok bool) {
	k := f.keys
	if k == nil {
		return 0, false
	}
	if k.not == [3]bool{} && len(k.title)+len(k.description)+len(k.file) == 0 {
		return 0, true
	}
	if !f.keyCounted() {
		return 0, false
	}
	hit := 0
	for _, m := range k.matched {
		if m != 0 {
			n += m
			hit++
		}
	}
	return n, hit <= 1
}

// hourWindow returns the whole UTC hours inside f's found_at window, from
// lo to hi, when the hour counters count f (see hourCountQuery): a window
// holding a whole hour, and no other filter than severity and state across
// every scan. ok is false otherwise.
func (f Filter) hourWindow() (lo, hi time.Time, ok bool) {
	if f.ScanID != "" || (f.FoundSince.IsZero() && f.FoundUntil.IsZero()) || f.RepoKey != "" || f.Category != "" ||
		f.Tag != "" || f.FilePrefix != "" || f.Text != "" {
		return lo, hi, false
	}
	lo = f.FoundSince.Truncate(time.Hour)
	if lo.Before(f.FoundSince) {
		lo = lo.Add(time.Hour)
	}
	hi = f.FoundUntil.Truncate(time.Hour)
	if !f.FoundSince.IsZero() && !f.FoundUntil.IsZero() && !lo.Before(hi) {
		return lo, hi, false
	}
	return lo, hi, true
}

// hourCountQuery renders the exact total of a found_at window whose other
// filters are at most severity and state (across every scan): the sum of
// the hour counters (finding_hour_counts) of the whole UTC hours inside the
// window, plus a count of the matches in the parts of an hour at either
// end. With byRank it renders the totals per severity rank instead, as
// rows of rank and count (a rank without matches may be missing). ok is
// false when the window holds no whole hour or f has other filters.
func (f Filter) hourCountQuery(byRank bool) (q string, args []any, ok bool) {
	lo, hi, ok := f.hourWindow()
	if !ok {
		return "", nil, false
	}
	since, until := f.FoundSince, f.FoundUntil
	args = []any{f.OrgID}
	add := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	hourConds := []string{"org_id = $1"}
	state := ""
	if f.Severity != "" {
		hourConds = append(hourConds, "severity = "+add(f.Severity))
	}
	if f.State != "" {
		state = add(f.State)
		hourConds = append(hourConds, "state = "+state)
	}
	// The conditions on the findings of the parts of an hour at either end,
	// rendered (and their arguments added) only when the window has such a
	// part: a statement must use every parameter it is sent, or the server
	// cannot type the unused one and refuses it (a window from or to a
	// whole hour has no part).
	rows := ""
	rowsCond := func() string {
		if rows != "" {
			return rows
		}
		conds := []string{"f.org_id = $1", "f.verification_status = 'approved'"}
		if f.Severity != "" {
			// The rank, which findings_list_found carries: the partial
			// hours are counted from the index alone.
			cond, rank := rankIs("f.severity_rank", f.Severity)
			conds = append(conds, strings.ReplaceAll(cond, "?", add(rank)))
		}
		if state != "" {
			conds = append(conds, "f.state = "+state)
		}
		rows = strings.Join(conds, " AND ")
		return rows
	}
	// Each part counts, in total or per rank.
	rowsPart, hourPart := `SELECT count(*) AS n FROM findings.findings f WHERE `, `SELECT coalesce(sum(n), 0) AS n FROM findings.finding_hour_counts WHERE `
	rowsGroup, hourGroup := "", ""
	if byRank {
		ranks := make([]string, len(Severities))
		for i, s := range Severities {
			ranks[i] = "WHEN '" + strings.ReplaceAll(s, "'", "''") + "' THEN " + strconv.Itoa(SeverityRank(s))
		}
		rowsPart = `SELECT f.severity_rank::int AS r, count(*) AS n FROM findings.findings f WHERE `
		hourPart = `SELECT CASE severity ` + strings.Join(ranks, " ") + ` ELSE 0 END AS r, sum(n) AS n FROM findings.finding_hour_counts WHERE `
		rowsGroup, hourGroup = ` GROUP BY 1`, ` GROUP BY severity`
	}
	parts := []string{}
	if !since.IsZero() {
		l := add(lo)
		hourConds = append(hourConds, "hour >= "+l)
		if lo.After(since) {
			parts = append(parts, rowsPart+rowsCond()+` AND f.found_at >= `+add(since)+` AND f.found_at < `+l+rowsGroup)
		}
	}
	if !until.IsZero() {
		h := add(hi)
		hourConds = append(hourConds, "hour < "+h)
		if hi.Before(until) {
			parts = append(parts, rowsPart+rowsCond()+` AND f.found_at >= `+h+` AND f.found_at < `+add(until)+rowsGroup)
		}
	}
	parts = append(parts, hourPart+strings.Join(hourConds, " AND ")+hourGroup)
	if byRank {
		return `SELECT x.r, sum(x.n)::bigint FROM (` + strings.Join(parts, " UNION ALL ") + `) x GROUP BY x.r`, args, true
	}
	for i, p := range parts {
		parts[i] = "(" + p + ")"
	}
	return `SELECT (` + strings.Join(parts, " + ") + `)::bigint`, args, true
}

// Each streams every approved finding matching f (Limit and Offset
// ignored) to fn, row by row, without holding them in memory.
func (s *Store) Each(ctx context.Context, f Filter, fn func(Finding, Extra) error) error {
	sql, args := f.eachQuery()
	rows, err := s.Pool.Query(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("export findings: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var x Extra
		fd, err := scanFinding(rows, &x.Fingerprint, &x.StartLine, &x.EndLine)
		if err != nil {
			return fmt.Errorf("export findings: %w", err)
		}
		if err := fn(fd, x); err != nil {
			return err
		}
	}
	return rows.Err()
}

// eachQuery renders Each's statement. With a scan, the rows are the
// scan's occurrences in list order (each occurrence index holds one order
// of a scan's approved occurrences, with copies of their findings' list
// keys, migrations 0002 and 0020), each finding looked up by its id (OFFSET
// 0 keeps it a lookup, which a plan made while the tables were small would
// otherwise turn into a scan of every finding): an export reads the scan's
// findings alone. Checking every finding of the organization for an
// occurrence in the scan instead read them all: 1.8 s for a scan of 10,000
// among 1,000,000 findings.
func (f Filter) eachQuery() (string, []any) {
	cols := findingCols + `, f.fingerprint, f.start_line, f.end_line`
	if f.ScanID != "" {
		where, args := f.scanWhere(true)
		return `SELECT ` + cols + ` FROM findings.occurrences o CROSS JOIN LATERAL (
				SELECT * FROM findings.findings f WHERE f.id = o.finding_id AND f.org_id = $1 AND f.verification_status = 'approved' OFFSET 0) f
			WHERE ` + where + ` ORDER BY ` + f.orderByID("o", "finding_id"), args
	}
	where, args := f.where()
	return `SELECT ` + cols + ` FROM findings.findings f WHERE ` + where + ` ORDER BY ` + f.orderBy("f"), args
}

// Extra holds the columns an export adds.
type Extra struct {
	Fingerprint        string
	StartLine, EndLine int32
}

// Get returns an approved finding of the organization with its thread.
func (s *Store) Get(ctx context.Context, orgID, id string) (Detail, error) {
	var d Detail
	var err error
	row := s.Pool.QueryRow(ctx, `SELECT `+findingCols+`, f.mermaid_trace, f.occurrence_count, s.repo_url, s.scan_type, f.risk_expires_at
		FROM findings.findings f JOIN findings.scans s ON s.id = f.scan_id
		WHERE f.id = $1 AND f.org_id = $2 AND f.verification_status = 'approved'`, id, orgID)
	d.Finding, err = scanFinding(row, &d.MermaidTrace, &d.OccurrenceCount, &d.RepoURL, &d.ScanType, &d.RiskExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, ErrNotFound
	}
	if err != nil {
		return d, fmt.Errorf("get finding: %w", err)
	}
	rows, err := s.Pool.Query(ctx, `SELECT id::text, reaction, comment, user_id::text, username, source, created_at
		FROM findings.triage_entries WHERE finding_id = $1 ORDER BY created_at, id`, id)
	if err != nil {
		return d, fmt.Errorf("triage thread: %w", err)
	}
	d.Thread, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (TriageEntry, error) {
		var e TriageEntry
		err := r.Scan(&e.ID, &e.Reaction, &e.Comment, &e.UserID, &e.Username, &e.Source, &e.CreatedAt)
		return e, err
	})
	if err != nil {
		return d, fmt.Errorf("triage thread: %w", err)
	}
	if d.OccurrenceCount < 1 {
		d.OccurrenceCount = 1
	}
	return d, nil
}
