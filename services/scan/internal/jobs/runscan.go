package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/vulnscan/vulnscan/pkg/archive"
	"github.com/vulnscan/vulnscan/pkg/engine"
	"github.com/vulnscan/vulnscan/pkg/engine/finding"
	"github.com/vulnscan/vulnscan/pkg/gitfetch"
	"github.com/vulnscan/vulnscan/pkg/rmtree"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/lifecycle"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
)

// ReportBatch is the number of findings reported per call.
const ReportBatch = 100

// RunScanWorker runs RunScan jobs. It checks out exactly the estimated
// commits (primary repository first, related ones beside it), runs the scan
// engine on the code and the target URLs, reports findings to the findings
// service in idempotent batches, and records progress. A scan that cannot
// finish after its attempts ends failed and its credits are refunded. On
// shutdown a running scan is handed back to the queue. A cancelled scan
// stops on whichever worker holds it (see watchCancel).
type RunScanWorker struct {
	river.WorkerDefaults[RunScan]
	Store      *store.Store
	Estimation estimationv1.EstimationInternalServiceClient
	Auth       authv1.AuthInternalServiceClient
	Findings   findingsv1.FindingsIntakeServiceClient
	Engine     *engine.Engine
	LiveClient *http.Client
	Box        *secretbox.Box
	Log        *slog.Logger
	WorkDir    string
	JobTimeout time.Duration
	// CancelPoll is how often a running scan's status is read to notice a
	// cancellation (DefaultCancelPoll when zero).
	CancelPoll time.Duration
	Fetch      gitfetch.Limits
	Archive    archive.Limits
	// MaxRunningPerOrg bounds the scans of one organization running at once
	// across all workers (SCAN_MAX_RUNNING_PER_ORG; 0: no bound).
	MaxRunningPerOrg int
	// OrgBusySnooze is how long a scan waits when its organization is at
	// its running limit before it is offered to a worker again
	// (DefaultOrgBusySnooze when zero).
	OrgBusySnooze time.Duration
}

// DefaultOrgBusySnooze is RunScanWorker.OrgBusySnooze's default.
const DefaultOrgBusySnooze = 10 * time.Second

// Timeout bounds one attempt of a scan.
func (w *RunScanWorker) Timeout(*river.Job[RunScan]) time.Duration { return w.JobTimeout }

// permanent marks failures that retrying cannot fix.
type permanent struct{ msg string }

func (p permanent) Error() string { return p.msg }

func (w *RunScanWorker) Work(ctx context.Context, job *river.Job[RunScan]) error {
	sc, err := w.Store.ByID(ctx, job.Args.ScanID)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(fmt.Errorf("scan %s does not exist", job.Args.ScanID))
	}
	if err != nil {
		return err
	}
	if sc.StartState != store.Started {
		return river.JobCancel(fmt.Errorf("scan %s was not started", sc.ID))
	}
	if sc.Status.Terminal() {
		return nil
	}
	log := w.Log.With("scan_id", sc.ID, "attempt", job.Attempt)
	started, err := w.Store.StartRunning(ctx, sc.ID, sc.OrgID, w.MaxRunningPerOrg)
	if errors.Is(err, store.ErrNotRunnable) {
		// Cancelled before a worker started it: it never starts.
		log.InfoContext(ctx, "stopped a cancelled scan")
		return nil
	}
	if err != nil {
		return err
	}
	if !started {
		// Fair scheduling: the organization already runs its share, so this
		// job steps aside (a snooze uses no attempt) and the workers take
		// other organizations' scans meanwhile.
		log.DebugContext(ctx, "organization at its running-scan limit; scan snoozed")
		snooze := w.OrgBusySnooze
		if snooze <= 0 {
			snooze = DefaultOrgBusySnooze
		}
		return river.JobSnooze(snooze)
	}
	runCtx, stopWatch := w.watchCancel(ctx, log, sc.ID)
	err = w.run(runCtx, log, sc)
	stopWatch()
	if errors.Is(context.Cause(runCtx), errCancelled) {
		// The scan was cancelled: it ends here, with what it reported so far.
		log.InfoContext(ctx, "stopped a cancelled scan")
		return nil
	}
	if err == nil {
		return nil
	}
	if status, serr := w.Store.Status(ctx, sc.ID); serr == nil && status == vocab.ScanCancelled {
		// Cancelled while the attempt was failing: it stays cancelled, and
		// a running scan's cancellation keeps its credits.
		log.InfoContext(ctx, "stopped a cancelled scan", "error", err.Error())
		return nil
	}
	switch o := decide(err, ctx.Err(), job.Attempt, job.MaxAttempts); o.action {
	case handBack:
		log.InfoContext(ctx, "scan interrupted by shutdown; returned to the queue")
		return river.JobSnooze(time.Second)
	case failRefund:
		log.WarnContext(ctx, "scan failed", "error", err.Error())
		return w.fail(context.WithoutCancel(ctx), sc, o.msg)
	case failKeep:
		log.WarnContext(ctx, "scan failed on its time limit; credits kept", "error", err.Error())
		if _, err := w.Store.Fail(context.WithoutCancel(ctx), sc.ID, fmt.Sprintf(o.msg, w.JobTimeout)); err != nil {
			return err
		}
		return nil
	default:
		log.WarnContext(ctx, "scan attempt failed; it will be retried", "error", err.Error())
		return err
	}
}

