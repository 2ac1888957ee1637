// Package vocab is the one definition of the words the services, the engine
// and the public API share: severities and their order, finding categories
// and states, the statuses of scans, estimations, verification and API keys,
// the repository-URL key and the page limits. Each word is a typed string
// with a Set that lists its values (Values) and parses untrusted input
// (Parse), answering the spec's 400 that names the failing field.
package vocab

import (
	"net/url"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/apierr"
)

// Set is the closed list of values of one word, in their documented order.
type Set[T ~string] struct{ values []T }

func newSet[T ~string](values ...T) Set[T] { return Set[T]{values: values} }

// Values returns the values in their documented order (a copy).
func (s Set[T]) Values() []T { return append([]T(nil), s.values...) }

// Strings returns the values as plain strings, in order.
func (s Set[T]) Strings() []string {
	out := make([]string, len(s.values))
	for i, v := range s.values {
		out[i] = string(v)
	}
	return out
}

// Contains reports whether v is one of the values.
func (s Set[T]) Contains(v string) bool { return s.index(v) >= 0 }

func (s Set[T]) index(v string) int {
	for i, x := range s.values {
		if string(x) == v {
			return i
		}
	}
	return -1
}

// Parse returns v as a value of the set, or the spec's 400 naming field and
// the accepted values.
func (s Set[T]) Parse(field, v string) (T, error) {
	if !s.Contains(v) {
		return "", apierr.Invalid("%s must be one of: %s", field, strings.Join(s.Strings(), ", "))
	}
	return T(v), nil
}

// Severity is how bad a finding is.
type Severity string

// Severities, from the most to the least severe.
const (
	Critical Severity = "critical"
	High     Severity = "high"
	Medium   Severity = "medium"
	Low      Severity = "low"
	Info     Severity = "info"
)

// Severities lists the severities from the most to the least severe.
var Severities = newSet(Critical, High, Medium, Low, Info)

// Rank orders severities: info 1, low 2, medium 3, high 4, critical 5; 0 for
// an unknown value. A higher rank is more severe; stores sort on it.
func (s Severity) Rank() int {
	if i := Severities.index(string(s)); i >= 0 {
		return len(Severities.values) - i
	}
	return 0
}

// Valid reports whether s is a known severity.
func (s Severity) Valid() bool { return s.Rank() > 0 }

// Lower returns the severity one step below s (info stays info, an unknown
// value becomes info).
func (s Severity) Lower() Severity {
	if r := s.Rank(); r > 1 {
		return Severities.values[len(Severities.values)-r+1]
	}
	return Info
}

// Category is the kind of weakness a finding is.
type Category string

// Categories are the finding categories the findings service accepts and the
// engine emits.
var Categories = newSet[Category](
	"injection", "xss", "auth", "access_control", "secrets", "ssrf",
	"path_traversal", "deserialization", "crypto", "misconfiguration",
	"dependency", "other",
)

// FindingState is a finding's triage state.
type FindingState string

// Finding states.
const (
	Open          FindingState = "open"
	TruePositive  FindingState = "true_positive"
	FalsePositive FindingState = "false_positive"
	AcceptedRisk  FindingState = "accepted_risk"
	Resolved      FindingState = "resolved"
)

// FindingStates lists the triage states.
var FindingStates = newSet(Open, TruePositive, FalsePositive, AcceptedRisk, Resolved)

// Verification is whether a finding has passed verification and is visible.
type Verification string

// Verification statuses.
const (
	Pending  Verification = "pending"
	Approved Verification = "approved"
	Rejected Verification = "rejected"
)

// Verifications lists the verification statuses.
var Verifications = newSet(Pending, Approved, Rejected)

// ScanStatus is where a scan is in its lifecycle.
type ScanStatus string

// Scan statuses. Completed, Partial, Failed and Cancelled are terminal.
const (
	ScanPending   ScanStatus = "pending"
	ScanRunning   ScanStatus = "running"
	ScanCompleted ScanStatus = "completed"
	ScanPartial   ScanStatus = "partial"
	ScanFailed    ScanStatus = "failed"
	ScanCancelled ScanStatus = "cancelled"
)

