// Package finding defines the finding record shared by every analyzer of the
// scan engine, the rule metadata every finding carries, the source snippet
// it shows, and the helpers that make findings comparable across scans:
// fingerprints and redaction. Severities and categories, and their order, are
// pkg/vocab's.
package finding

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Finding is one candidate vulnerability produced by an analyzer.
type Finding struct {
	RuleID         string
	Title          string
	Category       string // a vocab.Category
	Severity       string // a vocab.Severity
	Description    string
	RepoURL        string
	AffectedFile   string // repository-relative, slash separated; the URL for live targets
	AffectedCode   string
	ProofOfConcept *string
	Tags           []string
	MermaidTrace   *string
	StartLine      int
	EndLine        int
	Fingerprint    string
	Confirmed      bool // passed automated verification
	Language       string

	// Path is the dataflow path of a taint finding, source to sink, one
	// location per step (empty for findings without a flow). Pull request
	// scans use it to tell whether a finding touches changed lines.
	Path []Location `json:"-"`

	// Evidence is what the analyzer established about the candidate, for
	// the verification stage to weigh.
	Evidence Evidence `json:"-"`
	// Confidence ("high", "medium", "low") and Reasons are set by the
	// verification stage.
	Confidence string
	Reasons    []string

	// FingerprintKey is the location-independent part of the fingerprint
	// (normalized sink code, enclosing function, redacted secret hash…).
	// It is set by analyzers and consumed by Fingerprint; it is not stored.
	FingerprintKey string `json:"-"`
	// Reproduce re-runs the check of a live-target finding; nil for others.
	Reproduce func() bool `json:"-"`
}

// Location is one step of a finding's dataflow path: a repository-relative
// file and a 1-based line.
type Location struct {
	File string
	Line int
}

// Evidence describes how an analyzer reached a candidate.
type Evidence struct {
	// Flow: a dataflow path from a source to the sink was found (taint
	// rules). Steps counts its steps and Source names the source.
	Flow   bool
	Steps  int
	Source string
	// EntryPoint names the framework entry point whose parameter the data
	// came from, when it did ("Spring MVC", "Express").
	EntryPoint string
	// TypedSink: the sink was matched on the receiver's declared or inferred
	// type (or a qualified function), not on a method name alone.
	TypedSink bool
	// Constant: a constant-argument rule matched a value known at analysis
	// time (a weak algorithm name, possibly read from configuration).
	Constant bool
	// Property: a property rule found the object's setting missing or off.
	Property bool
}

// NormalizeCode collapses all whitespace runs so that re-indentation does not
// change a fingerprint.
func NormalizeCode(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// ComputeFingerprint hashes the rule, repository, file and location-independent
// key. Line numbers are deliberately left out so that moving unrelated lines
// keeps the fingerprint.
func ComputeFingerprint(ruleID, repoURL, file, key string) string {
	h := sha256.New()
	for _, p := range []string{ruleID, repoURL, file, key} {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:40]
}

// Redact keeps a short prefix of a secret and masks the rest.
func Redact(secret string) string {
	r := []rune(secret)
	keep := 4
	if len(r) <= 8 {
		keep = min(len(r)/4, 2)
	}
	return string(r[:keep]) + strings.Repeat("*", 8)
}
