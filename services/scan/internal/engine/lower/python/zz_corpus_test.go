package python_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/vulnscan/vulnscan/services/scan/internal/engine/dataflow"
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/ir"
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/lower/python"
	"github.com/vulnscan/vulnscan/services/scan/internal/engine/model"
)

type zzRule struct {
	Pattern *struct {
		Callee   string   `yaml:"callee"`
		Regex    []string `yaml:"regex"`
		NotRegex string   `yaml:"not_regex"`
		Line     string   `yaml:"line_regex"`
	} `yaml:"pattern"`
	ID    string           `yaml:"id"`
	Class string           `yaml:"class"`
	Sinks []model.Sink     `yaml:"sinks"`
	Call  *model.ConstCall `yaml:"call"`
}

func TestZZCorpus(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	var rules []*model.FlowRule
	files, _ := filepath.Glob("../../sast/rules/python/*.yaml")
	for _, f := range files {
		data, _ := os.ReadFile(f)
		var rf struct {
			Rules []zzRule `yaml:"rules"`
		}
		if err := yaml.Unmarshal(data, &rf); err != nil {
			t.Fatal(f, err)
		}
		for _, r := range rf.Rules {
			if p := r.Pattern; p != nil {
				for _, x := range append([]string{p.Callee, p.NotRegex, p.Line}, p.Regex...) {
					if _, err := regexp.Compile(x); err != nil {
						t.Fatal(r.ID, err)
					}
				}
			}
			if len(r.Sinks) == 0 && r.Call == nil {
				continue
			}
			fr := &model.FlowRule{ID: r.ID, Class: r.Class, Sinks: r.Sinks, Const: r.Call}
			if err := fr.Compile(); err != nil {
				t.Fatal(err)
			}
			rules = append(rules, fr)
		}
	}
	set, err := model.Load(os.DirFS("../../model"), "python")
	if err != nil {
		t.Fatal(err)
	}
	root := "../../testdata/corpus"
	if r := os.Getenv("ROOT"); r != "" {
		root = r
	}
	ents, _ := os.ReadDir(filepath.Join(root, "python"))
	vm := regexp.MustCompile(`vuln: ([\w.-]+)`)
	exp, found, fp := map[string]int{}, map[string]int{}, 0
	for _, ent := range ents {
		if only := os.Getenv("ONLY"); only != "" && !strings.Contains(ent.Name(), only) {
			continue
		}
		var irs []*ir.File
		srcs := map[string][]byte{}
		filepath.WalkDir(filepath.Join(root, "python", ent.Name()), func(p string, d fs.DirEntry, err error) error {
			if d.IsDir() || !strings.HasSuffix(p, ".py") {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			data, _ := os.ReadFile(p)
			f, err := python.Parse(context.Background(), rel, data)
			if err != nil {
				t.Fatal(err)
			}
			irs = append(irs, f)
			srcs[rel] = data
			return nil
		})
		res, err := dataflow.Analyze(context.Background(), irs, dataflow.Config{Models: map[string]*model.Set{"python": set}, Rules: map[string][]*model.FlowRule{"python": rules}})
		if err != nil {
			t.Fatal(err)
		}
		if os.Getenv("STATS") != "" {
			fmt.Printf("%+v\n", res.Stats)
		}
		var got []string
		for _, f := range res.Findings {
			got = append(got, fmt.Sprintf("%s:%d %s", f.File.Path, f.Pos.Line, f.Rule.ID))
			if os.Getenv("TRACE") != "" {
				for _, s := range f.Steps {
					fmt.Printf("    %s:%d %s\n", s.File.Path, s.Pos.Line, s.What)
				}
			}
		}
		sort.Strings(got)
		safe := strings.HasPrefix(ent.Name(), "safe")
		for _, g := range got {
			if safe {
				fp++
				fmt.Println("FP", g)
			} else if os.Getenv("V") != "" {
				fmt.Println("  found", g)
			}
		}
		if safe {
			continue
		}
		for rel, data := range srcs {
			for i, line := range strings.Split(string(data), "\n") {
				m := vm.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				isFlow := false
				for _, r := range rules {
					if r.ID == m[1] {
						isFlow = true
					}
				}
				if !isFlow {
					continue
				}
				exp[m[1]]++
				want := fmt.Sprintf("%s:%d %s", rel, i+1, m[1])
				hit := false
				for _, g := range got {
					if g == want {
						hit = true
					}
				}
				if hit {
					found[m[1]]++
				} else {
					fmt.Println("MISS", want)
				}
			}
		}
	}
	var ids []string
	for id := range exp {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Printf("%-40s %d/%d\n", id, found[id], exp[id])
	}
	fmt.Println("FP total", fp)
}
