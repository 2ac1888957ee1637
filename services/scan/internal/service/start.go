package service

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/archive"
	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/engine/exclude"
	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/pkg/validate"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	scanv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/scan/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
)

// Starter runs the start saga. Claiming the estimation (estimation service),
// debiting the credits (auth service) and queueing the scan (this service)
// cross three services, so each step is idempotent by the scan id:
//
//  1. the scan row is inserted as 'starting' together with a RecoverStart
//     job scheduled after RecoveryDelay, before anything else happens;
//  2. the estimation is claimed for the scan;
//  3. the credits are debited under lifecycle.CreditReference;
//  4. the row moves to 'started' and its RunScan job is queued, in one
//     transaction, only if it is still 'starting'.
//
// Any failure undoes the completed steps (refund, release) and marks the row
// aborted (lifecycle.Compensations.AbortStart). If the process dies midway,
// the RecoverStart job does the same;
// it moves the row to 'aborting' first, so a slow request can no longer
// complete it. A failed start therefore never keeps credits or the claim.
type Starter struct {
	Pool       *pgxpool.Pool
	Store      *store.Store
	Queue      lifecycle.Queue
	Estimation estimationv1.EstimationInternalServiceClient
	Auth       authv1.AuthInternalServiceClient
	Findings   findingsv1.FindingsIntakeServiceClient
	Guard      *netguard.Guard
	Box        *secretbox.Box
	Log        *slog.Logger
	// Exclude bounds the exclude patterns of one scan, custom_context and
	// attached documents together (zero: exclude.DefaultLimits).
	Exclude exclude.Limits
	// Budget bounds a whole start, every call to another service included
	// (lifecycle.DefaultStartBudget when zero). It must stay well below
	// RecoveryDelay, so recovery never runs while a request could still
	// claim or debit: a call cut short by the deadline is cancelled on the
	// server too.
	Budget time.Duration
	// RecoveryDelay is how long after a start its recovery job runs
	// (lifecycle.DefaultRecoveryDelay when zero).
	RecoveryDelay time.Duration

	// Failpoint, when set, is called after each step of the saga
	// ("recorded", "claimed", "debited", "queued") and may fail it. Returning
	// ErrSimulatedCrash stops the saga without undoing anything, as if the
	// process had died there. Fault-injection tests use it; it is nil in
	// production.
	Failpoint func(step string) error
}

// ErrSimulatedCrash makes a Failpoint behave like a process death.
var ErrSimulatedCrash = errors.New("simulated crash")

// Start is a validated request.
type Start struct {
	Caller     principal.Principal
	Req        *scanv1.CreateScanRequest
	Repos      []store.Repo
	Estimation *estimationv1.CostEstimation
}

func (s *Starter) excludeLimits() exclude.Limits {
	if s.Exclude.MaxPatterns == 0 {
		return exclude.DefaultLimits
	}
	return s.Exclude
}

func (s *Starter) fail(step string) error {
	if s.Failpoint != nil {
		return s.Failpoint(step)
	}
	return nil
}

const pentestMessage = "cost_estimation_id is required for pentest scans"

