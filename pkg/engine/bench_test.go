package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vulnscan/vulnscan/pkg/engine/dataflow"
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/sast"
	"github.com/vulnscan/vulnscan/pkg/engine/secrets"
)

// Function templates per language: ordinary code with one request-to-sink
// flow every few functions, roughly ten lines each.
var benchTemplates = map[string]string{
	"py": `
def handler_%[1]d(db, limit):
    name = request.args.get("name%[1]d")
    items = []
    for i in range(limit):
        items.append({"id": i, "label": "item %%d" %% i})
    total = sum(x["id"] for x in items)
    query = "SELECT * FROM t%[1]d WHERE name = '" + name + "'"
    if total > 10:
        db.execute(query)
    return {"total": total, "count": len(items)}
`,
	"js": `
function handler%[1]d(req, res) {
  const name = req.query.name%[1]d;
  const items = [];
  for (let i = 0; i < 10; i++) {
    items.push({ id: i, label: "item " + i });
  }
  const total = items.reduce((a, b) => a + b.id, 0);
  const sql = "SELECT * FROM t%[1]d WHERE name = '" + name + "'";
  db.query(total > 10 ? sql : "SELECT 1");
  res.json({ total, count: items.length });
}
`,
	"go": `
func handler%[1]d(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name%[1]d")
	items := make([]int, 0, 10)
	for i := 0; i < 10; i++ {
		items = append(items, i*2)
	}
	total := 0
	for _, v := range items {
		total += v
	}
	q := fmt.Sprintf("SELECT * FROM t%[1]d WHERE name = '%%s'", name)
	rows, _ := db.Query(q)
	_ = rows
}
`,
	"java": `
    public String handler%[1]d(HttpServletRequest request) throws Exception {
        String name = request.getParameter("name%[1]d");
        List<Integer> items = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            items.add(i * 2);
        }
        int total = 0;
        for (int v : items) { total += v; }
        String sql = "SELECT * FROM t%[1]d WHERE name = '" + name + "'";
        conn.createStatement().executeQuery(sql);
        return String.valueOf(total);
    }
`,
	"php": `
function handler%[1]d($db) {
    $name = $_GET['name%[1]d'];
    $items = [];
    for ($i = 0; $i < 10; $i++) {
        $items[] = ['id' => $i, 'label' => "item $i"];
    }
    $total = 0;
    foreach ($items as $it) { $total += $it['id']; }
    $sql = "SELECT * FROM t%[1]d WHERE name = '" . $name . "'";
    if ($total > 10) { $db->query($sql); }
    return count($items);
}
`,
	"rb": `
  def handler%[1]d
    name = params[:name%[1]d]
    items = []
    10.times do |i|
      items << { id: i, label: "item #{i}" }
    end
    total = items.sum { |x| x[:id] }
    sql = "SELECT * FROM t%[1]d WHERE name = '#{name}'"
    ActiveRecord::Base.connection.execute(sql) if total > 10
    render json: { total: total }
  end
`,
}

var benchHeaders = map[string]string{
	"py":   "from flask import request\n\n",
	"js":   "const db = require('./db');\n\n",
	"go":   "package gen\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n)\n\n",
	"java": "import java.util.*;\n\npublic class Gen%d {\n",
	"php":  "<?php\n\n",
	"rb":   "class Gen%dController < ApplicationController\n",
}

// benchFooters close what a header opened.
var benchFooters = map[string]string{"java": "}\n", "rb": "end\n"}

