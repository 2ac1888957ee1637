package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/systest"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// concurrencies are the numbers of clients every row is measured with.
var concurrencies = []int{1, 32}

// row is one line of the table: a path at one concurrency, through the
// system and through its floor.
type row struct {
	path      string
	conc      int
	sys, flr  result
	sysProcs  []string // processes on the system's path, for allocations
	perItem   int64    // items per request (100 for intake batches)
	itemsName string
}

func run(ctx context.Context, cfg benchConfig) error {
	env := map[string]string{
		// The per-key rate limit would cap the load at its burst; the
		// limiter still runs (one Redis call per request) at this rate.
		"VULNSCAN_RATE_LIMIT": "1000000:1000000",
		"VULNSCAN_PPROF":      "1",
	}
	for _, kv := range cfg.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	sys, err := systest.Start(systest.Options{Env: env})
	if err != nil {
		return fmt.Errorf("start system: %w", err)
	}
	defer sys.Stop()
	org, err := sys.NewOrg(1000, "auto")
	if err != nil {
		return fmt.Errorf("organization: %w", err)
	}
	pool, err := pgxpool.New(ctx, sys.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()

	floorAddr, err := freeAddr()
	if err != nil {
		return err
	}
	fl, err := startFloor(floorAddr, sys.DatabaseURL)
	if err != nil {
		return fmt.Errorf("start floor: %w", err)
	}
	defer func() { _ = fl.Process.Kill(); _ = fl.Wait() }()
	if err := waitHTTP("http://" + floorAddr + "/metrics"); err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	floorURL := "http://" + floorAddr + "/v1"

	var rows []row
	measure := func(path string, procs []string, sysDo, floorDo func(context.Context, int, int64) error, floorProcs map[string]string) {
		for _, c := range concurrencies {
			r := row{path: path, conc: c, sysProcs: procs}
			fmt.Printf("  %s, concurrency %d: system", path, c)
			addrs := map[string]string{}
			for _, p := range procs {
				addrs[p] = sys.Metrics[p]
			}
			var prof *profiler
			if cfg.profileDir != "" && c == concurrencies[len(concurrencies)-1] {
				prof = &profiler{dir: filepath.Join(cfg.profileDir, slug(path)), addrs: addrs, seconds: max(1, int(cfg.dur.Seconds())-1)}
			}
			r.sys = measureAllocs(ctx, c, cfg, sysDo, addrs, prof)
			fmt.Printf(" %.0f/s; floor", r.sys.rps())
			r.flr = measureAllocs(ctx, c, cfg, floorDo, floorProcs, nil)
			fmt.Printf(" %.0f/s\n", r.flr.rps())
			rows = append(rows, r)
		}
	}
	floorProcs := map[string]string{"floor": floorAddr}

	if cfg.parts["credits"] {
		client := newClient(64)
		measure("GET /v1/credits", []string{"gateway", "auth"},
			httpGet(client, org.ReadKey, func(int64) string { return sys.BaseURL + "/credits" }),
			httpGet(client, org.ReadKey, func(int64) string { return floorURL + "/credits" }), floorProcs)
	}
	if cfg.parts["list"] {
		scan, err := seedFindings(ctx, pool, org.ID, cfg.findings)
		if err != nil {
			return err
		}
		client := newClient(64)
		for _, q := range []struct{ name, path string }{
			{"GET /v1/findings?page=1", "/findings?page=1"},
			{"GET /v1/findings?page=1000", "/findings?page=1000"},
			{"GET /v1/findings?severity=high&state=open&sort_by=severity", "/findings?severity=high&state=open&sort_by=severity"},
			{"GET /v1/scans/{id}/findings", "/scans/" + scan + "/findings"},
		} {
			measure(q.name, []string{"gateway", "findings"},
				httpGet(client, org.ReadKey, func(int64) string { return sys.BaseURL + q.path }),
				httpGet(client, org.ReadKey, func(int64) string { return floorURL + q.path }), floorProcs)
		}
	}
	if cfg.parts["intake"] {
		cc, err := sys.Dial("findings", mtls.Scan, false)
		if err != nil {
			return err
		}
		defer func() { _ = cc.Close() }()
		intake := findingsv1.NewFindingsIntakeServiceClient(cc)
		n := concurrencies[len(concurrencies)-1]
		sysScans, err := intakeScans(ctx, intake, org.ID, n)
		if err != nil {
			return err
		}
		floorScans, err := intakeScans(ctx, intake, org.ID, n)
		if err != nil {
			return err
		}
		repos := make([]string, n)
		for w, id := range floorScans {
			if err := pool.QueryRow(ctx, `SELECT repo_key FROM findings.scans WHERE id = $1`, id).Scan(&repos[w]); err != nil {
				return err
			}
		}
		// Every run gets its own fingerprints, so every finding is new.
		var round int
		for _, c := range concurrencies {
			round++
			r := row{path: "ReportFindings (100 per batch)", conc: c, sysProcs: []string{"findings"}, perItem: batchSize, itemsName: "findings"}
			fmt.Printf("  %s, concurrency %d: system", r.path, c)
			var prof *profiler
			if cfg.profileDir != "" && c == n {
				prof = &profiler{dir: filepath.Join(cfg.profileDir, "intake"), addrs: map[string]string{"findings": sys.Metrics["findings"]}, seconds: max(1, int(cfg.dur.Seconds())-1)}
			}
			r.sys = measureAllocs(ctx, c, cfg, reportVia(intake, sysScans, fmt.Sprintf("sys%d", round)), map[string]string{"findings": sys.Metrics["findings"]}, prof)
			fmt.Printf(" %.0f findings/s; floor", r.sys.rps()*batchSize)
			r.flr = measureAllocs(ctx, c, cfg, insertDirect(pool, org.ID, floorScans, repos, fmt.Sprintf("floor%d", round)), nil, nil)
			fmt.Printf(" %.0f findings/s\n", r.flr.rps()*batchSize)
			rows = append(rows, r)
		}
	}
	if len(rows) > 0 {
		fmt.Println()
		fmt.Print(table(rows, cfg))
	}
	if cfg.parts["scans"] {
		if err := parallelScans(ctx, sys); err != nil {
			return err
		}
	}
	return nil
}

// measureAllocs runs one closed loop and reads each process's allocation
// counter at the edges of its measured window.
func measureAllocs(ctx context.Context, conc int, cfg benchConfig, do func(context.Context, int, int64) error, procs map[string]string, prof *profiler) result {
	before, allocs := map[string]float64{}, map[string]float64{}
	r := closedLoop(ctx, conc, cfg.warm, cfg.dur, do, func() {
		for name, addr := range procs {
			before[name] = mallocs(addr)
		}
		if prof != nil {
			prof.start()
		}
	}, func() {
		for name, addr := range procs {
			allocs[name] = mallocs(addr) - before[name]
		}
		if prof != nil {
			prof.finish()
		}
	})
	r.allocs = allocs
	return r
}

// mallocs reads go_memstats_mallocs_total from a metrics listener.
func mallocs(addr string) float64 {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_mallocs_total "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}

// profiler takes a CPU profile of every process during the measured window
// and an allocation profile at its end, from their pprof endpoints.
type profiler struct {
	dir     string
	addrs   map[string]string
	seconds int
	wg      sync.WaitGroup
}

func (p *profiler) start() {
	_ = os.MkdirAll(p.dir, 0o755)
	for name, addr := range p.addrs {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			save(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, p.seconds), filepath.Join(p.dir, name+".cpu.pprof"))
		}()
	}
}

