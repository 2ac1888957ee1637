package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A q search first finds the organization's distinct titles, descriptions
// and paths that contain it (search_texts, search_files), through their
// trigram indexes, rechecking each candidate: for a word in most of 12,000
// texts and paths, 3–5 ms of every page of the search. The texts and paths
// are never removed (migration 0041) and search_text_counts holds their
// number per organization and column, so a copy of an organization's
// lowered texts is exact for as long as those numbers have not moved.
//
// textCache keeps such copies, per organization, in the process. A search
// whose q is ASCII matches it against the copy in memory (one string
// search per column, 0.16–0.5 ms for 12,000 texts and paths, its hits
// remembered for the next searches of the same q) and sends the matching
// keys with its key lookup; the lookup's statement checks, in its own snapshot, that the
// organization's text counts are still the copy's, and otherwise matches q
// through the trigram indexes as before (one statement either way, so a
// stale copy costs three counter lookups, not a wrong answer). Beside a
// file prefix, whose keys are the prefix's paths, the copy gives q's own
// keys, which the search's pages and total then test (Filter.qKeys). A search
// that finds the copy stale or missing has it refreshed in the background,
// at most once per textRefreshMin per organization, and no more often than
// every textRefreshFactor times the last refresh took, so that an
// organization whose texts keep changing while a scan reports does not
// have them read over and over. Organizations with more than
// textCacheMaxTexts texts and paths are not copied: matching in memory
// grows with the texts where the trigram index does not, and past that
// size a selective q is found faster through the index. The copies share a
// budget of textCacheBytes, the least recently used dropped first.
//
// The lowered texts are read from the database (lower() in its collation,
// migration 0023). q is lowered in the process only when it is ASCII and
// the server lowers ASCII letters as ASCII (checked at each refresh); any
// other q is matched by the server.
type textCache struct {
	pool *pgxpool.Pool
	// maxTexts and maxBytes are textCacheMaxTexts and textCacheBytes.
	maxTexts int64
	maxBytes int

	mu    sync.Mutex
	orgs  map[string]*orgTexts
	next  map[string]time.Time // when an organization's copy may next be refreshed
	bytes int
	busy  bool // a refresh is running (one at a time)
}

const (
	textCacheMaxTexts = 50_000
	textCacheBytes    = 64 << 20
	textRefreshMin    = time.Second
	textRefreshFactor = 50
	// textNextMax is how many organizations' next refresh times are kept
	// before those past are forgotten.
	textNextMax = 10_000
)

// orgTexts is one organization's texts and paths, per key column (title,
// description, file), as of a snapshot holding n of each: a column's
// lowered texts joined by NUL bytes (which no text holds) in buf, text j
// ending at ends[j], so that a q is looked for through the whole column in
// one string search rather than text by text (a search per text cost more
// than the trigram index for a q in few of 12,000 texts).
type orgTexts struct {
	n     [3]int64
	keys  [3][]pgtype.UUID
	buf   [3]string
	ends  [3][]int
	bytes int
	used  time.Time // guarded by textCache.mu

	// memo holds the hits of the latest lowered q's (see hits): the pages
	// of a search, its total and its export look the same q up again.
	// memoHits is the number of hits it holds.
	memoMu   sync.Mutex
	memo     map[string][3][]int
	memoHits int
}

// textMemoMax is how many q's an organization's copy remembers the hits
// of, and textMemoHits how many hits per text and path of the copy (so
// that the memo stays within a small multiple of the copy's own keys);
// past either the memo starts again.
const (
	textMemoMax  = 128
	textMemoHits = 2
)

func newTextCache(pool *pgxpool.Pool) *textCache {
	return &textCache{pool: pool, maxTexts: textCacheMaxTexts, maxBytes: textCacheBytes, orgs: map[string]*orgTexts{}, next: map[string]time.Time{}}
}

// lookup returns the organization's copy, or nil.
func (c *textCache) lookup(org string) *orgTexts {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.orgs[org]
	if t != nil {
		t.used = time.Now()
	}
	return t
}

