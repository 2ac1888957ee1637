package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vulnscan/vulnscan/pkg/engine/dataflow"
	"github.com/vulnscan/vulnscan/pkg/engine/exclude"
	"github.com/vulnscan/vulnscan/pkg/engine/finding"
	"github.com/vulnscan/vulnscan/pkg/engine/iac"
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/live"
	"github.com/vulnscan/vulnscan/pkg/engine/sast"
	"github.com/vulnscan/vulnscan/pkg/engine/secrets"
	"github.com/vulnscan/vulnscan/pkg/engine/verify"
	"github.com/vulnscan/vulnscan/pkg/redact"
	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// Repo is one checked-out repository of a scan.
type Repo struct {
	URL       string
	Dir       string // checked-out working tree at CommitSHA
	CommitSHA string
	Primary   bool
}

// Input is everything a scan run needs.
type Input struct {
	Repos      []Repo
	TargetURLs []string
	// AuthInstructions: lines "Header: value" are sent with every live-target
	// request; other lines are for human testers. Never logged.
	AuthInstructions string
	// CustomContext: lines "exclude: <glob>" exclude repository paths.
	CustomContext string
	// HTTPClient is used for live targets. The caller passes a client whose
	// dialer refuses non-public addresses. Nil disables live probing.
	HTTPClient *http.Client
}

// Finding is one verified or unverified result. See package finding.
type Finding = finding.Finding

// Stats describes the work done by a run.
type Stats struct {
	FilesAnalyzed  int
	FilesSkipped   int
	LinesAnalyzed  int
	SkippedReasons map[string]int
	Candidates     int // before verification
	Confirmed      int // confidence high: approved by automated verification
	Held           int // confidence medium or low: held for an operator
	Merged         int
	DroppedInTests int
	TargetsProbed  int
	LiveRequests   int
	Duration       time.Duration
	// Flow describes the repository-wide dataflow analysis: functions
	// summarised, rounds, and the functions whose analysis hit a budget.
	Flow sast.FlowStats
}

// Result is the outcome of Run.
type Result struct {
	Findings []Finding
	Stats    Stats
}

// Engine runs the analyzers. It is safe for concurrent use.
type Engine struct {
	cfg config
}

type config struct {
	workers     int
	maxFileSize int64
	limits      sast.Limits
	live        live.Limits
	liveBudget  time.Duration
	exclude     exclude.Limits
	logger      *slog.Logger
}

// Option configures an Engine.
type Option func(*config)

// WithWorkers sets the number of files analyzed in parallel (default GOMAXPROCS).
func WithWorkers(n int) Option { return func(c *config) { c.workers = n } }

// WithMaxFileSize sets the largest file analyzed, in bytes (default 1 MiB).
func WithMaxFileSize(n int64) Option { return func(c *config) { c.maxFileSize = n } }

// WithFileLimits sets the per-file syntax tree and time limits.
func WithFileLimits(l sast.Limits) Option { return func(c *config) { c.limits = l } }

// WithLiveLimits sets the live-target probe limits.
func WithLiveLimits(l live.Limits) Option { return func(c *config) { c.live = l } }

// WithLiveBudget bounds the live probes of one run together (default 10
// minutes; see live.PhaseBudget).
func WithLiveBudget(d time.Duration) Option { return func(c *config) { c.liveBudget = d } }