type action int

const (
	retry      action = iota
	handBack          // shutdown: back to the queue without using an attempt
	failRefund        // failed for good, credits refunded
	failKeep          // failed for good, credits kept
)

type outcome struct {
	action action
	msg    string
}

// timedOutMsg is the error of a scan that used its whole attempt.
const timedOutMsg = "The scan did not finish within its time limit of %s; the repositories or targets are too large or too slow to scan, and the credits are not refunded"

// decide applies the refund rule to a failed attempt (ctxErr is the
// attempt context's error):
//   - shutdown (the context canceled): the scan goes back to the queue;
//   - a permanent failure (an archive or repository refused by its bounds,
//     a commit gone, credentials refused, unreadable stored secrets): failed
//     at once, credits refunded, since nothing was analysed;
//   - the attempt's deadline passed (SCAN_JOB_TIMEOUT): everything the scan
//     does with unbounded cost is driven by the tenant's input (code size,
//     exclusions, slow targets), and every stage is budgeted well inside the
//     timeout, so a scan that still uses all of it is failed after that one
//     attempt and its credits are kept: a retry would take the worker for
//     the same time again, and a refund would make that free to repeat;
//   - anything else (a service or database unavailable): retried, and
//     refunded when the last attempt fails.
func decide(err, ctxErr error, attempt, maxAttempts int) outcome {
	var perm permanent
	switch {
	case errors.Is(ctxErr, context.Canceled):
		return outcome{action: handBack}
	case errors.As(err, &perm):
		return outcome{action: failRefund, msg: perm.msg}
	case errors.Is(ctxErr, context.DeadlineExceeded):
		return outcome{action: failKeep, msg: timedOutMsg}
	case attempt >= maxAttempts:
		return outcome{action: failRefund, msg: lifecycle.FailedMessage}
	}
	return outcome{action: retry}
}

// fail refunds the scan's credits and marks it failed (idempotently).
func (w *RunScanWorker) fail(ctx context.Context, sc store.Scan, msg string) error {
	c := &lifecycle.Compensations{Store: w.Store, Auth: w.Auth, Estimation: w.Estimation}
	return c.FailAndRefund(ctx, sc, msg)
}

