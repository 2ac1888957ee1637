package dataflow

import (
	"strconv"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/model"
)

// entry is one model or rule element bound to a target.
type entry struct {
	qual string // qualifier of the target: a type or module, "*", "?" or "" (plain call)
	name string

	source    *model.Source
	srcMask   uint32
	sanitizer *model.Sanitizer
	sanMask   uint32
	prop      *model.Propagator
	container *model.Container
	setter    *model.Setter
	eval      *model.Evaluator
	returns   string
	sink      *model.Sink
	constRule *model.ConstCall
	rule      *model.FlowRule
	entry     *model.EntryPoint
	noreturn  bool
}

// langModels is the compiled models and flow rules of one language.
type langModels struct {
	lang        string
	known       map[string]bool // every type or module the models name
	constants   map[string]string
	types       map[string][]string
	aliases     map[string]string
	byName      map[string][]*entry // by target name ("*" for module#*)
	globals     map[string][]*entry // sources and returns of globals by qualified name
	paramAnn    []*entry
	paramTypes  []*entry
	paramNames  []*entry
	entryAnn    []*entry            // entry points by annotation
	entryOver   []*entry            // entry points by overridden target
	entryRegist []*entry            // entry points by registration call (also in byName)
	stores      map[string][]*entry // store sinks by the type stored into
}

var emptyModels = &langModels{types: map[string][]string{}, aliases: map[string]string{}, byName: map[string][]*entry{}, globals: map[string][]*entry{}}

func splitTarget(t string) (qual, name string) {
	if i := strings.LastIndexByte(t, '#'); i >= 0 {
		return t[:i], t[i+1:]
	}
	return "", t
}

func (lm *langModels) alias(t string) string {
	if a, ok := lm.aliases[t]; ok {
		return a
	}
	return t
}

func (lm *langModels) add(target string, e *entry) {
	if strings.HasPrefix(target, "global:") {
		lm.globals[target[len("global:"):]] = append(lm.globals[target[len("global:"):]], e)
		return
	}
	e.qual, e.name = splitTarget(target)
	lm.byName[e.name] = append(lm.byName[e.name], e)
	if lm.known != nil {
		lm.known[e.qual] = true
	}
}

func buildLangModels(s *model.Set, rules []*model.FlowRule) *langModels {
	lm := &langModels{lang: s.Language, types: s.Types, aliases: s.Aliases, constants: s.Constants, byName: map[string][]*entry{}, globals: map[string][]*entry{},
		known: map[string]bool{}}
	for t, sup := range s.Types {
		lm.known[t] = true
		for _, x := range sup {
			lm.known[x] = true
		}
	}
	for _, t := range s.Returns {
		lm.known[t] = true
	}
	if lm.types == nil {
		lm.types = map[string][]string{}
	}
	if lm.aliases == nil {
		lm.aliases = map[string]string{}
	}
	for i := range s.Sources {
		src := &s.Sources[i]
		m, _ := model.Mask(src.Classes)
		for _, t := range src.Targets {
			lm.add(t, &entry{source: src, srcMask: m})
		}
		for _, g := range src.Globals {
			lm.globals[g] = append(lm.globals[g], &entry{source: src, srcMask: m})
		}
		for _, a := range src.ParamAnnotations {
			lm.paramAnn = append(lm.paramAnn, &entry{name: a, source: src, srcMask: m})
		}
		for _, t := range src.ParamTypes {
			lm.paramTypes = append(lm.paramTypes, &entry{name: t, source: src, srcMask: m})
		}
		for _, n := range src.ParamNames {
			lm.paramNames = append(lm.paramNames, &entry{name: n, source: src, srcMask: m})
		}
	}
	for i := range s.Sanitizers {
		san := &s.Sanitizers[i]
		m, _ := model.Mask(san.Classes)
		if len(san.Classes) == 0 {
			m = ^uint32(0)
		}
		for _, t := range san.Targets {
			lm.add(t, &entry{sanitizer: san, sanMask: m})
		}
	}
	for i := range s.Propagators {
		for _, t := range s.Propagators[i].Targets {
			lm.add(t, &entry{prop: &s.Propagators[i]})
		}
	}
	for i := range s.Containers {
		for _, t := range s.Containers[i].Targets {
			lm.add(t, &entry{container: &s.Containers[i]})
		}
	}
	for i := range s.Setters {
		for _, t := range s.Setters[i].Targets {
			lm.add(t, &entry{setter: &s.Setters[i]})
		}
	}
	for i := range s.Evaluators {
		for _, t := range s.Evaluators[i].Targets {
			lm.add(t, &entry{eval: &s.Evaluators[i]})
		}
	}
	for t, typ := range s.Returns {
		lm.add(t, &entry{returns: typ})
	}
	for _, t := range s.NoReturn {
		lm.add(t, &entry{noreturn: true})
	}
	for i := range s.EntryPoints {
		ep := &s.EntryPoints[i]
		for _, a := range ep.Annotations {
			lm.entryAnn = append(lm.entryAnn, &entry{name: a, entry: ep})
		}
		for _, t := range ep.Overrides {
			e := &entry{entry: ep}
			e.qual, e.name = splitTarget(t)
			lm.entryOver = append(lm.entryOver, e)
		}
		for _, t := range ep.Registrations {
			e := &entry{entry: ep}
			lm.add(t, e)
			lm.entryRegist = append(lm.entryRegist, e)
		}
	}
	for _, r := range rules {
		for i := range r.Sinks {
			for _, t := range r.Sinks[i].Targets {
				lm.add(t, &entry{sink: &r.Sinks[i], rule: r})
			}
			for _, t := range r.Sinks[i].Stores {
				if lm.stores == nil {
					lm.stores = map[string][]*entry{}
				}
				lm.stores[t] = append(lm.stores[t], &entry{sink: &r.Sinks[i], rule: r, qual: t})
			}
		}
		if r.Const != nil {
			for _, t := range r.Const.Targets {
				lm.add(t, &entry{constRule: r.Const, rule: r})
			}
		}
	}
	return lm
}

