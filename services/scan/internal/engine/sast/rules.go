package sast

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/vulnscan/vulnscan/services/scan/internal/engine/finding"
	"gopkg.in/yaml.v3"
)

//go:embed rules
var ruleFS embed.FS

// ruleFile is the YAML shape of one rule file: either a language's taint
// vocabulary (sources, sanitizers, propagators) or a list of rules.
type ruleFile struct {
	Languages    []string       `yaml:"languages"`
	Sources      []sourceSpec   `yaml:"sources"`
	ParamSources []sourceSpec   `yaml:"param_sources"`
	Sanitizers   []calleeSpec   `yaml:"sanitizers"`
	Propagators  []calleeSpec   `yaml:"propagators"`
	Rules        []*ruleSpec    `yaml:"rules"`
	Unknown      map[string]any `yaml:",inline"`
}

type sourceSpec struct {
	Regex   string   `yaml:"regex"`
	Classes []string `yaml:"classes"` // limit the source to these taint classes
	re      *regexp.Regexp
	clean   uint32 // classes this source does NOT taint
}

type calleeSpec struct {
	Callee  string   `yaml:"callee"`
	Classes []string `yaml:"classes"` // empty: every class
	re      *regexp.Regexp
	mask    uint32
}

type sinkSpec struct {
	Callee      string `yaml:"callee"`
	Args        []int  `yaml:"args"` // positional arguments that must not be tainted; empty: all
	ArgRegex    string `yaml:"arg_regex"`
	NotArgRegex string `yaml:"not_arg_regex"`
	AssignLHS   string `yaml:"assign_lhs"` // assignment to a matching target is the sink
	Return      bool   `yaml:"return"`     // returning from a matching function is the sink
	Receiver    bool   `yaml:"receiver"`   // the receiver of the call (x in x.html_safe) must not be tainted either
	FuncRegex   string `yaml:"function_regex"`
	callee      *regexp.Regexp
	argRe       *regexp.Regexp
	notArgRe    *regexp.Regexp
	lhsRe       *regexp.Regexp
	funcRe      *regexp.Regexp
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
	notRe        *regexp.Regexp
	lineRe       *regexp.Regexp
	fileRe       *regexp.Regexp
	fileNotRe    *regexp.Regexp
	pathRe       *regexp.Regexp
}

type ruleSpec struct {
	ID          string       `yaml:"id"`
	Title       string       `yaml:"title"`
	Class       string       `yaml:"class"`
	Category    string       `yaml:"category"`
	Severity    string       `yaml:"severity"`
	CWE         string       `yaml:"cwe"`
	OWASP       string       `yaml:"owasp"`
	Description string       `yaml:"description"`
	DropInTests bool         `yaml:"drop_in_tests"`
	Sinks       []*sinkSpec  `yaml:"sinks"`
	Pattern     *patternSpec `yaml:"pattern"`
	languages   []string
	classBit    uint32
}

// Rule is the public description of a loaded rule.
type Rule struct {
	ID, Title, Class, Category, Severity, CWE, OWASP string
	Languages                                        []string
	Taint                                            bool
	DropInTests                                      bool
}

// ruleSet holds every rule of one language, compiled.
type ruleSet struct {
	sources      []*sourceSpec
	paramSources []*sourceSpec
	sanitizers   []*calleeSpec
	propagators  []*calleeSpec
	taint        []*ruleSpec
	patterns     map[string][]*ruleSpec // by node type
	classes      map[string]uint32
}

func compile(expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	return regexp.Compile(expr)
}