// WithExcludeLimits bounds the exclude patterns used (default
// exclude.DefaultLimits).
func WithExcludeLimits(l exclude.Limits) Option { return func(c *config) { c.exclude = l } }

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// New returns an engine.
func New(opts ...Option) *Engine {
	c := config{workers: runtime.GOMAXPROCS(0), maxFileSize: 1 << 20, limits: sast.DefaultLimits, live: live.DefaultLimits,
		liveBudget: 10 * time.Minute, exclude: exclude.DefaultLimits, logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range opts {
		o(&c)
	}
	if c.workers < 1 {
		c.workers = 1
	}
	return &Engine{cfg: c}
}

// Rules lists the code-analysis rules.
func (e *Engine) Rules() ([]finding.Rule, error) {
	a, err := sast.New(e.cfg.limits)
	if err != nil {
		return nil, err
	}
	return a.Rules(), nil
}

type job struct {
	repo Repo
	rel  string
	full string
}

type fileResult struct {
	findings []Finding
	ir       *ir.File
	config   []byte // a configuration file's content, for constant lookups
	lines    int
	skip     string
}

// Run scans the repositories and live targets of in and returns verified
// findings. progress (may be nil) receives increasing percentages up to 100.
func (e *Engine) Run(ctx context.Context, in Input, progress func(pct int)) (Result, error) {
	start := time.Now()
	if progress == nil {
		progress = func(int) {}
	}
	st := Stats{SkippedReasons: map[string]int{}}
	an, err := sast.New(e.cfg.limits)
	if err != nil {
		return Result{}, err
	}
	sec, err := secrets.New()
	if err != nil {
		return Result{}, err
	}
	excl, err := exclude.Compile(exclude.Parse(in.CustomContext), e.cfg.exclude)
	if err != nil {
		return Result{}, err
	}
	var jobs []job
	for _, r := range in.Repos {
		if r.Dir == "" {
			continue
		}
		js, skipped, err := collect(ctx, r, excl)
		if err != nil {
			return Result{}, err
		}
		jobs = append(jobs, js...)
		for k, v := range skipped {
			st.SkippedReasons[k] += v
			st.FilesSkipped += v
		}
	}
	progress(2)

	var (
		mu       sync.Mutex
		cands    []Finding
		irFiles  = map[string][]*ir.File{} // by repository URL
		props    = map[string]*dataflow.Properties{}
		done     int
		lastPct  = 2
		total    = len(jobs) + len(in.TargetURLs)*10
		jobCh    = make(chan job)
		wg       sync.WaitGroup
		workers  = min(e.cfg.workers, max(len(jobs), 1))
		maxSize  = e.cfg.maxFileSize
		fileStep = func(j job, r fileResult) {
			mu.Lock()
			defer mu.Unlock()
			cands = append(cands, r.findings...)
			if r.ir != nil {
				irFiles[j.repo.URL] = append(irFiles[j.repo.URL], r.ir)
			}
			if r.config != nil {
				if props[j.repo.URL] == nil {
					props[j.repo.URL] = dataflow.NewProperties()
				}
				props[j.repo.URL].Add(r.config)
			}
			if r.skip != "" {
				st.FilesSkipped++
				st.SkippedReasons[r.skip]++
			} else {
				st.FilesAnalyzed++
				st.LinesAnalyzed += r.lines
			}
			done++
			if pct := 2 + done*88/max(total, 1); pct > lastPct {
				lastPct = pct
				progress(pct)
			}
		}
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := an.NewWorker()
			defer w.Close()
			for j := range jobCh {
				fileStep(j, analyzeFile(ctx, w, sec, j, maxSize))
			}
		}()
	}
feed:
	for _, j := range jobs {
		select {
		case jobCh <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobCh)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	// The dataflow analysis sees each repository whole: calls, fields and
	// constants are resolved across its files.
	for _, r := range in.Repos {
		files := irFiles[r.URL]
		if len(files) == 0 {
			continue
		}
		sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
		var pm map[string]string
		if p := props[r.URL]; p != nil {
			pm = p.Map()
		}
		fs, fst, err := an.Flow(ctx, files, pm, dataflow.Budget{})
		if err != nil {
			return Result{}, err
		}
		for i := range fs {
			fs[i].RepoURL = r.URL
		}
		cands = append(cands, fs...)
		st.Flow.Add(fst)
		irFiles[r.URL] = nil
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}

	if in.HTTPClient != nil && len(in.TargetURLs) > 0 {
		headers := live.ParseAuthHeaders(in.AuthInstructions)
		// Each probe runs under its share of the phase's budget (its
		// Timeout); the verification requests it makes later are one per
		// finding, each bounded by the client's own timeout.
		phaseEnd := live.PhaseEnd(ctx, e.cfg.liveBudget)
		perTarget := e.cfg.live.Timeout
		if e.cfg.live.MaxPages <= 0 || perTarget <= 0 {
			perTarget = live.DefaultLimits.Timeout
		}
		for i, u := range in.TargetURLs {
			lim := e.cfg.live
			if lim.MaxPages <= 0 {
				lim = live.DefaultLimits
			}
			lim.Timeout = live.TargetBudget(time.Until(phaseEnd), len(in.TargetURLs)-i, perTarget)
			if lim.Timeout <= 0 {
				e.cfg.logger.WarnContext(ctx, "live budget spent; target not probed", "target", live.SafeURL(u))
				continue
			}
			res, err := live.Probe(ctx, in.HTTPClient, u, headers, lim)
			st.TargetsProbed++
			st.LiveRequests += res.Requests
			if err != nil {
				if ctx.Err() != nil {
					return Result{}, ctx.Err()
				}
				// The HTTP client's errors quote the URL it requested, query
				// string and userinfo included: both are dropped from the log.
				e.cfg.logger.WarnContext(ctx, "live target probe failed", "target", live.SafeURL(u), "error", redact.Error(err, redact.URL, u))
			}
			cands = append(cands, res.Findings...)
			mu.Lock()
			done += 10
			if pct := 2 + done*88/max(total, 1); pct > lastPct {
				lastPct = pct
				progress(pct)
			}
			mu.Unlock()
		}
	}

	primary := ""
	for _, r := range in.Repos {
		if r.Primary {
			primary = r.URL
		}
	}
	dirs := map[string]string{}
	for _, r := range in.Repos {
		dirs[r.URL] = r.Dir
	}
	for i := range cands {
		c := &cands[i]
		if c.RepoURL == "" && c.Reproduce == nil {
			c.RepoURL = primary
		}
		c.Fingerprint = finding.ComputeFingerprint(c.RuleID, c.RepoURL, c.AffectedFile, c.FingerprintKey)
	}
	st.Candidates = len(cands)
	drop := map[string]bool{}
	for _, r := range an.Rules() {
		if r.DropInTests {
			drop[r.ID] = true
		}
	}
	out, vs := verify.Run(ctx, cands, verify.Options{Dirs: dirs, DropInTests: drop})
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	st.Confirmed, st.Held, st.Merged, st.DroppedInTests = vs.Confirmed, vs.Unconfirmed, vs.Merged, vs.DroppedTests
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ra, rb := vocab.Severity(a.Severity).Rank(), vocab.Severity(b.Severity).Rank(); ra != rb {
			return ra > rb
		}
		if a.AffectedFile != b.AffectedFile {
			return a.AffectedFile < b.AffectedFile
		}
		return a.StartLine < b.StartLine
	})
	for i := range out {
		out[i].FingerprintKey = ""
	}
	st.Duration = time.Since(start)
	progress(100)
	e.cfg.logger.InfoContext(ctx, "scan engine run finished", "files", st.FilesAnalyzed, "skipped", st.FilesSkipped,
		"flow_functions", st.Flow.Functions, "flow_over_budget", st.Flow.OverBudget, "flow_not_analyzed", st.Flow.NotAnalyzed,
		"findings", len(out), "duration", st.Duration)
	return Result{Findings: out, Stats: st}, nil
}