// callSite is what model matching needs to know of a call.
type callSite struct {
	name      string
	quals     []string // candidate qualifiers: receiver types with supertypes, or the static qualifier
	typeKnown bool     // the receiver's type (or the static qualifier) is known
	plain     bool     // a plain call of a name, without qualifier or receiver
}

func (e *entry) matches(cs *callSite) bool {
	switch e.qual {
	case "*":
		return true
	case "?":
		return !cs.typeKnown && !cs.plain
	case "":
		return cs.plain
	}
	for _, q := range cs.quals {
		if q == e.qual {
			return true
		}
	}
	return false
}

// isRule reports whether an entry is a rule's sink or check rather than a
// library model.
func (e *entry) isRule() bool { return e.sink != nil || e.constRule != nil }

// distance is how far up the receiver's type hierarchy an entry's
// qualifier is (0: the type itself); -1 for untyped entries.
func (e *entry) distance(cs *callSite) int {
	for i, q := range cs.quals {
		if q == e.qual {
			return i
		}
	}
	return -1
}

// lookup returns the entries that match a call. Library models follow
// overriding: when the receiver's own type (or a closer supertype) has a
// model for the method, models of more distant supertypes do not apply
// (java.security.SecureRandom's nextInt is not java.util.Random's). Rules
// apply to every subtype.
func (lm *langModels) lookup(cs *callSite) []*entry {
	var out []*entry
	best := -1
	for _, list := range [][]*entry{lm.byName[cs.name], lm.byName["*"]} {
		for _, e := range list {
			if !e.matches(cs) {
				continue
			}
			out = append(out, e)
			if d := e.distance(cs); d >= 0 && !e.isRule() && (best < 0 || d < best) {
				best = d
			}
		}
	}
	if best < 0 {
		return out
	}
	kept := out[:0]
	for _, e := range out {
		if d := e.distance(cs); d > best && !e.isRule() {
			continue
		}
		kept = append(kept, e)
	}
	return kept
}

// annotationMatches compares an annotation as written or resolved with a
// model name: equal, or equal to its last dotted components.
func annotationMatches(written, model string) bool {
	written = strings.TrimPrefix(written, "@")
	if written == model {
		return true
	}
	if strings.HasSuffix(written, "."+model) || strings.HasSuffix(model, "."+written) {
		return true
	}
	return false
}

// argIndexes parses "argN", "args", "argN.." specs against n arguments.
func argIndexes(spec string, n int) []int {
	switch {
	case spec == "args":
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	case strings.HasPrefix(spec, "arg"):
		rest := spec[3:]
		from := strings.HasSuffix(rest, "..")
		rest = strings.TrimSuffix(rest, "..")
		i, err := strconv.Atoi(rest)
		if err != nil || i < 0 {
			return nil
		}
		if i < 0 {
			i += n
		}
		if !from {
			if i < n {
				return []int{i}
			}
			return nil
		}
		var out []int
		for j := i; j < n; j++ {
			out = append(out, j)
		}
		return out
	}
	return nil
}