func (w *RunScanWorker) run(ctx context.Context, log *slog.Logger, sc store.Scan) error {
	if _, err := w.Findings.RegisterScan(ctx, lifecycle.RegisterRequest(sc)); err != nil {
		return fmt.Errorf("register scan: %w", err)
	}
	progress := newProgress(ctx, w.Store, sc.ID, log)
	progress.set(2)

	dir, err := os.MkdirTemp(w.WorkDir, "scan-"+sc.ID+"-")
	if err != nil {
		return err
	}
	defer func() {
		if err := rmtree.RemoveAll(dir); err != nil {
			log.ErrorContext(ctx, "scan directory could not be removed", "error", err.Error())
		}
	}()
	checked, err := w.checkout(ctx, sc, dir)
	if err != nil {
		return err
	}
	progress.set(10)

	repos, withBase := make([]engine.Repo, len(checked)), false
	for i, r := range checked {
		repos[i] = r.repo
		withBase = withBase || r.hasBase()
	}
	in := engine.Input{Repos: repos, TargetURLs: sc.TargetURLs, CustomContext: sc.CustomContext, HTTPClient: w.LiveClient}
	if sc.ScanType == lifecycle.ScanTypePR {
		in.TargetURLs = nil // live targets are not part of a pull request's change
	}
	if len(sc.ContextDocumentIDs) > 0 {
		docs, err := w.Store.DocumentsContent(ctx, sc.OrgID, sc.ContextDocumentIDs)
		if err != nil {
			return err
		}
		for _, d := range docs {
			in.CustomContext += "\n" + d.Content
		}
	}
	if len(sc.AuthInstructionsEnc) > 0 {
		pt, _, err := w.Box.Open(sc.AuthInstructionsEnc, store.AuthInstructionsAD(sc.ID))
		if err != nil {
			return permanent{"The scan's stored auth instructions could not be read"}
		}
		in.AuthInstructions = string(pt)
	}
	res, err := w.Engine.Run(ctx, in, func(pct int) { progress.set(int32(10 + pct*80/100)) })
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	log.InfoContext(ctx, "analysis done", "findings", len(res.Findings), "candidates", res.Stats.Candidates, "confirmed", res.Stats.Confirmed, "held", res.Stats.Held, "files", res.Stats.FilesAnalyzed, "skipped", res.Stats.FilesSkipped, "lines", res.Stats.LinesAnalyzed,
		"flow_functions", res.Stats.Flow.Functions, "flow_over_budget", res.Stats.Flow.OverBudget, "flow_not_analyzed", res.Stats.Flow.NotAnalyzed)
	findings := res.Findings
	if withBase {
		if findings, err = w.newInChange(ctx, log, sc, checked, dir, findings); err != nil {
			return err
		}
	}
	progress.set(90)
	if err := w.report(ctx, sc, findings); err != nil {
		return err
	}
	// Every finding is reported: the findings service may now tell the
	// integrations (a PR scan's review comments and summary). Idempotent by
	// the scan, so a retried attempt queues nothing twice.
	if _, err := w.Findings.CompleteScan(ctx, &findingsv1.CompleteScanRequest{ScanId: sc.ID, OrgId: sc.OrgID}); err != nil {
		return fmt.Errorf("complete scan in findings: %w", err)
	}
	progress.flush()
	return w.Store.Complete(ctx, sc.ID)
}