func analyzeFile(ctx context.Context, w *sast.Worker, sec *secrets.Scanner, j job, maxSize int64) fileResult {
	fi, err := os.Lstat(j.full)
	if err != nil || !fi.Mode().IsRegular() {
		return fileResult{skip: "unreadable"}
	}
	if fi.Size() > maxSize {
		return fileResult{skip: "too_large"}
	}
	data, err := os.ReadFile(j.full)
	if err != nil {
		return fileResult{skip: "unreadable"}
	}
	if isBinary(data) {
		return fileResult{skip: "binary"}
	}
	if isGenerated(data) {
		return fileResult{skip: "generated"}
	}
	minified := isMinified(data)
	var out []Finding
	lines := bytes.Count(data, []byte{'\n'}) + 1
	if !minified {
		out = append(out, sec.Scan(j.rel, data)...)
	}
	var lowered *ir.File
	var config []byte
	if sast.Language(j.rel) != "" {
		if minified {
			return fileResult{findings: out, skip: "minified"}
		}
		p, err := w.Prepare(ctx, j.rel, data)
		if err != nil {
			return fileResult{findings: out, skip: sast.SkipReason(err)}
		}
		out = append(out, p.Findings...)
		lowered = p.IR
	} else if dataflow.IsConfigFile(j.rel) {
		config = data
	} else if kind := iac.Kind(j.rel, data); kind != "" {
		out = append(out, iac.Check(kind, j.rel, data)...)
	}
	for i := range out {
		out[i].RepoURL = j.repo.URL
		if out[i].Category == "secrets" {
			out[i].AffectedCode = redactLiterals(out[i].AffectedCode)
		}
	}
	return fileResult{findings: out, ir: lowered, config: config, lines: lines}
}

