// Package sast is the code analyzer of the scan engine: it parses source files
// with tree-sitter and runs taint and pattern rules, written as YAML data in
// rules/, over a compact copy of the syntax tree.
package sast

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/vulnscan/vulnscan/services/scan/internal/engine/finding"
)

// Limits bound the work spent on one file.
type Limits struct {
	MaxDepth int           // syntax tree depth
	MaxNodes int           // named syntax nodes
	Timeout  time.Duration // parse plus analysis
}

// DefaultLimits are generous for hand-written code and stop hostile input.
var DefaultLimits = Limits{MaxDepth: 400, MaxNodes: 1_500_000, Timeout: 5 * time.Second}

// Errors that make a file skipped rather than the scan failed.
var (
	ErrTooDeep  = errTooDeep
	ErrTooLarge = errTooManyNode
	ErrTimeout  = errors.New("analysis time limit reached")
	ErrNoParse  = errors.New("file could not be parsed")
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

// Analyzer holds the compiled rules. It is safe for concurrent use; each
// goroutine analyzes through its own Worker.
type Analyzer struct {
	sets   map[string]*ruleSet
	rules  []Rule
	limits Limits
}

var (
	loadOnce   sync.Once
	loadedSets map[string]*ruleSet
	loadedList []Rule
	loadErr    error
)

// New compiles the embedded rules.
func New(limits Limits) (*Analyzer, error) {
	loadOnce.Do(func() { loadedSets, loadedList, loadErr = loadRules() })
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
	return &Analyzer{sets: loadedSets, rules: loadedList, limits: limits}, nil
}

// Rules lists the loaded rules.
func (a *Analyzer) Rules() []Rule { return a.rules }

// Worker analyzes files one at a time. It is not safe for concurrent use.
type Worker struct {
	a       *Analyzer
	parsers map[*langSpec]*sitter.Parser
	sinks   map[string][]sinkMatch // callee text -> matching sinks, per language
}

type sinkMatch struct {
	rule *ruleSpec
	sink *sinkSpec
}

// NewWorker returns a worker with its own parsers.
func (a *Analyzer) NewWorker() *Worker {
	return &Worker{a: a, parsers: map[*langSpec]*sitter.Parser{}, sinks: map[string][]sinkMatch{}}
}

// Close releases the parsers.
func (w *Worker) Close() {
	for _, p := range w.parsers {
		p.Close()
	}
	w.parsers = map[*langSpec]*sitter.Parser{}
}

func (w *Worker) parse(ctx context.Context, spec *langSpec, src []byte) (*node, int, error) {
	p := w.parsers[spec]
	if p == nil {
		p = sitter.NewParser()
		p.SetLanguage(spec.grammar())
		w.parsers[spec] = p
	}
	limit := w.a.limits.Timeout
	if dl, ok := ctx.Deadline(); ok {
		limit = min(limit, time.Until(dl))
	}
	if limit <= 0 || ctx.Err() != nil {
		return nil, 0, ErrTimeout
	}
	p.SetOperationLimit(int(limit / time.Microsecond))
	// The binding's cancellation flag can be raised after a parse has already
	// finished and then abort the next parse on the same parser, so the time
	// limit is enforced by the operation limit instead of the context.
	tree, err := p.ParseCtx(context.Background(), nil, src)
	if err != nil {
		p.Reset()
		if errors.Is(err, sitter.ErrOperationLimit) || ctx.Err() != nil {
			return nil, 0, ErrTimeout
		}
		return nil, 0, fmt.Errorf("%w: %v", ErrNoParse, err)
	}
	defer tree.Close()
	root, n, err := convert(ctx, tree.RootNode(), src, w.a.limits.MaxDepth, w.a.limits.MaxNodes)
	if err != nil && ctx.Err() != nil {
		return nil, n, ErrTimeout
	}
	return root, n, err
}

// Parse only parses and copies the syntax tree of a file; it returns the number
// of named nodes. It is the baseline the benchmark compares the analysis with.
func (w *Worker) Parse(ctx context.Context, file string, src []byte) (int, error) {
	spec := specFor(file)
	if spec == nil {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, w.a.limits.Timeout)
	defer cancel()
	_, n, err := w.parse(ctx, spec, src)
	return n, err
}

// ParseOnly runs the bare tree-sitter parse, without copying the tree.
func (w *Worker) ParseOnly(ctx context.Context, file string, src []byte) error {
	spec := specFor(file)
	if spec == nil {
		return nil
	}
	p := w.parsers[spec]
	if p == nil {
		p = sitter.NewParser()
		p.SetLanguage(spec.grammar())
		w.parsers[spec] = p
	}
	tree, err := p.ParseCtx(context.Background(), nil, src)
	if err != nil {
		return err
	}
	_ = ctx
	tree.Close()
	return nil
}

// abort is raised (as a panic) inside the analysis when a limit is reached.
type abort struct{ err error }

// Analyze runs every rule of the file's language over src. file is the
// repository-relative path used in findings. Files of languages without rules
// return no findings.
func (w *Worker) Analyze(ctx context.Context, file string, src []byte) (out []finding.Finding, err error) {
	spec := specFor(file)
	if spec == nil {
		return nil, nil
	}
	rs := w.a.sets[spec.name]
	if rs == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, w.a.limits.Timeout)
	defer cancel()
	root, nodes, err := w.parse(ctx, spec, src)
	if err != nil {
		return nil, err
	}
	fc := &fileCtx{w: w, ctx: ctx, spec: spec, rs: rs, src: src, file: file, root: root,
		funcs: map[string]*funcInfo{}, methods: map[string]*funcInfo{}, seen: map[string]bool{},
		budget: 200*nodes + 100_000}
	defer func() {
		if r := recover(); r != nil {
			a, ok := r.(abort)
			if !ok {
				panic(r)
			}
			out, err = nil, a.err
		}
	}()
	fc.run()
	return fc.findings, nil
}