// report sends findings in batches; the findings service keys them by
// (scan, fingerprint), so a retried attempt never duplicates them.
func (w *RunScanWorker) report(ctx context.Context, sc store.Scan, fs []engine.Finding) error {
	for start := 0; start < len(fs); start += ReportBatch {
		end := min(start+ReportBatch, len(fs))
		req := &findingsv1.ReportFindingsRequest{ScanId: sc.ID}
		for _, f := range fs[start:end] {
			f = finding.ReportText(f) // text taken from the repository, made sendable
			rf := &findingsv1.ReportedFinding{
				Fingerprint: f.Fingerprint, Title: f.Title, Category: f.Category, Severity: f.Severity, Description: Describe(f),
				AffectedFile: f.AffectedFile, AffectedCode: f.AffectedCode, Tags: Tags(f), StartLine: int32(f.StartLine), EndLine: int32(f.EndLine),
				Verified: f.Confirmed,
			}
			if f.ProofOfConcept != nil {
				rf.ProofOfConcept = wrapperspb.String(*f.ProofOfConcept)
			}
			if f.MermaidTrace != nil {
				rf.MermaidTrace = wrapperspb.String(*f.MermaidTrace)
			}
			req.Findings = append(req.Findings, rf)
		}
		if _, err := w.Findings.ReportFindings(ctx, req); err != nil {
			return fmt.Errorf("report findings: %w", err)
		}
	}
	return nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// checkout fetches every repository of the scan at its estimated commit.
func (w *RunScanWorker) checkout(ctx context.Context, sc store.Scan, dir string) ([]prRepo, error) {
	resp, err := w.Estimation.GetRepoSources(ctx, &estimationv1.GetRepoSourcesRequest{OrgId: sc.OrgID, Id: sc.EstimationID})
	if err != nil {
		return nil, fmt.Errorf("repository sources: %w", err)
	}
	var out []prRepo
	for i, r := range sc.Repos {
		var src *estimationv1.RepoSource
		for _, s := range resp.GetSources() {
			if sameRepo(s.GetRepoUrl(), r.URL) {
				src = s
				break
			}
		}
		if src == nil {
			return nil, permanent{fmt.Sprintf("Repository %s is no longer part of the estimation", r.URL)}
		}
		if src.GetStatus() != string(vocab.EstimationCompleted) {
			return nil, permanent{fmt.Sprintf("Repository %s could not be estimated, so it cannot be scanned", r.URL)}
		}
		target := filepath.Join(dir, fmt.Sprintf("%02d-%s", i, unsafeName.ReplaceAllString(filepath.Base(r.URL), "_")))
		if err := os.MkdirAll(target, 0o700); err != nil {
			return nil, err
		}
		switch src.GetSource() {
		case string(vocab.SourceUpload):
			if err := w.unpack(ctx, sc.OrgID, src, target); err != nil {
				return nil, err
			}
		default:
			if err := w.fetchAt(ctx, src, r.URL, src.GetBranch(), src.GetCommitSha(), target); err != nil {
				return nil, err
			}
		}
		// The engine names the repository by its identity, which the
		// fingerprints include: the same upload content gives the same
		// fingerprints whatever the upload's id.
		out = append(out, prRepo{repo: engine.Repo{URL: r.Key(), Dir: target, CommitSHA: src.GetCommitSha(), Primary: i == 0}, src: src, url: r.URL})
	}
	return out, nil
}

// sameRepo: the estimation's and the scan's spelling of one repository
// compare by vocab's one repository key in every service.
func sameRepo(a, b string) bool { return vocab.RepoKey(a) == vocab.RepoKey(b) }

// unpack streams an upload's archive from the estimation service into a
// temporary file, checks its hash, and extracts it safely.
func (w *RunScanWorker) unpack(ctx context.Context, orgID string, src *estimationv1.RepoSource, target string) error {
	stream, err := w.Estimation.DownloadUpload(ctx, &estimationv1.DownloadUploadRequest{OrgId: orgID, UploadId: src.GetUploadId()})
	if err != nil {
		return fmt.Errorf("download upload: %w", err)
	}
	f, err := os.CreateTemp(w.WorkDir, "upload-")
	if err != nil {
		return err
	}
	defer func() { _ = f.Close(); _ = os.Remove(f.Name()) }()
	h := sha256.New()
	var size int64
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("download upload: %w", err)
		}
		h.Write(msg.GetData())
		n, err := f.Write(msg.GetData())
		if err != nil {
			return err
		}
		size += int64(n)
	}
	if want := src.GetArchiveSha256(); want != "" && hex.EncodeToString(h.Sum(nil)) != want {
		return fmt.Errorf("upload %s changed since it was estimated", src.GetUploadId())
	}
	if _, err := archive.Extract(f, size, src.GetArchiveContentType(), target, w.Archive); err != nil {
		// The archive is immutable (its hash was checked): a failure to
		// unpack it repeats on every attempt. The partial extraction is
		// removed with the scan's directory.
		if errors.Is(err, archive.ErrUnsafe) {
			return permanent{"The uploaded archive could not be unpacked safely: " + strings.TrimPrefix(err.Error(), archive.ErrUnsafe.Error()+": ")}
		}
		w.Log.ErrorContext(ctx, "unpacking an upload failed", "upload_id", src.GetUploadId(), "error", err.Error())
		return permanent{"The uploaded archive could not be unpacked"}
	}
	return nil
}

// progressWriter records progress at most once a second and never backwards.
type progressWriter struct {
	ctx   context.Context
	store *store.Store
	id    string
	log   *slog.Logger

	mu      sync.Mutex
	last    int32
	pending int32
	at      time.Time
}

func newProgress(ctx context.Context, st *store.Store, id string, log *slog.Logger) *progressWriter {
	return &progressWriter{ctx: ctx, store: st, id: id, log: log}
}

func (p *progressWriter) set(v int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v <= p.pending {
		return
	}
	p.pending = min(v, 99)
	if time.Since(p.at) < time.Second {
		return
	}
	p.writeLocked()
}

func (p *progressWriter) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writeLocked()
}

func (p *progressWriter) writeLocked() {
	if p.pending == p.last {
		return
	}
	if err := p.store.SetProgress(p.ctx, p.id, p.pending); err != nil {
		p.log.Warn("record progress", "error", err.Error())
		return
	}
	p.last, p.at = p.pending, time.Now()
}

// WhyHeading starts the paragraph that Describe appends to a finding's
// description (see finding.WhyHeading).
const WhyHeading = finding.WhyHeading

// ConfidenceTag is the prefix of the tag that carries a finding's confidence.
const ConfidenceTag = finding.ConfidenceTag

// Tags returns the finding's tags with its confidence ("confidence:high"),
// as the command-line client's local runs report them too.
func Tags(f engine.Finding) []string { return finding.ReportTags(f) }

// Describe returns the finding's description followed by the reasons of its
// confidence, so that whoever reads the finding sees why it is reported.
func Describe(f engine.Finding) string { return finding.ReportDescription(f) }
