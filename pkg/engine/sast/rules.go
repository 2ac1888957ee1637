package sast

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/finding"
	"github.com/vulnscan/vulnscan/pkg/engine/model"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	"gopkg.in/yaml.v3"
)

//go:embed rules
var ruleFS embed.FS

// ruleFile is the YAML shape of one rule file: the languages it applies to
// and its rules. Library behaviour (sources, sanitizers, propagation) is in
// package model.
type ruleFile struct {
	Languages []string       `yaml:"languages"`
	Rules     []*ruleSpec    `yaml:"rules"`
	Unknown   map[string]any `yaml:",inline"`
}

type patternSpec struct {
	NodeTypes    []string `yaml:"node_types"`
	Callee       string   `yaml:"callee"`
	Regex        []string `yaml:"regex"` // all must match the node text
	NotRegex     string   `yaml:"not_regex"`
	LineRegex    string   `yaml:"line_regex"` // must match the node's source line(s)
	FileRegex    string   `yaml:"file_regex"`
	FileNotRegex string   `yaml:"file_not_regex"`
	PathRegex    string   `yaml:"path_regex"` // must match the repository-relative file path
	callee       *regexp.Regexp
	res          []*regexp.Regexp
	// needs holds, per regex of res, literals one of which every match
	// contains (lower case ASCII), nil when none is known: a node text
	// holding none of them is rejected without running the regex.
	needs     [][]string
	notRe     *regexp.Regexp
	lineRe    *regexp.Regexp
	fileRe    *regexp.Regexp
	fileNotRe *regexp.Regexp
	pathRe    *regexp.Regexp
}

type ruleSpec struct {
	finding.Rule `yaml:",inline"`
	Sinks        []model.Sink     `yaml:"sinks"`
	Call         *model.ConstCall `yaml:"call"`
	Pattern      *patternSpec     `yaml:"pattern"`
	Unknown      map[string]any   `yaml:",inline"`
	languages    []string
	flow         *model.FlowRule
}

// ruleSet holds every rule of one language, compiled.
type ruleSet struct {
	flow     []*model.FlowRule
	patterns map[string][]*ruleSpec // by node type
	byID     map[string]*ruleSpec
}

func compile(expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	return regexp.Compile(expr)
}

// loadRules parses and validates every embedded rule file. A file or rule
// that does not validate is left out and listed in the returned problems
// (TestRulesValid keeps the embedded set free of them): one defective rule
// must not stop every scan.
func loadRules() (map[string]*ruleSet, []finding.Rule, []error, error) {
	var problems []error
	sets := map[string]*ruleSet{}
	get := func(lang string) *ruleSet {
		if s, ok := sets[lang]; ok {
			return s
		}
		s := &ruleSet{patterns: map[string][]*ruleSpec{}, byID: map[string]*ruleSpec{}}
		sets[lang] = s
		return s
	}
	var files []string
	err := fs.WalkDir(ruleFS, "rules", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && path.Ext(p) == ".yaml" {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	sort.Strings(files)
	var public []finding.Rule
	seen := map[string]bool{}
	for _, f := range files {
		data, err := ruleFS.ReadFile(f)
		if err != nil {
			return nil, nil, nil, err
		}
		var rf ruleFile
		if err := yaml.Unmarshal(data, &rf); err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", f, err))
			continue
		}
		if len(rf.Unknown) > 0 {
			problems = append(problems, fmt.Errorf("%s: unknown keys %v (library models belong in package model)", f, keys(rf.Unknown)))
			continue
		}
		if len(rf.Languages) == 0 && len(rf.Rules) > 0 {
			problems = append(problems, fmt.Errorf("%s: no languages", f))
			continue
		}
		for _, r := range rf.Rules {
			if err := checkRule(f, r, seen); err != nil {
				problems = append(problems, err)
				continue
			}
			seen[r.ID] = true
			r.languages = rf.Languages
			for _, lang := range rf.Languages {
				s := get(lang)
				s.byID[r.ID] = r
				if r.flow != nil {
					s.flow = append(s.flow, r.flow)
				}
				if r.Pattern != nil {
					for _, t := range r.Pattern.NodeTypes {
						s.patterns[t] = append(s.patterns[t], r)
					}
				}
			}
			pub := r.Rule
			pub.Languages, pub.Taint = rf.Languages, len(r.Sinks) > 0
			public = append(public, pub)
		}
	}
	return sets, public, problems, nil
}

// checkRule validates and compiles one rule.
func checkRule(file string, r *ruleSpec, seen map[string]bool) error {
	if len(r.Unknown) > 0 {
		return fmt.Errorf("%s: rule %q: unknown keys %v", file, r.ID, keys(r.Unknown))
	}
	if err := validateRule(r); err != nil {
		return fmt.Errorf("%s: rule %q: %w", file, r.ID, err)
	}
	if seen[r.ID] {
		return fmt.Errorf("%s: duplicate rule %q", file, r.ID)
	}
	if len(r.Sinks) > 0 || r.Call != nil {
		r.flow = &model.FlowRule{ID: r.ID, Class: r.Class, Sinks: r.Sinks, Const: r.Call}
		if err := r.flow.Compile(); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	if r.Pattern != nil {
		if err := compilePattern(r.Pattern); err != nil {
			return fmt.Errorf("%s: rule %q: %w", file, r.ID, err)
		}
	}
	return nil
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func validateRule(r *ruleSpec) error {
	switch {
	case r.ID == "" || r.Title == "" || r.Description == "" || r.Class == "":
		return fmt.Errorf("id, title, class and description are required")
	case !vocab.Categories.Contains(r.Category):
		return fmt.Errorf("unknown category %q", r.Category)
	case !vocab.Severity(r.Severity).Valid():
		return fmt.Errorf("unknown severity %q", r.Severity)
	case !strings.HasPrefix(r.CWE, "CWE-") || !strings.Contains(r.OWASP, ":2021"):
		return fmt.Errorf("cwe and owasp (2021) tags are required")
	case btoi(len(r.Sinks) > 0)+btoi(r.Call != nil)+btoi(r.Pattern != nil) != 1:
		return fmt.Errorf("exactly one of sinks, call or pattern is required")
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func compilePattern(p *patternSpec) error {
	var err error
	if len(p.NodeTypes) == 0 {
		return fmt.Errorf("pattern needs node_types")
	}
	for _, q := range []struct {
		dst **regexp.Regexp
		src string
	}{{&p.callee, p.Callee}, {&p.notRe, p.NotRegex}, {&p.lineRe, p.LineRegex}, {&p.fileRe, p.FileRegex}, {&p.fileNotRe, p.FileNotRegex}, {&p.pathRe, p.PathRegex}} {
		if *q.dst, err = compile(q.src); err != nil {
			return err
		}
	}
	for _, r := range p.Regex {
		re, err := regexp.Compile(r)
		if err != nil {
			return err
		}
		p.res = append(p.res, re)
		p.needs = append(p.needs, requiredLiterals(r))
	}
	return nil
}