var literal = regexp.MustCompile("([\"'`])([^\"'`\\s]{4,})([\"'`])")

// redactLiterals keeps a short prefix of every quoted literal in a secrets
// snippet, so that no credential is stored in full.
func redactLiterals(s string) string {
	return literal.ReplaceAllStringFunc(s, func(m string) string {
		q := m[:1]
		inner := m[1 : len(m)-1]
		if strings.HasSuffix(inner, "********") {
			return m
		}
		return q + finding.Redact(inner) + m[len(m)-1:]
	})
}

var skipDirs = map[string]bool{".git": true, "node_modules": true, "vendor": true, "third_party": true, "bower_components": true,
	"__pycache__": true, ".venv": true, "venv": true, ".tox": true, "dist": true, ".next": true, ".idea": true, ".gradle": true,
	"target": true, "site-packages": true, ".terraform": true}

var generatedName = regexp.MustCompile(`(\.min\.(js|css)$|\.pb\.go$|_generated\.go$|\.generated\.|^zz_generated|\.pb\.gw\.go$|_pb2(_grpc)?\.py$|(^|/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|go\.sum|Cargo\.lock|poetry\.lock)$|\.(png|jpe?g|gif|ico|pdf|zip|gz|tgz|jar|class|so|dll|exe|woff2?|ttf|eot|mp4|mp3|wasm)$)`)

func collect(ctx context.Context, r Repo, excl *exclude.Matcher) ([]job, map[string]int, error) {
	skipped := map[string]int{}
	var jobs []job
	root := filepath.Clean(r.Dir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			skipped["unreadable"]++
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p == root {
				return nil
			}
			if skipDirs[d.Name()] {
				return fs.SkipDir
			}
			if excl.Match(rel) {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case !d.Type().IsRegular():
			skipped["not_regular"]++
		case excl.Match(rel):
			skipped["excluded"]++
		case generatedName.MatchString(rel):
			if strings.Contains(rel, ".min.") || strings.Contains(rel, "generated") || strings.HasSuffix(rel, ".pb.go") {
				skipped["generated"]++
			} else {
				skipped["binary_or_lock"]++
			}
		default:
			jobs = append(jobs, job{repo: r, rel: rel, full: p})
		}
		return nil
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return nil, nil, err
	}
	return jobs, skipped, ctx.Err()
}

func isBinary(data []byte) bool {
	head := data[:min(len(data), 8000)]
	return bytes.IndexByte(head, 0) >= 0
}

var generatedMarker = regexp.MustCompile(`(?m)^(//|#|/\*|\s\*)\s*(Code generated .* DO NOT EDIT|@generated|This file was automatically generated)`)

func isGenerated(data []byte) bool {
	return generatedMarker.Match(data[:min(len(data), 2048)])
}

// isMinified reports bundles and minified files: very long lines on average.
func isMinified(data []byte) bool {
	if len(data) < 2000 {
		return false
	}
	lines := bytes.Count(data, []byte{'\n'}) + 1
	if len(data)/lines > 500 {
		return true
	}
	return !bytes.Contains(data[:min(len(data), 64<<10)], []byte("\n"))
}
