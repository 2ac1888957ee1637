// Command edgebench measures vulnscan's hot paths through the real
// processes beside their direct floors, in the same run, and prints a
// side-by-side table (make bench-edge; make bench-edge QUICK=1 for a
// smaller, shorter run).
//
// It starts the whole system with pkg/systest on a private database, seeds
// the findings schema, and drives each path with a closed-loop load
// generator (a fixed number of clients, each sending its next request when
// the previous one is answered) after a warm-up, at concurrency 1 and 32:
//
//   - GET /v1/credits, against a floor that checks the key in an
//     in-process cache and reads the balance with one pgx query;
//   - the findings list (page 1, page 1000, severity=high&state=open&
//     sort_by=severity, and a scan's findings list) over the seeded
//     findings, against a floor running the findings store's own list
//     queries with pgx;
//   - intake through ReportFindings in batches of 100, against a direct
//     batched insert (COPY) of the same rows.
//
// The floor runs in a process of its own (this binary with -floor). For
// every row the table gives requests per second, p50 and p99 latency and
// the heap allocations per request of each process on the path, read from
// their metrics listeners before and after the measured window, and the
// ratio of the system's throughput to the floor's.
//
// With -scans it also starts 8 scans of a small repository at once (one
// organization each) and reports the time to the last completed scan
// against one scan alone, with the number of worker slots in use.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

func main() {
	floorAddr := flag.String("floor", "", "internal: serve the floor on this address")
	quick := flag.Bool("quick", false, "smaller and shorter: 100,000 findings, 3 s windows")
	only := flag.String("only", "credits,list,intake,scans", "comma-separated parts to run")
	findings := flag.Int("findings", 0, "findings to seed (default 1,000,000; 100,000 with -quick)")
	dur := flag.Duration("duration", 0, "measured window of each row (default 8s; 3s with -quick)")
	warm := flag.Duration("warmup", 0, "warm-up before each window (default 2s; 1s with -quick)")
	cpuProfile := flag.String("profile", "", "write CPU and allocation profiles of every process, taken under the c=32 load, to this directory")
	var env envFlags
	flag.Var(&env, "env", "KEY=VALUE added to every process's environment (repeatable), to compare settings")
	flag.Parse()
	if *floorAddr != "" {
		if err := serveFloor(*floorAddr); err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(1)
		}
		return
	}
	cfg := benchConfig{findings: 1_000_000, dur: 8 * time.Second, warm: 2 * time.Second, profileDir: *cpuProfile}
	if *quick {
		cfg.findings, cfg.dur, cfg.warm = 100_000, 3*time.Second, time.Second
	}
	if *findings > 0 {
		cfg.findings = *findings
	}
	if *dur > 0 {
		cfg.dur = *dur
	}
	if *warm > 0 {
		cfg.warm = *warm
	}
	cfg.env = env
	cfg.parts = map[string]bool{}
	for _, p := range strings.Split(*only, ",") {
		cfg.parts[strings.TrimSpace(p)] = true
	}
	if err := run(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, "edgebench:", err)
		os.Exit(1)
	}
}

type benchConfig struct {
	findings   int
	dur, warm  time.Duration
	parts      map[string]bool
	profileDir string
	env        envFlags
}

// envFlags collects repeated -env KEY=VALUE flags.
type envFlags []string

func (e *envFlags) String() string { return strings.Join(*e, " ") }

func (e *envFlags) Set(v string) error {
	if !strings.Contains(v, "=") {
		return fmt.Errorf("want KEY=VALUE, not %q", v)
	}
	*e = append(*e, v)
	return nil
}

// startFloor starts this binary as the floor server on addr with the
// administrator's database URL.
func startFloor(addr, dbURL string) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-floor", addr)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd, cmd.Start()
}
