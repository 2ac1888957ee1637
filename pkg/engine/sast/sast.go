// Package sast is the code analyzer of the scan engine. Each source file is
// parsed with tree-sitter (package syntax), checked against the syntactic
// `pattern:` rules, and lowered by its language's front end (package
// lower/...) into the shared IR. The whole repository's IR then goes
// through the dataflow analysis (package dataflow), which checks the flow
// rules (`sinks:` and `call:`) with the library models of package model.
// Rules are YAML data in rules/<language>/.
package sast

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vulnscan/vulnscan/pkg/engine/dataflow"
	"github.com/vulnscan/vulnscan/pkg/engine/finding"
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/model"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// Limits bound the work spent on one file.
type Limits struct {
	MaxDepth int           // syntax tree depth
	MaxNodes int           // named syntax nodes
	Timeout  time.Duration // parse plus lowering
}

// DefaultLimits are generous for hand-written code and stop hostile input.
var DefaultLimits = Limits{MaxDepth: 400, MaxNodes: 1_500_000, Timeout: 5 * time.Second}

// Errors that make a file skipped rather than the scan failed.
var (
	ErrTooDeep  = syntax.ErrTooDeep
	ErrTooLarge = syntax.ErrTooLarge
	ErrTimeout  = syntax.ErrTimeout
	ErrNoParse  = syntax.ErrNoParse
)

// SkipReason names the reason counted in scan statistics for a file error.
func SkipReason(err error) string {
	switch {
	case errors.Is(err, ErrTooDeep):
		return "too_deep"
	case errors.Is(err, ErrTooLarge):
		return "too_many_nodes"
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return "time_limit"
	default:
		return "parse_error"
	}
}

// Analyzer holds the compiled rules and models. It is safe for concurrent
// use; each goroutine prepares files through its own Worker.
type Analyzer struct {
	sets   map[string]*ruleSet
	rules  []finding.Rule
	models map[string]*model.Set
	limits Limits
}

var (
	loadOnce     sync.Once
	loadedSets   map[string]*ruleSet
	loadedList   []finding.Rule
	loadedModels map[string]*model.Set
	loadProblems []error
	loadErr      error
)

// modelLanguages are the languages with models (TypeScript uses JavaScript's).
var modelLanguages = []string{"java", "python", "javascript", "go", "php", "ruby"}

// New compiles the embedded rules and models.
func New(limits Limits) (*Analyzer, error) {
	loadOnce.Do(func() {
		loadedSets, loadedList, loadProblems, loadErr = loadRules()
		if loadErr != nil {
			return
		}
		loadedModels = map[string]*model.Set{}
		for _, l := range modelLanguages {
			s, err := model.Builtin(l)
			if err != nil {
				loadErr = err
				return
			}
			loadedModels[l] = s
		}
	})
	if loadErr != nil {
		return nil, loadErr
	}
	if limits.MaxDepth <= 0 {
		limits.MaxDepth = DefaultLimits.MaxDepth
	}
	if limits.MaxNodes <= 0 {
		limits.MaxNodes = DefaultLimits.MaxNodes
	}
	if limits.Timeout <= 0 {
		limits.Timeout = DefaultLimits.Timeout
	}
	return &Analyzer{sets: loadedSets, rules: loadedList, models: loadedModels, limits: limits}, nil
}

// Problems lists the embedded rule files and rules that did not validate
// and were left out.
func (a *Analyzer) Problems() []error { return loadProblems }

// Rules lists the loaded rules.
func (a *Analyzer) Rules() []finding.Rule { return a.rules }

// Worker parses and lowers files one at a time. It is not safe for
// concurrent use.
type Worker struct {
	a *Analyzer
	p *syntax.Parser
}

// NewWorker returns a worker with its own parsers.
func (a *Analyzer) NewWorker() *Worker {
	return &Worker{a: a, p: syntax.NewParser(syntax.Limits{MaxDepth: a.limits.MaxDepth, MaxNodes: a.limits.MaxNodes, Timeout: a.limits.Timeout})}
}