// Validate checks a request's fields in a fixed order, so that a request with
// several faults always answers the same one: the first failure answers.
func (s *Starter) Validate(ctx context.Context, caller principal.Principal, req *scanv1.CreateScanRequest) (*Start, error) {
	in := &Start{Caller: caller, Req: req}
	// Body shape and field rules.
	if len(req.GetRepos()) == 0 {
		return nil, apierr.Invalid("At least one repository is required")
	}
	if len(req.GetRepos()) > MaxScanRepos {
		return nil, apierr.Invalid("repos must have at most %d entries", MaxScanRepos)
	}
	for i, r := range req.GetRepos() {
		field := fmt.Sprintf("repos[%d]", i)
		src := r.GetSource()
		if src == "" {
			src = string(vocab.SourceConnected)
		}
		if err := validate.OneOf(field+".source", src, vocab.RepoSources.Strings()...); err != nil {
			return nil, err
		}
		if strings.TrimSpace(r.GetUrl()) == "" {
			return nil, apierr.Invalid("%s.url is required", field)
		}
		if src == string(vocab.SourceUpload) {
			id, ok := strings.CutPrefix(r.GetUrl(), "upload://")
			if !ok || validate.UUID(field+".url", id) != nil {
				return nil, apierr.Invalid("%s.url must be upload://<upload id> for an upload", field)
			}
		} else {
			if _, err := netguard.ParseURL(r.GetUrl(), "https"); err != nil {
				return nil, apierr.Invalid("%s.url %s", field, err.Error())
			}
			if strings.TrimSpace(r.GetBranch()) == "" {
				return nil, apierr.Invalid("%s.branch is required", field)
			}
		}
		if err := validate.MaxLen(field+".branch", r.GetBranch(), 255); err != nil {
			return nil, err
		}
		in.Repos = append(in.Repos, store.Repo{URL: r.GetUrl(), Branch: r.GetBranch(), Source: r.GetSource()})
	}
	if len(req.GetTargetUrls()) > MaxTargetURLs {
		return nil, apierr.Invalid("target_urls must have at most %d entries", MaxTargetURLs)
	}
	for i, raw := range req.GetTargetUrls() {
		if _, err := netguard.ParseURL(raw, "http", "https"); err != nil {
			return nil, apierr.Invalid("target_urls[%d] %s", i, err.Error())
		}
	}
	if err := validate.MaxLen("auth_instructions", req.GetAuthInstructions(), MaxTextField); err != nil {
		return nil, err
	}
	if err := validate.MaxLen("custom_context", req.GetCustomContext(), MaxTextField); err != nil {
		return nil, err
	}
	patterns := exclude.Parse(req.GetCustomContext())
	if err := exclude.Check(patterns, s.excludeLimits()); err != nil {
		return nil, apierr.Invalid("custom_context %s", err.Error())
	}
	if len(req.GetContextDocumentIds()) > MaxContextDocs {
		return nil, apierr.Invalid("context_document_ids must have at most %d entries", MaxContextDocs)
	}
	for i, id := range req.GetContextDocumentIds() {
		if err := validate.UUID(fmt.Sprintf("context_document_ids[%d]", i), id); err != nil {
			return nil, err
		}
	}
	// The estimation is required; say why when pentest inputs were given.
	if req.GetCostEstimationId() == "" {
		if len(req.GetTargetUrls()) > 0 || req.GetAuthInstructions() != "" || req.GetCustomContext() != "" || len(req.GetContextDocumentIds()) > 0 {
			return nil, apierr.Invalid("%s", pentestMessage)
		}
		return nil, apierr.Invalid("cost_estimation_id is required")
	}
	if err := validate.UUID("cost_estimation_id", req.GetCostEstimationId()); err != nil {
		return nil, err
	}
	// Target URLs must be public.
	for i, raw := range req.GetTargetUrls() {
		u, _ := url.Parse(raw)
		if err := s.Guard.CheckHost(ctx, u.Hostname()); err != nil {
			return nil, apierr.Invalid("target_urls[%d] must be a public URL: private and internal network addresses are not allowed", i)
		}
	}
	// The estimation: visible, ready, with credits, and holding the repos.
	resp, err := s.Estimation.GetEstimation(ctx, &estimationv1.GetEstimationRequest{OrgId: caller.OrgID, Id: req.GetCostEstimationId()})
	if status.Code(err) == codes.NotFound {
		return nil, apierr.NotFound("Cost estimation not found")
	}
	if err != nil {
		return nil, fmt.Errorf("get estimation: %w", err)
	}
	est := resp.GetEstimation()
	in.Estimation = est
	switch est.GetStatus() {
	case string(vocab.EstimationCompleted), string(vocab.EstimationPartial):
	case string(vocab.EstimationFailed):
		return nil, apierr.Invalid("Cost estimation failed and cannot be used for a scan")
	default:
		return nil, apierr.Invalid("Cost estimation is not ready")
	}
	if est.GetTotalCredits() <= 0 {
		return nil, apierr.Invalid("Cost estimation has no credits to claim")
	}
	seen := map[string]int{}
	for i, r := range in.Repos {
		match := estimatedRepo(est, r)
		if match == nil {
			return nil, apierr.Invalid("repos[%d]: Repository or archive was not included in the estimation", i)
		}
		if j, dup := seen[match.GetRepoUrl()]; dup {
			return nil, apierr.Invalid("repos[%d] repeats repos[%d]", i, j)
		}
		seen[match.GetRepoUrl()] = i
		if res := repoResult(est, match); res != nil && res.GetStatus() == string(vocab.EstimationFailed) {
			return nil, apierr.Invalid("repos[%d]: Repository failed in the estimation and cannot be scanned", i)
		}
		if r.Branch != match.GetBranch() && !(r.Source == string(vocab.SourceUpload) && r.Branch == "") {
			return nil, apierr.Invalid("repos[%d]: Branch does not match the estimation branch", i)
		}
		in.Repos[i].Branch = match.GetBranch()
		in.Repos[i].Source = match.GetSource()
		in.Repos[i].CommitSHA = match.GetCommitSha()
		if match.GetBaseBranch() != "" {
			in.Repos[i].BaseBranch, in.Repos[i].BaseCommit = match.GetBaseBranch(), match.GetBaseCommit()
			in.Repos[i].PullRequest = match.GetPullRequest()
		}
		if match.GetSource() == string(vocab.SourceUpload) && match.GetCommitSha() != "" {
			// An upload's "commit" is the content hash of its files.
			in.Repos[i].Identity = archive.ContentIdentity(match.GetCommitSha())
		}
	}
	if ids := req.GetContextDocumentIds(); len(ids) > 0 {
		missing, err := s.Store.MissingDocuments(ctx, caller.OrgID, ids)
		if err != nil {
			return nil, err
		}
		if len(missing) > 0 {
			return nil, apierr.Invalid("context_document_ids: context document %s not found", missing[0])
		}
		docs, err := s.Store.DocumentsContent(ctx, caller.OrgID, ids)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			patterns = append(patterns, exclude.Parse(d.Content)...)
		}
		if err := exclude.Check(patterns, s.excludeLimits()); err != nil {
			return nil, apierr.Invalid("context_document_ids: the attached documents with custom_context %s", err.Error())
		}
	}
	if resp.GetClaimedByScanId() != "" {
		return nil, apierr.Invalid("Cost estimation has already been claimed by a scan")
	}
	return in, nil
}