func (p *profiler) finish() {
	p.wg.Wait()
	for name, addr := range p.addrs {
		save("http://"+addr+"/debug/pprof/allocs", filepath.Join(p.dir, name+".allocs.pprof"))
	}
}

func save(url, file string) {
	resp, err := http.Get(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "profile %s: status %d\n", url, resp.StatusCode)
		return
	}
	f, err := os.Create(file)
	if err != nil {
		return
	}
	_, _ = io.Copy(f, resp.Body)
	_ = f.Close()
}

func slug(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

func waitHTTP(url string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			_ = resp.Body.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New(url + " did not answer")
}

// table renders the rows as a Markdown table.
func table(rows []row, cfg benchConfig) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d findings seeded; %s warm-up, %s measured per row; closed loop\n\n", cfg.findings, cfg.warm, cfg.dur)
	b.WriteString("| path | c | system req/s | p50 | p99 | floor req/s | p50 | p99 | req/s ratio | p99 ratio | allocs/req system | allocs/req floor |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n")
	for _, r := range rows {
		sysRate, flrRate := fmt.Sprintf("%.0f", r.sys.rps()), fmt.Sprintf("%.0f", r.flr.rps())
		if r.perItem > 0 {
			sysRate = fmt.Sprintf("%.0f (%.0f %s/s)", r.sys.rps(), r.sys.rps()*float64(r.perItem), r.itemsName)
			flrRate = fmt.Sprintf("%.0f (%.0f %s/s)", r.flr.rps(), r.flr.rps()*float64(r.perItem), r.itemsName)
		}
		var sysAllocs []string
		for _, p := range r.sysProcs {
			if r.sys.n > 0 {
				sysAllocs = append(sysAllocs, fmt.Sprintf("%s %.0f", p, r.sys.allocs[p]/float64(r.sys.n)))
			}
		}
		flrAllocs := "-"
		if v, ok := r.flr.allocs["floor"]; ok && r.flr.n > 0 {
			flrAllocs = fmt.Sprintf("%.0f", v/float64(r.flr.n))
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %.2f× | %.2f× | %s | %s |\n", r.path, r.conc,
			sysRate, ms(r.sys.p50), ms(r.sys.p99), flrRate, ms(r.flr.p50), ms(r.flr.p99),
			ratio(r.sys.rps(), r.flr.rps()), ratio(float64(r.sys.p99), float64(r.flr.p99)), strings.Join(sysAllocs, ", "), flrAllocs)
	}
	return b.String()
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
