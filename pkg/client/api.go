package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// Upload is the answer of POST /uploads.
type Upload struct {
	ID        string `json:"id"`
	RepoURL   string `json:"repo_url"`
	SizeBytes int64  `json:"size_bytes"`
	SHA256    string `json:"sha256"`
}

// Upload sends an archive (contentType "application/gzip" for tar.gz or
// "application/zip").
func (c *Client) Upload(ctx context.Context, archive []byte, contentType string) (Upload, error) {
	return fetch[Upload](ctx, c, request{method: http.MethodPost, path: "/uploads", raw: archive, contentType: contentType})
}

// EstimationRepo is one repository of an estimation request. BaseBranch
// and BaseCommit ask for a pull-request scan of Branch against that base.
type EstimationRepo struct {
	Source     string `json:"source"`
	RepoURL    string `json:"repo_url"`
	Branch     string `json:"branch,omitempty"`
	BaseBranch string `json:"base_branch,omitempty"`
	BaseCommit string `json:"base_commit,omitempty"`
	// PullRequest is the pull request's number on the git host, for the
	// review comments of a PR scan (0: none).
	PullRequest int `json:"pull_request,omitempty"`
}

// RepoResult is one repository's outcome in an estimation.
type RepoResult struct {
	RepoURL   string `json:"repo_url"`
	Branch    string `json:"branch"`
	CommitSHA string `json:"commit_sha"`
	Status    string `json:"status"`
	Credits   int    `json:"credits"`
	Error     string `json:"error,omitempty"`
	FromCache bool   `json:"from_cache"`
}

// Estimation is a cost estimation.
type Estimation struct {
	ID           string           `json:"id"`
	Status       string           `json:"status"`
	Repos        []EstimationRepo `json:"repos"`
	TotalCredits int              `json:"total_credits"`
	RepoResults  []RepoResult     `json:"repo_results"`
}

// Terminal reports whether the estimation will not change any more.
func (e Estimation) Terminal() bool {
	return e.Status == "completed" || e.Status == "partial" || e.Status == "failed"
}

// CreateEstimation starts an estimation of repos.
func (c *Client) CreateEstimation(ctx context.Context, repos []EstimationRepo) (Estimation, error) {
	return fetch[Estimation](ctx, c, request{method: http.MethodPost, path: "/cost-estimations", body: map[string]any{"repos": repos}})
}

// GetEstimation reads an estimation.
func (c *Client) GetEstimation(ctx context.Context, id string) (Estimation, error) {
	return fetch[Estimation](ctx, c, request{method: http.MethodGet, path: "/cost-estimations/" + url.PathEscape(id)})
}

// ScanRepo is one repository of a scan request.
type ScanRepo struct {
	URL    string `json:"url"`
	Branch string `json:"branch"`
	Source string `json:"source,omitempty"`
}

// StartScan is the body of POST /scans.
type StartScan struct {
	CostEstimationID string     `json:"cost_estimation_id"`
	Repos            []ScanRepo `json:"repos"`
	TargetURLs       []string   `json:"target_urls,omitempty"`
}