// stale notes that a search found the organization's copy stale or
// missing, and refreshes it in the background when it may.
func (c *textCache) stale(org string) {
	if c == nil || c.pool == nil {
		return
	}
	c.mu.Lock()
	now := time.Now()
	if c.busy || now.Before(c.next[org]) {
		c.mu.Unlock()
		return
	}
	c.busy = true
	c.next[org] = now.Add(textRefreshMin)
	c.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.refresh(ctx, org) // a failed refresh leaves the search on the trigram indexes
		c.mu.Lock()
		c.busy = false
		c.mu.Unlock()
	}()
}

// refresh reads the organization's texts and paths and keeps them, unless
// they are more than textCacheMaxTexts or the server does not lower ASCII
// as ASCII; it drops any older copy.
func (c *textCache) refresh(ctx context.Context, org string) error {
	start := time.Now()
	t, err := readOrgTexts(ctx, c.pool, org, c.maxTexts)
	took := time.Since(start)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if len(c.next) > textNextMax {
		for o, at := range c.next {
			if at.Before(now) {
				delete(c.next, o)
			}
		}
	}
	c.next[org] = now.Add(max(textRefreshMin, textRefreshFactor*took))
	if old := c.orgs[org]; old != nil {
		c.bytes -= old.bytes
		delete(c.orgs, org)
	}
	if err != nil || t == nil {
		return err
	}
	for c.bytes+t.bytes > c.maxBytes && len(c.orgs) > 0 {
		var lru string
		var at time.Time
		for o, ot := range c.orgs {
			if lru == "" || ot.used.Before(at) {
				lru, at = o, ot.used
			}
		}
		c.bytes -= c.orgs[lru].bytes
		delete(c.orgs, lru)
	}
	if t.bytes > c.maxBytes {
		return nil
	}
	t.used = time.Now()
	c.orgs[org] = t
	c.bytes += t.bytes
	return nil
}

// textColumns are the columns of search_text_counts in keyColumns' order.
var textColumns = [3]string{"title", "description", "file"}

