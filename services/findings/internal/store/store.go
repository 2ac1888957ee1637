// Package store is the findings service's data layer over its own schema
// "findings": registered scans, findings with their occurrences, the triage
// thread, the append-only audit trail, integrations and the outbox of
// integration events. Exact list totals come from finding_counts, to which
// statement triggers append a delta row per counter key a change touches,
// in the changing transaction; FoldCounts sums each key's deltas into one
// row in the background. Reports write set-based and lock findings in
// fingerprint order, so that concurrent reports never deadlock.
package store

import (
	"embed"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// Errors the store reports.
var (
	ErrNotFound     = errors.New("not found")
	ErrScanNotFound = errors.New("scan not found")
)

// InvalidError is a client mistake found while applying a change.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

// Enumerations: the shared words are pkg/vocab's.
var (
	Severities = vocab.Severities.Strings()
	States     = vocab.FindingStates.Strings()
	Categories = vocab.Categories.Strings()
	Sources    = []string{"github", "slack", "web", "api", "agent"}
)

// Verification statuses.
const (
	Pending  = string(vocab.Pending)
	Approved = string(vocab.Approved)
	Rejected = string(vocab.Rejected)
)

// SeverityRank is the stored severity_rank column: vocab's one order (info 1
// … critical 5).
func SeverityRank(s string) int { return vocab.Severity(s).Rank() }

// AgentUserID and AgentUsername author the entries the system writes itself.
const (
	AgentUserID   = "00000000-0000-0000-0000-000000000000"
	AgentUsername = "vulnscan"
)

const nilScan = "00000000-0000-0000-0000-000000000000"

// Store runs the findings queries.
type Store struct {
	Pool *pgxpool.Pool
	// Intake bounds how many Report transactions run at once; nil (the
	// zero value) leaves them unbounded. See IntakeSlots.
	Intake *IntakeSlots
	// TextCopies has q searches matched against copies of the
	// organizations' texts kept in the process (see textCache); the zero
	// value matches every q through the texts' trigram indexes.
	TextCopies bool

	textsOnce sync.Once
	texts     *textCache
}

// textCache returns the store's copies of organizations' texts.
func (s *Store) textCache() *textCache {
	s.textsOnce.Do(func() { s.texts = newTextCache(s.Pool) })
	return s.texts
}

// withTexts gives a q search the store's copies of organizations' texts,
// when it keeps them.
func (s *Store) withTexts(f Filter) Filter {
	if s.TextCopies && f.Text != "" {
		f.texts = s.textCache()
	}
	return f
}

// Scan is a registered scan.
type Scan struct {
	ID, OrgID, RepoURL, ScanType, CommitSHA string
	// Key identifies the repository for fingerprints; when empty it is
	// vocab.RepoKey(RepoURL).
	Key         string
	PullRequest int32
	CreatedAt   time.Time
}

// Finding is a finding as the lists show it.
type Finding struct {
	ID, Title, Category, Severity, State string
	Description, AffectedFile            string
	AffectedCode                         string
	ProofOfConcept                       *string
	Tags                                 []string
	ScanID                               string
	FoundAt, UpdatedAt                   time.Time
	DuplicateOf                          *string
	// Line is the first line of the affected code; 0 when there is none.
	Line        int32
	Fingerprint string
}

// Detail is the single read of a finding.
type Detail struct {
	Finding
	MermaidTrace    *string
	OccurrenceCount int32
	RepoURL         *string
	ScanType        *string
	Thread          []TriageEntry
	// RiskExpiresAt ends an accepted_risk finding's acceptance.
	RiskExpiresAt *time.Time
}

// TriageEntry is one comment or reaction.
type TriageEntry struct {
	ID        string
	Reaction  *string
	Comment   *string
	UserID    string
	Username  string
	Source    string
	CreatedAt time.Time
}

// Actor is who makes a change.
type Actor struct {
	UserID, Username, KeyID, Source string
	// Origin is the integration a change came in through (an inbound
	// event): its outbox gets no event for the change, so nothing echoes
	// back to where it came from.
	Origin string
}

const findingCols = `f.id::text, f.title, f.category, f.severity, f.state, f.description, f.affected_file, f.affected_code,
	f.proof_of_concept, f.tags, f.scan_id::text, f.found_at, f.updated_at, f.duplicate_of::text, f.start_line, f.fingerprint`

type scanner interface{ Scan(dest ...any) error }

func scanFinding(r scanner, extra ...any) (Finding, error) {
	var f Finding
	dest := append([]any{&f.ID, &f.Title, &f.Category, &f.Severity, &f.State, &f.Description, &f.AffectedFile, &f.AffectedCode,
		&f.ProofOfConcept, &f.Tags, &f.ScanID, &f.FoundAt, &f.UpdatedAt, &f.DuplicateOf, &f.Line, &f.Fingerprint}, extra...)
	err := r.Scan(dest...)
	if f.Tags == nil {
		f.Tags = []string{}
	}
	return f, err
}

// Schema is the Postgres schema the findings service owns; Migrate applies its migrations.
const Schema = "findings"

var Migrate = db.Migrations(Schema, migrations)

//go:embed migrations/*.sql
var migrations embed.FS