// loadRules parses and validates every embedded rule file.
func loadRules() (map[string]*ruleSet, []Rule, error) {
	sets := map[string]*ruleSet{}
	get := func(lang string) *ruleSet {
		if s, ok := sets[lang]; ok {
			return s
		}
		s := &ruleSet{patterns: map[string][]*ruleSpec{}, classes: map[string]uint32{}}
		sets[lang] = s
		return s
	}
	classBit := func(s *ruleSet, class string) (uint32, error) {
		if b, ok := s.classes[class]; ok {
			return b, nil
		}
		if len(s.classes) >= 32 {
			return 0, fmt.Errorf("too many taint classes")
		}
		b := uint32(1) << len(s.classes)
		s.classes[class] = b
		return b, nil
	}
	var files []string
	err := fs.WalkDir(ruleFS, "rules", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && path.Ext(p) == ".yaml" {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	var public []Rule
	seen := map[string]bool{}
	for _, f := range files {
		data, err := ruleFS.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		var rf ruleFile
		if err := yaml.Unmarshal(data, &rf); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f, err)
		}
		if len(rf.Unknown) > 0 {
			return nil, nil, fmt.Errorf("%s: unknown keys %v", f, keys(rf.Unknown))
		}
		if len(rf.Languages) == 0 {
			return nil, nil, fmt.Errorf("%s: no languages", f)
		}
		for _, lang := range rf.Languages {
			s := get(lang)
			for _, src := range rf.Sources {
				c, err := compileSource(s, src, classBit)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", f, err)
				}
				s.sources = append(s.sources, c)
			}
			for _, src := range rf.ParamSources {
				c, err := compileSource(s, src, classBit)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", f, err)
				}
				s.paramSources = append(s.paramSources, c)
			}
			for _, cs := range rf.Sanitizers {
				c, err := compileCallee(s, cs, classBit)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", f, err)
				}
				s.sanitizers = append(s.sanitizers, c)
			}
			for _, cs := range rf.Propagators {
				c, err := compileCallee(s, cs, classBit)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", f, err)
				}
				s.propagators = append(s.propagators, c)
			}
		}
		for _, r := range rf.Rules {
			if err := validateRule(r); err != nil {
				return nil, nil, fmt.Errorf("%s: rule %q: %w", f, r.ID, err)
			}
			if seen[r.ID] {
				return nil, nil, fmt.Errorf("%s: duplicate rule %q", f, r.ID)
			}
			seen[r.ID] = true
			r.languages = rf.Languages
			for _, sk := range r.Sinks {
				if err := compileSink(sk); err != nil {
					return nil, nil, fmt.Errorf("%s: rule %q: %w", f, r.ID, err)
				}
			}
			if r.Pattern != nil {
				if err := compilePattern(r.Pattern); err != nil {
					return nil, nil, fmt.Errorf("%s: rule %q: %w", f, r.ID, err)
				}
			}
			for _, lang := range rf.Languages {
				s := get(lang)
				if len(r.Sinks) > 0 {
					b, err := classBit(s, r.Class)
					if err != nil {
						return nil, nil, err
					}
					r.classBit = b
					s.taint = append(s.taint, r)
				}
				if r.Pattern != nil {
					for _, t := range r.Pattern.NodeTypes {
						s.patterns[t] = append(s.patterns[t], r)
					}
				}
			}
			public = append(public, Rule{ID: r.ID, Title: r.Title, Class: r.Class, Category: r.Category, Severity: r.Severity,
				CWE: r.CWE, OWASP: r.OWASP, Languages: rf.Languages, Taint: len(r.Sinks) > 0, DropInTests: r.DropInTests})
		}
	}
	return sets, public, nil
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
	case !finding.ValidCategory(r.Category):
		return fmt.Errorf("unknown category %q", r.Category)
	case !finding.ValidSeverity(r.Severity):
		return fmt.Errorf("unknown severity %q", r.Severity)
	case !strings.HasPrefix(r.CWE, "CWE-") || !strings.Contains(r.OWASP, ":2021"):
		return fmt.Errorf("cwe and owasp (2021) tags are required")
	case (len(r.Sinks) > 0) == (r.Pattern != nil):
		return fmt.Errorf("exactly one of sinks or pattern is required")
	}
	return nil
}

func compileSource(s *ruleSet, src sourceSpec, classBit func(*ruleSet, string) (uint32, error)) (*sourceSpec, error) {
	re, err := regexp.Compile(src.Regex)
	if err != nil || src.Regex == "" {
		return nil, fmt.Errorf("source %q: bad regex: %v", src.Regex, err)
	}
	c := src
	c.re = re
	if len(src.Classes) > 0 {
		var m uint32
		for _, cl := range src.Classes {
			b, err := classBit(s, cl)
			if err != nil {
				return nil, err
			}
			m |= b
		}
		c.clean = ^m
	}
	return &c, nil
}

func compileCallee(s *ruleSet, cs calleeSpec, classBit func(*ruleSet, string) (uint32, error)) (*calleeSpec, error) {
	re, err := regexp.Compile(cs.Callee)
	if err != nil || cs.Callee == "" {
		return nil, fmt.Errorf("callee %q: bad regex: %v", cs.Callee, err)
	}
	c := cs
	c.re = re
	c.mask = ^uint32(0)
	if len(cs.Classes) > 0 {
		c.mask = 0
		for _, cl := range cs.Classes {
			b, err := classBit(s, cl)
			if err != nil {
				return nil, err
			}
			c.mask |= b
		}
	}
	return &c, nil
}

func compileSink(sk *sinkSpec) error {
	var err error
	if sk.Callee == "" && sk.AssignLHS == "" && !sk.Return {
		return fmt.Errorf("sink needs callee, assign_lhs or return")
	}
	for _, p := range []struct {
		dst **regexp.Regexp
		src string
	}{{&sk.callee, sk.Callee}, {&sk.argRe, sk.ArgRegex}, {&sk.notArgRe, sk.NotArgRegex}, {&sk.lhsRe, sk.AssignLHS}, {&sk.funcRe, sk.FuncRegex}} {
		if *p.dst, err = compile(p.src); err != nil {
			return err
		}
	}
	return nil
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
	}
	return nil
}
