package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vulnscan/vulnscan/pkg/archive"
	"github.com/vulnscan/vulnscan/pkg/client"
	"github.com/vulnscan/vulnscan/pkg/engine"
	"github.com/vulnscan/vulnscan/pkg/engine/finding"
	"github.com/vulnscan/vulnscan/pkg/sarif"

	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// pollEvery is how often estimations and scans are polled.
const pollEvery = 2 * time.Second

// target is what a scan or an estimation names: a directory to upload or
// a repository.
type target struct {
	dir, repo, branch, source, base, baseCommit string
	pullRequest                                 int
}

func targetFlags(fs *flag.FlagSet, t *target) {
	fs.StringVar(&t.repo, "repo", "", "HTTPS URL of a repository to scan instead of a directory")
	fs.StringVar(&t.branch, "branch", "", "branch of --repo (default: the repository's default branch)")
	fs.StringVar(&t.source, "source", "connected", "kind of --repo: connected (synced through an integration) or public")
	fs.StringVar(&t.base, "base", "", "base branch: scan only what the branch changes against it (a pull-request scan)")
	fs.StringVar(&t.baseCommit, "base-commit", "", "commit of the base branch to compare with instead of its tip (with --base)")
	fs.IntVar(&t.pullRequest, "pull-request", 0, "pull request number on the git host, for review comments (with --base)")
}

func (t *target) resolve(pos []string) error {
	switch {
	case len(pos) > 1:
		return usagef("one directory at most, got %q", strings.Join(pos, " "))
	case len(pos) == 1 && t.repo != "":
		return usagef("give a directory or --repo, not both")
	case len(pos) == 1:
		t.dir = pos[0]
	case t.repo == "":
		t.dir = "."
	}
	if t.repo == "" && t.branch != "" {
		return usagef("--branch needs --repo")
	}
	if t.repo == "" && t.base != "" {
		return usagef("--base needs --repo: an uploaded directory has no history to compare with, so it is scanned in full")
	}
	if t.base == "" && (t.baseCommit != "" || t.pullRequest != 0) {
		return usagef("--base-commit and --pull-request need --base")
	}
	return oneOf("source", t.source, string(vocab.SourceConnected), string(vocab.SourcePublic))
}

// entry uploads the directory when there is one and returns the
// estimation entry and the scan's repo object.
func (t *target) entry(ctx context.Context, c *client.Client, p *progress) (client.EstimationRepo, client.ScanRepo, error) {
	if t.repo != "" {
		return client.EstimationRepo{Source: t.source, RepoURL: t.repo, Branch: t.branch, BaseBranch: t.base, BaseCommit: t.baseCommit, PullRequest: t.pullRequest},
			client.ScanRepo{URL: t.repo, Branch: t.branch, Source: t.source}, nil
	}
	pk, err := pack(t.dir)
	if err != nil {
		return client.EstimationRepo{}, client.ScanRepo{}, err
	}
	p.line("Packed %d files from %s (%d KiB; %d ignored by .gitignore, %d links or special files left out)", pk.files, t.dir, len(pk.data)>>10, pk.ignored, pk.skipped)
	up, err := c.Upload(ctx, pk.data, archive.TypeTarGz)
	if err != nil {
		return client.EstimationRepo{}, client.ScanRepo{}, err
	}
	p.line("Uploaded as %s", up.RepoURL)
	return client.EstimationRepo{Source: string(vocab.SourceUpload), RepoURL: up.RepoURL},
		client.ScanRepo{URL: up.RepoURL, Branch: "", Source: string(vocab.SourceUpload)}, nil
}

// estimate uploads the directory when there is one, creates an estimation
// of the target and waits until it is terminal; it returns the estimation
// and the scan's repo object. A failed estimation is an error carrying the
// repository's reason.
func (t *target) estimate(ctx context.Context, c *client.Client, p *progress) (client.Estimation, client.ScanRepo, error) {
	entry, repo, err := t.entry(ctx, c, p)
	if err != nil {
		return client.Estimation{}, repo, err
	}
	est, err := waitEstimation(ctx, c, p, entry)
	return est, repo, err
}

// waitEstimation creates an estimation of entry and waits until it is terminal.
func waitEstimation(ctx context.Context, c *client.Client, p *progress, entry client.EstimationRepo) (client.Estimation, error) {
	est, err := c.CreateEstimation(ctx, []client.EstimationRepo{entry})
	if err != nil {
		return est, err
	}
	p.line("Estimation %s %s", est.ID, est.Status)
	for !est.Terminal() {
		if err := client.Sleep(ctx, pollEvery); err != nil {
			return est, err
		}
		if est, err = c.GetEstimation(ctx, est.ID); err != nil {
			return est, err
		}
	}
	if est.Status == "failed" {
		var why []string
		for _, r := range est.RepoResults {
			if r.Error != "" {
				why = append(why, r.RepoURL+": "+r.Error)
			}
		}
		return est, fmt.Errorf("the estimation %s failed: %s", est.ID, strings.Join(why, "; "))
	}
	p.line("Estimation %s %s: %d credits", est.ID, est.Status, est.TotalCredits)
	return est, nil
}