// Close releases the parsers.
func (w *Worker) Close() { w.p.Close() }

// ParseOnly runs the bare tree-sitter parse, without copying the tree: the
// floor the benchmark compares the analysis with.
func (w *Worker) ParseOnly(_ context.Context, file string, src []byte) error {
	l := syntax.LangFor(file)
	if l == nil {
		return nil
	}
	return w.p.ParseOnly(l, src)
}

// Prepared is one file ready for the repository-wide analysis: its IR (nil
// for languages without a front end) and its pattern findings.
type Prepared struct {
	IR       *ir.File
	Findings []finding.Finding
	Nodes    int
}

// Prepare parses a file, runs the pattern rules and lowers it. file is the
// repository-relative path used in findings.
func (w *Worker) Prepare(ctx context.Context, file string, src []byte) (Prepared, error) {
	l := syntax.LangFor(file)
	if l == nil {
		return Prepared{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, w.a.limits.Timeout)
	defer cancel()
	root, nodes, err := w.p.ParseTransient(ctx, l, src)
	if err != nil {
		return Prepared{}, err
	}
	out := Prepared{Nodes: nodes}
	if rs := w.a.sets[l.Name]; rs != nil && len(rs.patterns) > 0 {
		pc := &patternCtx{lang: l.Name, spec: callSpecs[l.Name], rs: rs, src: src, file: file, seen: map[string]bool{}}
		pc.walk(root)
		out.Findings = pc.findings
	}
	if lower := frontEnds[l.Name]; lower != nil {
		f, err := lowerSafely(lower, file, src, root)
		if err != nil {
			return out, err
		}
		if ctx.Err() != nil {
			return out, ErrTimeout
		}
		f.Lang = l.Name
		out.IR = f
	}
	return out, nil
}

// lowerSafely turns a front-end panic into an error: one file a front end
// cannot handle must not fail the scan.
func lowerSafely(lower frontEnd, file string, src []byte, root *syntax.Node) (f *ir.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("%w: lowering: %v", ErrNoParse, r)
		}
	}()
	f, err = lower(file, src, root)
	if err == nil && f == nil {
		err = fmt.Errorf("%w: lowering produced nothing", ErrNoParse)
	}
	return f, err
}

// FlowStats describes the repository-wide analysis.
type FlowStats = dataflow.Stats

// Flow runs the dataflow analysis over the prepared files of one repository
// and returns the flow rules' findings. props holds the repository's
// configuration values (see dataflow.Properties).
func (a *Analyzer) Flow(ctx context.Context, files []*ir.File, props map[string]string, budget dataflow.Budget) ([]finding.Finding, FlowStats, error) {
	rules := map[string][]*model.FlowRule{}
	for _, l := range modelLanguages {
		if rs := a.sets[l]; rs != nil {
			rules[l] = rs.flow
		}
	}
	res, err := dataflow.Analyze(ctx, files, dataflow.Config{Models: a.models, Rules: rules, Properties: props, Budget: budget})
	if err != nil {
		return nil, FlowStats{}, err
	}
	out := make([]finding.Finding, 0, len(res.Findings))
	lines := map[*ir.File][]string{} // split once per file with findings
	for i := range res.Findings {
		if f, ok := a.convert(&res.Findings[i], lines); ok {
			out = append(out, f)
		}
	}
	return out, res.Stats, nil
}

// Analyze prepares one file and analyses it alone (no other file of its
// repository is visible). Tests and single-file tools use it.
func (w *Worker) Analyze(ctx context.Context, file string, src []byte) ([]finding.Finding, error) {
	p, err := w.Prepare(ctx, file, src)
	if err != nil {
		return nil, err
	}
	out := p.Findings
	if p.IR != nil {
		fs, _, err := w.a.Flow(ctx, []*ir.File{p.IR}, nil, dataflow.Budget{})
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	return out, nil
}