// generateRepo writes about totalLines lines of code spread over files of
// about 500 lines in six languages and returns the directory and files.
func generateRepo(b *testing.B, totalLines int) (string, []string, int) {
	dir := b.TempDir()
	var files []string
	lines, fn, file := 0, 0, 0
	exts := []string{"py", "js", "go", "java", "php", "rb"}
	for lines < totalLines {
		ext := exts[file%len(exts)]
		var sb strings.Builder
		if strings.Contains(benchHeaders[ext], "%d") {
			fmt.Fprintf(&sb, benchHeaders[ext], file)
		} else {
			sb.WriteString(benchHeaders[ext])
		}
		for strings.Count(sb.String(), "\n") < 500 {
			fmt.Fprintf(&sb, benchTemplates[ext], fn)
			fn++
		}
		sb.WriteString(benchFooters[ext])
		name := fmt.Sprintf("src/m%d/f%d.%s", file%10, file, ext)
		if ext == "java" {
			name = fmt.Sprintf("src/m%d/Gen%d.java", file%10, file)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		files = append(files, p)
		lines += strings.Count(sb.String(), "\n")
		file++
	}
	return dir, files, lines
}

// BenchmarkEngine reports lines analysed per second on one core for a
// generated 100,000-line repository in six languages, beside tree-sitter's
// parse-only time on the same files measured in the same run: x-parse is
// each stage's time divided by that floor. cpu-x-parse is the same ratio of
// the process's CPU time (user and system, every thread, the collector's
// included), which the other work on a shared machine disturbs far less than
// elapsed time. peak-heap-MB is the largest heap
// in use seen while the stage ran. secrets-scan is the secret detector alone;
// its secrets-share-% is its part of the CPU that code analysis
// (parse-and-lower and dataflow) and secret detection take together.
// VULNSCAN_BENCH_REPO names a real repository to measure instead. Run with:
// go test -run '^$' -bench Engine -benchtime 3x
func BenchmarkEngine(b *testing.B) {
	benchEngine(b, 100_000)
}

// BenchmarkEngineMillion runs the whole engine on a generated
// 1,000,000-line repository and fails when any budget was exhausted (files
// skipped for time, functions over budget or left unanalysed).
func BenchmarkEngineMillion(b *testing.B) {
	dir, _, lines := generateRepo(b, 1_000_000)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		stop := trackPeak()
		res, err := New(WithWorkers(runtime.GOMAXPROCS(0))).Run(ctx, Input{Repos: []Repo{{URL: "bench", Dir: dir, Primary: true}}}, nil)
		peak := stop()
		if err != nil {
			b.Fatal(err)
		}
		st := res.Stats
		if st.LinesAnalyzed < lines || st.SkippedReasons["time_limit"] > 0 || st.Flow.OverBudget > 0 || st.Flow.NotAnalyzed > 0 {
			b.Fatalf("budgets exhausted: %d of %d lines, skipped %v, flow %+v", st.LinesAnalyzed, lines, st.SkippedReasons, st.Flow)
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		b.ReportMetric(float64(len(res.Findings)), "findings")
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// trackPeak samples the heap in use until the returned function is called,
// which returns the largest value seen.
func trackPeak() func() uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > peak.Load() {
			peak.Store(ms.HeapInuse)
		}
	}
	go func() {
		defer close(finished)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		sample()
		return peak.Load()
	}
}

// sourceRepo lists the files under dir in the analysed languages, with
// their total lines.
func sourceRepo(b *testing.B, dir string) (string, []string, int) {
	var files []string
	lines := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(" .py .js .ts .go .java .rb .php ", " "+filepath.Ext(p)+" ") {
			return err
		}
		data, err := os.ReadFile(p)
		files, lines = append(files, p), lines+strings.Count(string(data), "\n")
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return dir, files, lines
}

func benchEngine(b *testing.B, size int) {
	dir, files, lines := generateRepo(b, size)
	if real := os.Getenv("VULNSCAN_BENCH_REPO"); real != "" {
		dir, files, lines = sourceRepo(b, real)
	}
	srcs := make([][]byte, len(files))
	rels := make([]string, len(files))
	for i, f := range files {
		srcs[i], _ = os.ReadFile(f)
		rels[i], _ = filepath.Rel(dir, f)
	}
	an, err := sast.New(sast.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	w := an.NewWorker()
	defer w.Close()
	// the floor, measured first in the same run
	parse := func() {
		for i := range srcs {
			if err := w.ParseOnly(ctx, rels[i], srcs[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
	parse()
	const floorRuns = 3
	t0, c0 := time.Now(), cpuTime(b)
	for range floorRuns {
		parse()
	}
	floor, cpuFloor := time.Since(t0)/floorRuns, (cpuTime(b)-c0)/floorRuns
	var cpuStart time.Duration
	start := func(b *testing.B) { cpuStart = cpuTime(b) }
	report := func(b *testing.B, peak uint64) {
		per := b.Elapsed() / time.Duration(b.N)
		cpuPer := (cpuTime(b) - cpuStart) / time.Duration(b.N)
		b.ReportMetric(float64(lines)/per.Seconds(), "lines/s")
		b.ReportMetric(float64(per)/float64(floor), "x-parse")
		b.ReportMetric(float64(cpuPer)/float64(cpuFloor), "cpu-x-parse")
		if peak > 0 {
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		}
	}
	b.Run("treesitter-parse-only", func(b *testing.B) {
		start(b)
		for b.Loop() {
			parse()
		}
		report(b, 0)
	})
	var prepared []*ir.File
	var lowerPer, flowPer time.Duration // code analysis per op
	b.Run("parse-and-lower", func(b *testing.B) {
		start(b)
		for b.Loop() {
			prepared = prepared[:0]
			for i := range srcs {
				p, err := w.Prepare(ctx, rels[i], srcs[i])
				if err != nil {
					b.Fatal(err)
				}
				if p.IR != nil {
					prepared = append(prepared, p.IR)
				}
			}
		}
		report(b, 0)
		lowerPer = b.Elapsed() / time.Duration(b.N)
	})
	b.Run("dataflow", func(b *testing.B) {
		n := 0
		start(b)
		for b.Loop() {
			out, _, err := an.Flow(ctx, prepared, nil, dataflow.Budget{})
			if err != nil {
				b.Fatal(err)
			}
			n = len(out)
		}
		report(b, 0)
		b.ReportMetric(float64(n), "findings")
		flowPer = b.Elapsed() / time.Duration(b.N)
	})
	b.Run("secrets-scan", func(b *testing.B) {
		sec, err := secrets.New()
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		start(b)
		for b.Loop() {
			n = 0
			for i := range srcs {
				n += len(sec.Scan(rels[i], srcs[i]))
			}
		}
		report(b, 0)
		b.ReportMetric(float64(n), "findings")
		if lowerPer > 0 && flowPer > 0 { // both measured in this run
			per := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(100*float64(per)/float64(per+lowerPer+flowPer), "secrets-share-%")
		}
	})
	b.Run("engine-run-1-worker", func(b *testing.B) {
		e := New(WithWorkers(1))
		var peak uint64
		start(b)
		for b.Loop() {
			stop := trackPeak()
			res, err := e.Run(ctx, Input{Repos: []Repo{{URL: "bench", Dir: dir, Primary: true}}}, nil)
			peak = max(peak, stop())
			if err != nil {
				b.Fatal(err)
			}
			if res.Stats.LinesAnalyzed < lines {
				b.Fatalf("analyzed %d of %d lines", res.Stats.LinesAnalyzed, lines)
			}
		}
		report(b, peak)
	})
}

// cpuTime returns the CPU time the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