func scanCmd(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("scan")
	var t target
	targetFlags(fs, &t)
	var targets multi
	fs.Var(&targets, "target-url", "public live URL to test as well (repeatable)")
	wait := fs.Bool("wait", false, "wait for the scan to finish and print its findings")
	failOn := fs.String("fail-on", "", "exit 1 when an open finding is at or above this severity (implies --wait)")
	sarifPath := fs.String("sarif", "", "write the findings as SARIF 2.1.0 to this file (implies --wait)")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout instead of a table")
	local := fs.Bool("local", false, "scan DIR on this machine with no server")
	timeout := fs.Duration("timeout", 2*time.Hour, "give up waiting after this long")
	pos, err := flags(fs, args)
	if err != nil {
		return err
	}
	if err := t.resolve(pos); err != nil {
		return err
	}
	if err := oneOf("fail-on", *failOn, severities...); err != nil {
		return err
	}
	if *timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	p := newProgress(e)
	o := outcome{failOn: *failOn, sarifPath: *sarifPath, asJSON: *asJSON}
	if *local {
		if t.repo != "" || len(targets) > 0 || t.base != "" {
			return usagef("--local scans a directory: --repo, --base and --target-url need the server")
		}
		return localScan(ctx, t.dir, o, p, e)
	}
	c, err := newClient(e)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	est, repo, err := t.estimate(ctx, c, p)
	if err != nil {
		return err
	}
	if est.TotalCredits == 0 {
		// Nothing to scan is a clean result: an empty log, exit 0.
		p.line("No application was detected: nothing to scan")
		o.scanID, o.status = "", "not_started"
		return o.finish(nil, nil, e)
	}
	if len(est.RepoResults) > 0 && repo.Branch == "" && repo.Source != string(vocab.SourceUpload) {
		repo.Branch = est.RepoResults[0].Branch
	}
	sc, err := c.StartScan(ctx, client.StartScan{CostEstimationID: est.ID, Repos: []client.ScanRepo{repo}, TargetURLs: targets})
	if err != nil {
		return err
	}
	p.line("Scan %s started (%d credits)", sc.ID, est.TotalCredits)
	o.scanID, o.status = sc.ID, sc.Status
	if !*wait && *failOn == "" && *sarifPath == "" {
		if *asJSON {
			return json.NewEncoder(e.stdout).Encode(map[string]any{"scan_id": sc.ID, "status": sc.Status, "cost_estimation_id": est.ID})
		}
		_, _ = fmt.Fprintln(e.stdout, sc.ID)
		return nil
	}
	for {
		st, err := c.GetScanStatus(ctx, sc.ID)
		if err != nil {
			return err
		}
		p.bar("Scan "+sc.ID, st.Status, st.Progress)
		if st.Status == "completed" || st.Status == "failed" {
			break
		}
		if err := client.Sleep(ctx, pollEvery); err != nil {
			p.clear()
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("scan %s did not finish within --timeout %s (it goes on on the server)", sc.ID, *timeout)
			}
			return err
		}
	}
	p.clear()
	details, err := c.GetScan(ctx, sc.ID)
	if err != nil {
		return err
	}
	o.status, o.scanType = details.Status, details.ScanType
	if details.Status == "failed" {
		msg := "no reason given"
		if details.Error != nil {
			msg = *details.Error
		}
		return fmt.Errorf("scan %s failed: %s", sc.ID, msg)
	}
	fs2, err := c.AllFindings(ctx, client.FindingQuery{ScanID: sc.ID, SortBy: "severity", SortOrder: "DESC"})
	if err != nil {
		return err
	}
	var log []byte
	if *sarifPath != "" {
		var buf bytes.Buffer
		if err := c.Export(ctx, sc.ID, "sarif", &buf); err != nil {
			return err
		}
		log = buf.Bytes()
	}
	return o.finish(fs2, log, e)
}

// outcome is how a finished scan is reported.
type outcome struct {
	failOn, sarifPath        string
	asJSON                   bool
	scanID, status, scanType string
	local                    bool
}

// blocking are the states in which a finding fails a build: triaged away
// (false positive, accepted risk) or resolved findings never do.
var blocking = map[string]bool{string(vocab.Open): true, string(vocab.TruePositive): true}