// Scan is the answer of POST /scans.
type Scan struct {
	ID      string `json:"id"`
	TaskID  string `json:"task_id"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

// StartScan starts a scan.
func (c *Client) StartScan(ctx context.Context, s StartScan) (Scan, error) {
	return fetch[Scan](ctx, c, request{method: http.MethodPost, path: "/scans", body: s})
}

// ScanStatus is the answer of GET /scans/{id}/status.
type ScanStatus struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Progress int    `json:"progress"`
}

// GetScanStatus reads a scan's status and progress.
func (c *Client) GetScanStatus(ctx context.Context, id string) (ScanStatus, error) {
	return fetch[ScanStatus](ctx, c, request{method: http.MethodGet, path: "/scans/" + url.PathEscape(id) + "/status"})
}

// ScanDetails is the answer of GET /scans/{id} (the fields the client uses).
type ScanDetails struct {
	ID              string         `json:"id"`
	Status          string         `json:"status"`
	ScanType        string         `json:"scan_type"`
	CreditsUsed     int            `json:"credits_used"`
	FindingsSummary map[string]int `json:"findings_summary"`
	Error           *string        `json:"error"`
}

// GetScan reads a scan's details.
func (c *Client) GetScan(ctx context.Context, id string) (ScanDetails, error) {
	return fetch[ScanDetails](ctx, c, request{method: http.MethodGet, path: "/scans/" + url.PathEscape(id)})
}

// Finding is a finding as the API shows it; the single read adds the
// detail fields.
type Finding struct {
	ID             string   `json:"id"`
	Title          string   `json:"title"`
	Category       string   `json:"category"`
	Severity       string   `json:"severity"`
	State          string   `json:"state"`
	Description    string   `json:"description"`
	AffectedFile   string   `json:"affected_file"`
	AffectedCode   string   `json:"affected_code"`
	ProofOfConcept *string  `json:"proof_of_concept"`
	Tags           []string `json:"tags"`
	ScanID         *string  `json:"scan_id"`
	FoundAt        string   `json:"found_at"`
	UpdatedAt      string   `json:"updated_at"`
	DuplicateOf    *string  `json:"duplicate_of"`
	Line           *int     `json:"line"`
	Fingerprint    string   `json:"fingerprint"`

	TriageThread    []TriageEntry `json:"triage_thread,omitempty"`
	MermaidTrace    *string       `json:"mermaid_trace,omitempty"`
	OccurrenceCount int           `json:"occurrence_count,omitempty"`
	RepoURL         *string       `json:"repo_url,omitempty"`
	ScanType        *string       `json:"scan_type,omitempty"`
}

// TriageEntry is one comment or reaction of a finding's triage thread.
type TriageEntry struct {
	ID        string  `json:"id"`
	Reaction  *string `json:"reaction"`
	Comment   *string `json:"comment"`
	UserID    string  `json:"user_id"`
	Username  string  `json:"username"`
	Source    string  `json:"source"`
	Timestamp string  `json:"timestamp"`
}

// FindingQuery filters a finding list. ScanID lists one scan's findings.
type FindingQuery struct {
	ScanID, Severity, State, SortBy, SortOrder string
	Page, Limit                                int
}

// FindingPage is one page of a finding list.
type FindingPage struct {
	Data  []Finding `json:"data"`
	Total int       `json:"total"`
	Page  int       `json:"page"`
	Limit int       `json:"limit"`
}

// ListFindings reads one page of findings.
func (c *Client) ListFindings(ctx context.Context, q FindingQuery) (FindingPage, error) {
	v := url.Values{}
	for k, s := range map[string]string{"severity": q.Severity, "state": q.State, "sort_by": q.SortBy, "sort_order": q.SortOrder} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Page > 0 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	path := "/findings"
	if q.ScanID != "" {
		path = "/scans/" + url.PathEscape(q.ScanID) + "/findings"
	}
	return fetch[FindingPage](ctx, c, request{method: http.MethodGet, path: path, query: v})
}

// AllFindings reads every page of a finding list (Page and Limit of q are
// ignored), stopping when page * limit reaches total as the spec says.
func (c *Client) AllFindings(ctx context.Context, q FindingQuery) ([]Finding, error) {
	var out []Finding
	q.Limit = 100
	for q.Page = 1; ; q.Page++ {
		p, err := c.ListFindings(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Data...)
		if q.Page*q.Limit >= p.Total || len(p.Data) == 0 {
			return out, nil
		}
	}
}

// GetFinding reads one finding with its triage thread.
func (c *Client) GetFinding(ctx context.Context, id string) (Finding, error) {
	return fetch[Finding](ctx, c, request{method: http.MethodGet, path: "/findings/" + url.PathEscape(id)})
}

// Triage is the body of PATCH /findings/{id}. DuplicateOf is sent when
// SetDuplicate is true: a UUID, or nil to unmark.
type Triage struct {
	State        string
	Severity     string
	SetDuplicate bool
	DuplicateOf  *string
	Reason       string
}

// TriageResult is the answer of PATCH /findings/{id}.
type TriageResult struct {
	ID          string  `json:"id"`
	State       string  `json:"state"`
	Severity    string  `json:"severity"`
	DuplicateOf *string `json:"duplicate_of"`
}

// TriageFinding changes a finding's state, severity or duplicate link.
func (c *Client) TriageFinding(ctx context.Context, id string, t Triage) (TriageResult, error) {
	body := map[string]any{}
	if t.State != "" {
		body["state"] = t.State
	}
	if t.Severity != "" {
		body["severity"] = t.Severity
	}
	if t.SetDuplicate {
		body["duplicate_of"] = t.DuplicateOf
	}
	if t.Reason != "" {
		body["reason"] = t.Reason
	}
	return fetch[TriageResult](ctx, c, request{method: http.MethodPatch, path: "/findings/" + url.PathEscape(id), body: body})
}

// Comment adds a comment to a finding's triage thread and returns its id.
func (c *Client) Comment(ctx context.Context, id, comment string) (string, error) {
	var r struct {
		CommentID string `json:"comment_id"`
	}
	err := c.call(ctx, request{method: http.MethodPost, path: "/findings/" + url.PathEscape(id) + "/comments", body: map[string]string{"comment": comment}}, &r)
	return r.CommentID, err
}

// Export writes a scan's findings export in format ("json", "csv" or
// "sarif") to w.
func (c *Client) Export(ctx context.Context, scanID, format string, w io.Writer) error {
	resp, err := c.send(ctx, request{method: http.MethodGet, path: "/scans/" + url.PathEscape(scanID) + "/findings/export", query: url.Values{"format": {format}}})
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}