// estimatedRepo finds the estimation's repository for a requested one: the
// same repository key (vocab.RepoKey: case of scheme and host, credentials,
// a trailing slash or ".git" aside), and the same source when the request
// named one explicitly.
func estimatedRepo(est *estimationv1.CostEstimation, r store.Repo) *estimationv1.RepoRef {
	key := vocab.RepoKey(r.URL)
	for _, e := range est.GetRepos() {
		if vocab.RepoKey(e.GetRepoUrl()) == key && (r.Source == "" || r.Source == e.GetSource()) {
			return e
		}
	}
	return nil
}

// repoResult returns the estimation's result for one of its repositories.
func repoResult(est *estimationv1.CostEstimation, repo *estimationv1.RepoRef) *estimationv1.RepoResult {
	for _, r := range est.GetRepoResults() {
		if r.GetRepoUrl() == repo.GetRepoUrl() {
			return r
		}
	}
	return nil
}

// compensations gives back what a start took.
func (s *Starter) compensations() *lifecycle.Compensations {
	return &lifecycle.Compensations{Store: s.Store, Auth: s.Auth, Estimation: s.Estimation}
}

func taskID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "scan_" + hex.EncodeToString(b)
}

// Start runs the saga for a validated request.
func (s *Starter) Start(ctx context.Context, in *Start) (store.Scan, error) {
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(s.Budget, lifecycle.DefaultStartBudget))
	defer cancel()
	sc := store.Scan{
		ID: uuid.NewString(), OrgID: in.Caller.OrgID, UserID: in.Caller.UserID, TaskID: taskID(), Status: vocab.ScanPending,
		// The findings service refuses a registration without a type, so it
		// is set here, not left to the column default.
		ScanType:     lifecycle.ScanType(in.Repos),
		EstimationID: in.Estimation.GetId(), Repos: in.Repos, TargetURLs: in.Req.GetTargetUrls(),
		CustomContext: in.Req.GetCustomContext(), ContextDocumentIDs: in.Req.GetContextDocumentIds(), Credits: in.Estimation.GetTotalCredits(),
	}
	if sc.TargetURLs == nil {
		sc.TargetURLs = []string{}
	}
	if sc.ContextDocumentIDs == nil {
		sc.ContextDocumentIDs = []string{}
	}
	if ai := in.Req.GetAuthInstructions(); ai != "" {
		enc, err := s.Box.Seal([]byte(ai), store.AuthInstructionsAD(sc.ID))
		if err != nil {
			return sc, err
		}
		sc.AuthInstructionsEnc = enc
	}
	// 1. Record the start with its recovery job.
	err := db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		if err := s.Store.InsertStarting(ctx, tx, sc); err != nil {
			return err
		}
		return s.Queue.RecoverStart(ctx, tx, sc.ID, cmp.Or(s.RecoveryDelay, lifecycle.DefaultRecoveryDelay))
	})
	if err != nil {
		return sc, fmt.Errorf("record scan start: %w", err)
	}
	undo := func(cause error) (store.Scan, error) {
		if errors.Is(cause, ErrSimulatedCrash) {
			return sc, cause
		}
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := s.Abort(actx, sc.ID); err != nil {
			s.Log.WarnContext(ctx, "undoing scan start failed; recovery will retry", "scan_id", sc.ID, "error", err.Error())
		}
		return sc, cause
	}
	if err := s.fail("recorded"); err != nil {
		return undo(err)
	}
	// 2. Claim the estimation.
	if _, err := s.Estimation.ClaimEstimation(ctx, &estimationv1.ClaimEstimationRequest{OrgId: sc.OrgID, Id: sc.EstimationID, ScanId: sc.ID}); err != nil {
		return undo(passThrough(err, "claim estimation"))
	}
	if err := s.fail("claimed"); err != nil {
		return undo(err)
	}
	// 3. Debit the credits.
	if _, err := s.Auth.DebitCredits(ctx, &authv1.DebitCreditsRequest{OrgId: sc.OrgID, Amount: sc.Credits, Reference: lifecycle.CreditReference(sc.ID)}); err != nil {
		return undo(passThrough(err, "debit credits"))
	}
	if err := s.fail("debited"); err != nil {
		return undo(err)
	}
	// 4. Start and queue, unless recovery already undid the start.
	var started bool
	err = db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		var err error
		if started, err = s.Store.MarkStarted(ctx, tx, sc.ID); err != nil || !started {
			return err
		}
		if err := s.fail("queued"); err != nil {
			return err
		}
		return s.Queue.RunScan(ctx, tx, sc.ID)
	})
	if err != nil {
		return undo(err)
	}
	if !started {
		return sc, apierr.New(503, "The scan could not be started in time; no credits were used. Retry the request")
	}
	// Tell the findings service about the scan now, so that its findings
	// list answers at once; the worker repeats this (idempotent) if it fails.
	if _, err := s.Findings.RegisterScan(ctx, lifecycle.RegisterRequest(sc)); err != nil {
		s.Log.WarnContext(ctx, "register scan with findings failed; the worker will retry", "scan_id", sc.ID, "error", err.Error())
	}
	return sc, nil
}

// passThrough keeps a client error of another service (its status and
// message) and wraps anything else.
func passThrough(err error, what string) error {
	st, ok := status.FromError(err)
	if ok && st.Code() != codes.Internal && st.Code() != codes.Unknown && st.Code() != codes.Unavailable && st.Code() != codes.DeadlineExceeded {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Abort undoes a start that did not finish (see
// lifecycle.Compensations.AbortStart); the request's undo and the recovery
// job run the same steps.
func (s *Starter) Abort(ctx context.Context, scanID string) error {
	return s.compensations().AbortStart(ctx, scanID)
}