// finish writes the SARIF log (sarif: the server's export; nil: an empty
// log), prints the findings and applies --fail-on.
func (o outcome) finish(fs []client.Finding, log []byte, e env) error {
	if o.sarifPath != "" {
		if log == nil {
			var buf bytes.Buffer
			if err := sarif.Write(&buf, nil); err != nil {
				return err
			}
			log = buf.Bytes()
		}
		if err := writeFile(o.sarifPath, log); err != nil {
			return err
		}
	}
	counts := map[string]int{}
	failing := 0
	for _, f := range fs {
		counts[f.Severity]++
		if o.failOn != "" && blocking[f.State] && severityRank(f.Severity) >= severityRank(o.failOn) {
			failing++
		}
	}
	if o.asJSON {
		if fs == nil {
			fs = []client.Finding{}
		}
		out := map[string]any{"status": o.status, "findings": fs, "counts": counts, "fail_on": o.failOn, "failing": failing}
		if o.local {
			out["local"] = true
		} else {
			out["scan_id"], out["scan_type"] = o.scanID, o.scanType
		}
		if err := json.NewEncoder(e.stdout).Encode(out); err != nil {
			return err
		}
	} else {
		printFindings(e.stdout, fs)
		var parts []string
		for _, s := range severities {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
		_, _ = fmt.Fprintf(e.stdout, "%d findings: %s\n", len(fs), strings.Join(parts, ", "))
	}
	if failing > 0 {
		return findingsError{failing}
	}
	return nil
}

func printFindings(w io.Writer, fs []client.Finding) {
	if len(fs) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "SEVERITY\tSTATE\tLOCATION\tTITLE\tID")
	for _, f := range fs {
		loc := shown(f.AffectedFile, false)
		if f.Line != nil && *f.Line > 0 {
			loc = fmt.Sprintf("%s:%d", loc, *f.Line)
		}
		id := f.ID
		if id == "" {
			id = "-"
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Severity, f.State, loc, shown(f.Title, false), id)
	}
	_ = tw.Flush()
}

// writeFile writes data to path through a temporary file in the same
// directory, so a reader never sees half a log.
func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// localScan packs dir exactly as an upload would be packed, unpacks it
// through the server's own archive checks, and runs the scan engine on it
// with the identity the scan service gives an upload of the same content,
// so fingerprints, rule ids, files and lines match a server scan of the
// same tree. Only findings that automated verification confirms are
// reported: those a server with the default `auto` verification approves.
func localScan(ctx context.Context, dir string, o outcome, p *progress, e env) error {
	o.local, o.status = true, "completed"
	pk, err := pack(dir)
	if err != nil {
		return err
	}
	p.line("Packed %d files from %s (%d ignored by .gitignore, %d links or special files left out)", pk.files, dir, pk.ignored, pk.skipped)
	work, err := os.MkdirTemp("", "vulnscan-local-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()
	sum, err := archive.Extract(bytes.NewReader(pk.data), int64(len(pk.data)), archive.TypeTarGz, work, archive.DefaultLimits)
	if err != nil {
		return err
	}
	eng := engine.New(engine.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	res, err := eng.Run(ctx, engine.Input{Repos: []engine.Repo{{URL: archive.ContentIdentity(sum.ContentHash), Dir: work, CommitSHA: sum.ContentHash, Primary: true}}},
		func(pct int) { p.bar("Local scan", "running", pct) })
	p.clear()
	if err != nil {
		return err
	}
	type pair struct {
		api   client.Finding
		sarif sarif.Finding
	}
	var found []pair
	for _, f := range res.Findings {
		if !f.Confirmed {
			continue
		}
		f = finding.ReportText(f) // as a server scan reports it
		sf := sarif.Finding{Title: f.Title, Category: f.Category, Severity: f.Severity, State: string(vocab.Open),
			Description: finding.ReportDescription(f), AffectedFile: f.AffectedFile, AffectedCode: f.AffectedCode,
			Tags: finding.ReportTags(f), StartLine: int32(f.StartLine), EndLine: int32(f.EndLine), Fingerprint: f.Fingerprint}
		cf := client.Finding{Title: sf.Title, Category: sf.Category, Severity: sf.Severity, State: sf.State, Description: sf.Description,
			AffectedFile: sf.AffectedFile, AffectedCode: sf.AffectedCode, ProofOfConcept: f.ProofOfConcept, Tags: sf.Tags,
			MermaidTrace: f.MermaidTrace, Fingerprint: sf.Fingerprint}
		if f.StartLine > 0 {
			line := f.StartLine
			cf.Line = &line
		}
		found = append(found, pair{cf, sf})
	}
	// Most severe first, as the server lists them; then by place.
	sort.SliceStable(found, func(i, j int) bool {
		a, b := found[i].sarif, found[j].sarif
		if ra, rb := severityRank(a.Severity), severityRank(b.Severity); ra != rb {
			return ra > rb
		}
		if a.AffectedFile != b.AffectedFile {
			return a.AffectedFile < b.AffectedFile
		}
		if a.StartLine != b.StartLine {
			return a.StartLine < b.StartLine
		}
		return a.Fingerprint < b.Fingerprint
	})
	fs := make([]client.Finding, 0, len(found))
	sortedS := make([]sarif.Finding, 0, len(found))
	for _, x := range found {
		fs, sortedS = append(fs, x.api), append(sortedS, x.sarif)
	}
	var log []byte
	if o.sarifPath != "" {
		var buf bytes.Buffer
		if err := sarif.Write(&buf, sortedS); err != nil {
			return err
		}
		log = buf.Bytes()
	}
	p.line("Local scan: %d files, %d lines analysed, %d findings confirmed (%d held back as unconfirmed)", res.Stats.FilesAnalyzed, res.Stats.LinesAnalyzed, len(fs), res.Stats.Held)
	return o.finish(fs, log, e)
}