// readOrgTexts reads an organization's texts and paths in one snapshot;
// nil when they are more than maxTexts or the server lowers ASCII
// otherwise.
func readOrgTexts(ctx context.Context, pool *pgxpool.Pool, org string, maxTexts int64) (*orgTexts, error) {
	var total int64
	var lowersASCII bool
	err := pool.QueryRow(ctx, `SELECT (SELECT coalesce(sum(n), 0) FROM findings.search_text_counts WHERE org_id = $1)::bigint,
		lower('ABCDEFGHIJKLMNOPQRSTUVWXYZ') = 'abcdefghijklmnopqrstuvwxyz'`, org).Scan(&total, &lowersASCII)
	if err != nil {
		return nil, fmt.Errorf("count search texts: %w", err)
	}
	if total > maxTexts || !lowersASCII {
		return nil, nil
	}
	rows, err := pool.Query(ctx, `SELECT 0, t.key, t.folded FROM findings.search_texts t WHERE t.org_id = $1 AND t.field = 'title'
		UNION ALL SELECT 1, t.key, t.folded FROM findings.search_texts t WHERE t.org_id = $1 AND t.field = 'description'
		UNION ALL SELECT 2, t.key, t.folded FROM findings.search_files t WHERE t.org_id = $1`, org)
	if err != nil {
		return nil, fmt.Errorf("read search texts: %w", err)
	}
	t := &orgTexts{}
	var bufs [3]strings.Builder
	var i int
	var key pgtype.UUID
	var folded string
	_, err = pgx.ForEachRow(rows, []any{&i, &key, &folded}, func() error {
		t.keys[i] = append(t.keys[i], key)
		bufs[i].WriteString(folded)
		t.ends[i] = append(t.ends[i], bufs[i].Len())
		bufs[i].WriteByte(0)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read search texts: %w", err)
	}
	for i := range t.n {
		t.n[i] = int64(len(t.keys[i]))
		// Kept at their length, not the builders' grown capacity.
		t.buf[i] = strings.Clone(bufs[i].String())
		t.keys[i] = slices.Clip(t.keys[i])
		t.ends[i] = slices.Clip(t.ends[i])
		t.bytes += len(t.buf[i]) + len(t.keys[i])*16 + len(t.ends[i])*8
	}
	if t.n[0]+t.n[1]+t.n[2] > maxTexts {
		return nil, nil
	}
	return t, nil
}

// asciiLower returns q lowered when it is ASCII (and holds no NUL, which
// no text does).
func asciiLower(q string) (string, bool) {
	b := []byte(q)
	for i, c := range b {
		if c >= 0x80 || c == 0 {
			return "", false
		}
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b), true
}

// match returns, per column, the indexes, ascending, of the texts that
// contain the lowered q, remembered for the next search of q (the
// returned slices are shared: not to be changed).
func (t *orgTexts) match(lq string) [3][]int {
	t.memoMu.Lock()
	h, ok := t.memo[lq]
	t.memoMu.Unlock()
	if ok {
		return h
	}
	for i := range h {
		h[i] = t.hits(i, lq)
	}
	n := len(h[0]) + len(h[1]) + len(h[2])
	t.memoMu.Lock()
	if t.memo == nil || len(t.memo) >= textMemoMax || int64(t.memoHits+n) > textMemoHits*(t.n[0]+t.n[1]+t.n[2]) {
		t.memo, t.memoHits = map[string][3][]int{}, 0
	}
	t.memo[lq] = h
	t.memoHits += n
	t.memoMu.Unlock()
	return h
}

// hits returns the indexes, ascending, of column i's texts that contain
// the lowered q.
func (t *orgTexts) hits(i int, lq string) []int {
	var hit []int
	buf, ends := t.buf[i], t.ends[i]
	for pos := 0; pos < len(buf); {
		k := strings.Index(buf[pos:], lq)
		if k < 0 {
			break
		}
		// The text holding the match: q holds no NUL, so a match lies
		// within one text.
		j, _ := slices.BinarySearch(ends, pos+k+1)
		hit = append(hit, j)
		pos = ends[j] + 1
	}
	return hit
}

// keysOf returns the keys of column i's texts at the indexes idx, or,
// with not, of the others.
func (t *orgTexts) keysOf(i int, idx []int, not bool) []pgtype.UUID {
	if !not {
		keys := make([]pgtype.UUID, len(idx))
		for j, x := range idx {
			keys[j] = t.keys[i][x]
		}
		return keys
	}
	keys := make([]pgtype.UUID, 0, len(t.keys[i])-len(idx))
	next := 0
	for j, k := range t.keys[i] {
		if next < len(idx) && idx[next] == j {
			next++
			continue
		}
		keys = append(keys, k)
	}
	return keys
}

// cachedMatchSQL renders matchSQL's matches (the common table expression
// m) and its columns' texts and paths that do not match q, from the copy t:
// sent as arguments, and used when the statement finds the copy current
// (fresh: the organization's text counts are the copy's); otherwise read
// through match, textMiss and fileMiss, as without a copy. A column held
// as its complement (decided as the statement decides it, from the same
// numbers) sends the keys that do not match rather than those that do.
func cachedMatchSQL(t *orgTexts, q string, complements bool, match, textMiss, fileMiss string, args []any) (string, string, string, []any) {
	lq, _ := asciiLower(q)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var rows, miss [3]string
	matches := t.match(lq)
	for i, col := range textColumns {
		idx := matches[i]
		hits := int64(len(idx))
		keys, missing := t.keysOf(i, idx, false), []pgtype.UUID{}
		if complements && t.heldAsComplement(i, hits) {
			keys, missing = []pgtype.UUID{}, t.keysOf(i, idx, true)
		}
		rows[i] = `('` + col + `', ` + arg(hits) + `::bigint, ` + arg(keys) + `::uuid[])`
		miss[i] = arg(missing) + `::uuid[]`
	}
	freshCTE, args := freshSQL(t, args)
	m := freshCTE + `,
		m AS MATERIALIZED (SELECT u.field, u.hits, u.keys FROM (VALUES ` + strings.Join(rows[:], ", ") + `) u(field, hits, keys) WHERE u.hits > 0 AND ` + copyFresh + `
			UNION ALL SELECT x.field, count(*) AS hits, array_agg(x.key) AS keys FROM (` + match + `) x WHERE NOT ` + copyFresh + ` GROUP BY x.field)`
	textMiss = `SELECT u.key FROM unnest(CASE v.field WHEN 'title' THEN ` + miss[0] + ` ELSE ` + miss[1] + ` END) u(key) WHERE ` + copyFresh + `
		UNION ALL ` + textMiss + ` AND NOT ` + copyFresh
	fileMiss = `SELECT u.key FROM unnest(` + miss[2] + `) u(key) WHERE ` + copyFresh + `
		UNION ALL ` + fileMiss + ` AND NOT ` + copyFresh
	return m, textMiss, fileMiss, args
}

// copyFresh is the condition that the statement found the copy current
// (see freshSQL).
const copyFresh = `(SELECT fresh.ok FROM fresh)`

// freshSQL renders the common table expression fresh: whether the
// organization's text counts are the copy t's in the statement's snapshot
// (texts are never removed, so equal counts mean the same texts).
func freshSQL(t *orgTexts, args []any) (string, []any) {
	var counts [3]string
	for i, col := range textColumns {
		args = append(args, t.n[i])
		counts[i] = `(SELECT coalesce(sum(c.n), 0) FROM findings.search_text_counts c WHERE c.org_id = $1 AND c.field = '` + col +
			`') = $` + strconv.Itoa(len(args)) + `::bigint`
	}
	return `fresh AS MATERIALIZED (SELECT ` + strings.Join(counts[:], " AND ") + ` AS ok)`, args
}

// cachedQMatchSQL renders, for q beside a file prefix, the common table
// expression fresh (see freshSQL) and q's matching texts and paths as
// rows (field, key): from the copy t when the statement finds it current,
// otherwise through match, as without a copy. Only their first limit rows
// are sent: the statement reads no more (see prefixQSeverities).
func cachedQMatchSQL(t *orgTexts, q, match string, limit int, args []any) (freshCTE, qMatch string, _ []any) {
	lq, _ := asciiLower(q)
	hits := t.match(lq)
	var rows [3]string
	for i, col := range textColumns {
		idx := hits[i][:min(len(hits[i]), limit)]
		limit -= len(idx)
		args = append(args, t.keysOf(i, idx, false))
		rows[i] = `('` + col + `', $` + strconv.Itoa(len(args)) + `::uuid[])`
	}
	freshCTE, args = freshSQL(t, args)
	qMatch = `SELECT v.field, u.key FROM (VALUES ` + strings.Join(rows[:], ", ") + `) v(field, keys) CROSS JOIN LATERAL unnest(v.keys) u(key)
			WHERE ` + copyFresh + `
		UNION ALL SELECT x.field, x.key FROM (` + match + `) x WHERE NOT ` + copyFresh
	return freshCTE, qMatch, args
}

// heldAsComplement reports whether column i, where hits of the copy's
// texts match, is held as the keys of the texts that do not: at least
// complementMin match, and most of them (as the key lookup decides from
// the same numbers).
func (t *orgTexts) heldAsComplement(i int, hits int64) bool {
	return hits >= complementMin && t.n[i] < 2*hits
}

// qKeys returns the keys of the copy's texts and paths that contain the
// ASCII q, per column; a column where at least complementMin texts, and
// most of them, contain it is held as the keys of the others (see
// searchKeys.not), as Resolve holds a q's own keys.
func (t *orgTexts) qKeys(q string) *searchKeys {
	lq, _ := asciiLower(q)
	hits := t.match(lq)
	k := &searchKeys{}
	sets := [3]*[]string{&k.title, &k.description, &k.file}
	for i, idx := range hits {
		n := int64(len(idx))
		k.not[i] = t.heldAsComplement(i, n)
		keys := t.keysOf(i, idx, k.not[i])
		*sets[i] = make([]string, len(keys))
		for j, key := range keys {
			(*sets[i])[j] = uuid.UUID(key.Bytes).String()
		}
		k.hits += n
	}
	return k
}
