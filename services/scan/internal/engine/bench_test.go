package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vulnscan/vulnscan/services/scan/internal/engine/sast"
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
}

var benchHeaders = map[string]string{
	"py":   "from flask import request\n\n",
	"js":   "const db = require('./db');\n\n",
	"go":   "package gen\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n)\n\n",
	"java": "import java.util.*;\n\npublic class Gen%d {\n",
}

// generateRepo writes about totalLines lines of code spread over files of
// about 500 lines in four languages and returns the directory and files.
func generateRepo(b *testing.B, totalLines int) (string, []string, int) {
	dir := b.TempDir()
	var files []string
	lines, fn, file := 0, 0, 0
	exts := []string{"py", "js", "go", "java"}
	for lines < totalLines {
		ext := exts[file%len(exts)]
		var sb strings.Builder
		if ext == "java" {
			fmt.Fprintf(&sb, benchHeaders[ext], file)
		} else {
			sb.WriteString(benchHeaders[ext])
		}
		for strings.Count(sb.String(), "\n") < 500 {
			fmt.Fprintf(&sb, benchTemplates[ext], fn)
			fn++
		}
		if ext == "java" {
			sb.WriteString("}\n")
		}
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

// BenchmarkEngine reports lines analyzed per second on one core for a
// generated 100,000-line repository, beside tree-sitter's parse-only time on
// the same files. Run with: go test -run '^$' -bench Engine -benchtime 3x
func BenchmarkEngine(b *testing.B) {
	dir, files, lines := generateRepo(b, 100_000)
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
	report := func(b *testing.B) {
		b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
	}
	b.Run("treesitter-parse-only", func(b *testing.B) {
		w := an.NewWorker()
		defer w.Close()
		for b.Loop() {
			for i := range srcs {
				if err := w.ParseOnly(ctx, rels[i], srcs[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
		report(b)
	})
	b.Run("sast-analyze", func(b *testing.B) {
		w := an.NewWorker()
		defer w.Close()
		n := 0
		for b.Loop() {
			n = 0
			for i := range srcs {
				out, err := w.Analyze(ctx, rels[i], srcs[i])
				if err != nil {
					b.Fatal(err)
				}
				n += len(out)
			}
		}
		report(b)
		b.ReportMetric(float64(n), "findings")
	})
	b.Run("engine-run-1-worker", func(b *testing.B) {
		e := New(WithWorkers(1))
		for b.Loop() {
			res, err := e.Run(ctx, Input{Repos: []Repo{{URL: "bench", Dir: dir, Primary: true}}}, nil)
			if err != nil {
				b.Fatal(err)
			}
			if res.Stats.LinesAnalyzed < lines {
				b.Fatalf("analyzed %d of %d lines", res.Stats.LinesAnalyzed, lines)
			}
		}
		report(b)
	})
}