// ScanStatuses lists the scan statuses.
var ScanStatuses = newSet(ScanPending, ScanRunning, ScanCompleted, ScanPartial, ScanFailed, ScanCancelled)

// Terminal reports whether a scan in status s will not change any more.
func (s ScanStatus) Terminal() bool {
	return s == ScanCompleted || s == ScanPartial || s == ScanFailed || s == ScanCancelled
}

// EstimationStatus is where a cost estimation is in its lifecycle.
type EstimationStatus string

// Estimation statuses. Completed, Partial and Failed are terminal.
const (
	EstimationPending   EstimationStatus = "pending"
	EstimationRunning   EstimationStatus = "running"
	EstimationCompleted EstimationStatus = "completed"
	EstimationPartial   EstimationStatus = "partial"
	EstimationFailed    EstimationStatus = "failed"
)

// EstimationStatuses lists the estimation statuses.
var EstimationStatuses = newSet(EstimationPending, EstimationRunning, EstimationCompleted, EstimationPartial, EstimationFailed)

// Terminal reports whether an estimation in status s will not change any more.
func (s EstimationStatus) Terminal() bool {
	return s == EstimationCompleted || s == EstimationPartial || s == EstimationFailed
}

// KeyStatus is an API key's state as the key check sees it.
type KeyStatus string

// API key statuses.
const (
	KeyActive  KeyStatus = "active"
	KeyRevoked KeyStatus = "revoked"
	KeyExpired KeyStatus = "expired"
	KeyUnknown KeyStatus = "unknown"
)

// KeyStatuses lists the API key statuses.
var KeyStatuses = newSet(KeyActive, KeyRevoked, KeyExpired, KeyUnknown)

// RepoSource is where a scanned repository comes from.
type RepoSource string

// Repository sources.
const (
	SourceConnected RepoSource = "connected" // synced through the organization's connected repositories
	SourcePublic    RepoSource = "public"    // cloned anonymously over HTTPS
	SourceUpload    RepoSource = "upload"    // an archive sent with POST /v1/uploads
)

// RepoSources lists the repository sources.
var RepoSources = newSet(SourceConnected, SourcePublic, SourceUpload)

// RepoKey is the one identity of a repository URL, so that spellings of one
// repository compare equal in every service: surrounding space trimmed,
// scheme and host in lower case, no credentials, query or fragment, no
// trailing slash or ".git". The path keeps its case (git hosts differ on
// whether paths are case-sensitive). A value without a host (a local path)
// only loses its trailing slash and ".git".
func RepoKey(raw string) string {
	raw = strings.TrimSpace(raw)
	trim := func(p string) string {
		for {
			t := strings.TrimSuffix(strings.TrimSuffix(p, "/"), ".git")
			if t == p {
				return p
			}
			p = t
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return trim(raw)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.User = nil
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	u.ForceQuery = false
	u.Path, u.RawPath = trim(u.Path), ""
	return u.String()
}

// Page limits: finding lists, scans and histories default to 15 items, cost
// estimations to 50; every list allows at most 100.
const (
	DefaultPageLimit           = 15
	DefaultEstimationPageLimit = 50
	MaxPageLimit               = 100
)

// Page validates the optional page and limit of a list request (nil: not
// given) and returns them with their defaults: page 1 and def.
func Page(page, limit *int32, def int32) (int32, int32, error) {
	p, l := int32(1), def
	if page != nil {
		if p = *page; p < 1 {
			return 0, 0, apierr.Invalid("page must be at least 1")
		}
	}
	if limit != nil {
		if l = *limit; l < 1 || l > MaxPageLimit {
			return 0, 0, apierr.Invalid("limit must be between 1 and %d", MaxPageLimit)
		}
	}
	if int64(p-1)*int64(l) > 1<<31-1 {
		return 0, 0, apierr.Invalid("page is too large")
	}
	return p, l, nil
}
