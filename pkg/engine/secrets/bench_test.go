package secrets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkScan compares the secret detector with and without the keyword
// prefilter on generated code with a few credentials (or, with
// VULNSCAN_BENCH_REPO set, on the text files of that repository), reporting
// megabytes per second and the findings of each, which must be equal.
func BenchmarkScan(b *testing.B) {
	s, err := New()
	if err != nil {
		b.Fatal(err)
	}
	type file struct {
		name string
		data []byte
	}
	var files []file
	if dir := os.Getenv("VULNSCAN_BENCH_REPO"); dir != "" {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.Contains(" .py .js .ts .go .java .rb .php .yaml .yml .json .toml .cfg .ini .env .sh ", " "+filepath.Ext(p)+" ") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			files = append(files, file{filepath.ToSlash(rel), data})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	} else {
		for i := range 200 {
			src := code(500)
			if i%20 == 0 {
				src += "AWS = \"" + awsKey + "\"\nSECRET_TOKEN = \"" + genericVal + "\"\n" + privateKey
			}
			files = append(files, file{"src/f" + strings.Repeat("x", i%3) + ".py", []byte(src)})
		}
	}
	size := 0
	for _, f := range files {
		size += len(f.data)
	}
	found := map[string]int{}
	for _, mode := range []string{"full", "prefiltered"} {
		scan := s.Scan
		if mode == "full" {
			scan = s.scanFull
		}
		b.Run(mode, func(b *testing.B) {
			n := 0
			for b.Loop() {
				n = 0
				for _, f := range files {
					n += len(scan(f.name, f.data))
				}
			}
			b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
			b.ReportMetric(float64(n), "findings")
			found[mode] = n
		})
	}
	if found["full"] != found["prefiltered"] {
		b.Fatalf("%d findings without the prefilter, %d with it", found["full"], found["prefiltered"])
	}
}
