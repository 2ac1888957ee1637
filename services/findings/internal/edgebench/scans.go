package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

// smallRepo is the repository every scan of the benchmark scans: a small
// Flask application with an SQL injection and a command injection, plus a
// few more files in other languages.
var smallRepo = map[string]string{
	"app.py": systest.FlaskApp,
	"server.js": `const express = require('express');
const { exec } = require('child_process');
const app = express();
app.get('/run', (req, res) => { exec('ls ' + req.query.dir, (e, out) => res.send(out)); });
app.get('/go', (req, res) => { res.redirect(req.query.next); });
app.listen(3000);
`,
	"main.go": `package main

import (
	"database/sql"
	"net/http"
	"slices"
)

var db *sql.DB

func handler(w http.ResponseWriter, r *http.Request) {
	rows, _ := db.Query("SELECT * FROM users WHERE id = " + r.URL.Query().Get("id"))
	defer rows.Close()
}

func main() { http.HandleFunc("/", handler); _ = http.ListenAndServe(":8080", nil) }
`,
}

// scanRun is one organization's prepared scan.
type scanRun struct {
	key, est, repo, id string
}

// parallelScans measures one scan alone, then 8 scans (one organization
// each, so that the per-organization running limit does not serialize
// them) started at once, and prints the time to the last completed scan
// and the most scans seen running at once.
func parallelScans(ctx context.Context, sys *systest.System) error {
	fmt.Println()
	one, err := scansAtOnce(ctx, sys, 1)
	if err != nil {
		return err
	}
	eight, err := scansAtOnce(ctx, sys, 8)
	if err != nil {
		return err
	}
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	fmt.Println("| scans started at once | time to the last completed | ratio | most running at once | longest wait for a slot | run time (median, longest) |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|")
	for _, b := range []scanBatch{one, eight} {
		fmt.Printf("| %d | %s | %.2f× | %d | %s | %s, %s |\n", b.n, ms(b.total), b.total.Seconds()/one.total.Seconds(), b.most,
			ms(b.wait), ms(b.runs[len(b.runs)/2]), ms(b.runs[len(b.runs)-1]))
	}
	return nil
}

// scanBatch is what one batch of scans started at once measured: the time
// to the last completed scan, the most seen running at once, the longest a
// scan waited from its start request until a worker took it (the scan's
// started_at) and each scan's own run time (started_at to completed_at),
// sorted.
type scanBatch struct {
	n           int
	total, wait time.Duration
	most        int
	runs        []time.Duration
}

// phases reads every scan's started_at and completed_at into b.
func (b *scanBatch) phases(sys *systest.System, runs []*scanRun, start time.Time) error {
	for _, r := range runs {
		resp, err := sys.Do("GET", "/scans/"+r.id, r.key, nil)
		if err != nil {
			return err
		}
		body := resp.JSON()
		started, err1 := time.Parse(time.RFC3339Nano, fmt.Sprint(body["started_at"]))
		completed, err2 := time.Parse(time.RFC3339Nano, fmt.Sprint(body["completed_at"]))
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("scan %s times: %w", r.id, err)
		}
		b.wait = max(b.wait, started.Sub(start))
		b.runs = append(b.runs, completed.Sub(started))
	}
	slices.Sort(b.runs)
	return nil
}

// scansAtOnce prepares n organizations with an estimated upload each, then
// starts their scans together and polls until every one is completed.
func scansAtOnce(ctx context.Context, sys *systest.System, n int) (scanBatch, error) {
	runs := make([]*scanRun, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i], errs[i] = prepareScan(ctx, sys)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return scanBatch{}, err
		}
	}
	start := time.Now()
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := sys.Do("POST", "/scans", r.key, systest.UploadScan(r.est, r.repo))
			if err == nil && resp.Status != http.StatusCreated {
				err = fmt.Errorf("start scan: %d %s", resp.Status, resp.Body)
			}
			if err == nil {
				r.id, _ = resp.JSON()["id"].(string)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return scanBatch{}, err
		}
	}
	most := 0
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		done, running := 0, 0
		for _, r := range runs {
			resp, err := sys.Do("GET", "/scans/"+r.id+"/status", r.key, nil)
			if err != nil {
				return scanBatch{}, err
			}
			switch st, _ := resp.JSON()["status"].(string); st {
			case "completed":
				done++
			case "running":
				running++
			case "failed", "cancelled", "partial":
				return scanBatch{}, fmt.Errorf("scan %s ended %s: %s", r.id, st, resp.Body)
			}
		}
		most = max(most, running)
		if done == n {
			b := scanBatch{n: n, total: time.Since(start), most: max(most, 1)}
			return b, b.phases(sys, runs, start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return scanBatch{}, fmt.Errorf("%d scans did not complete within 5 minutes", n)
}

// prepareScan creates an organization, uploads the small repository and
// estimates it.
func prepareScan(ctx context.Context, sys *systest.System) (*scanRun, error) {
	org, err := sys.NewOrg(1000, "auto")
	if err != nil {
		return nil, err
	}
	r := &scanRun{key: org.WriteKey}
	if r.repo, err = sys.UploadFiles(ctx, r.key, smallRepo); err != nil {
		return nil, err
	}
	est, err := sys.EstimateUpload(ctx, r.key, r.repo)
	if err != nil {
		return nil, err
	}
	if est["status"] != "completed" {
		return nil, fmt.Errorf("estimation %v: %v", est["status"], est)
	}
	r.est, _ = est["id"].(string)
	return r, nil
}
