package sast

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vulnscan/vulnscan/pkg/engine/finding"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// patternCtx runs the structural rules (configuration flags, dangerous
// settings) of one file over its syntax tree.
type patternCtx struct {
	lang     string
	spec     *callSpec
	rs       *ruleSet
	src      []byte
	file     string
	lines    []string
	seen     map[string]bool
	findings []finding.Finding

	// Per node, the callee and the normalized text are computed once for all
	// the patterns of its type, and a callee's match against a pattern's
	// callee expression once per file: a file calls the same few names many
	// times.
	node     *syntax.Node
	call     int8 // 0 not yet known, 1 a call, -1 not a call
	callName string
	text     *string
	calleeOK map[calleeKey]bool
}

type calleeKey struct {
	re     *regexp.Regexp
	callee string
}

// nodeCallee returns the callee of n when n is a call.
func (pc *patternCtx) nodeCallee(n *syntax.Node) (string, bool) {
	if pc.node != n {
		pc.node, pc.call, pc.text = n, 0, nil
	}
	if pc.call == 0 {
		pc.call = -1
		if pc.isCall(n) {
			pc.call, pc.callName = 1, pc.callee(n)
		}
	}
	return pc.callName, pc.call > 0
}

// nodeText returns the normalized text of n (the first 2000 characters).
func (pc *patternCtx) nodeText(n *syntax.Node) string {
	if pc.node != n {
		pc.node, pc.call, pc.text = n, 0, nil
	}
	if pc.text == nil {
		t := pc.norm(n, 2000)
		pc.text = &t
	}
	return *pc.text
}

func (pc *patternCtx) calleeMatches(re *regexp.Regexp, callee string) bool {
	k := calleeKey{re, callee}
	ok, seen := pc.calleeOK[k]
	if !seen {
		if pc.calleeOK == nil {
			pc.calleeOK = map[calleeKey]bool{}
		}
		ok = re.MatchString(callee)
		pc.calleeOK[k] = ok
	}
	return ok
}

func (pc *patternCtx) norm(n *syntax.Node, limit int) string {
	end := n.End
	if int(end-n.Start) > limit*2 {
		end = n.Start + uint32(limit*2)
	}
	s := dropSpace(pc.src[n.Start:end])
	if len(s) > limit {
		s = s[:limit]
	}
	return s
}

// dropSpace returns b without its white space (as Unicode defines it), in
// one allocation: what joining strings.Fields of b would give.
func dropSpace(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for i := 0; i < len(b); {
		if c := b[i]; c < utf8.RuneSelf {
			if !unicode.IsSpace(rune(c)) {
				sb.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if !unicode.IsSpace(r) {
			sb.Write(b[i : i+size])
		}
		i += size
	}
	return sb.String()
}

// walk visits the tree iteratively (its depth is bounded by the parser, but
// a loop costs nothing). A rule matching both a node and a node inside it
// (an assignment and the call it assigns) is one flaw: only the innermost
// match is reported.
func (pc *patternCtx) walk(root *syntax.Node) {
	type open struct {
		idx int
		end uint32
	}
	enclosing := map[string][]open{} // per rule, the matches enclosing the current node, outermost first
	var outer []bool                 // per finding, whether a match of the same rule lies inside it
	stack := []*syntax.Node{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, r := range pc.rs.patterns[n.Type] {
			if !n.Named || !pc.match(r.Pattern, n) {
				continue
			}
			key := fmt.Sprintf("%s@%d", r.ID, n.Start)
			if pc.seen[key] {
				continue
			}
			pc.seen[key] = true
			// nodes come in pre-order: the matches still open that end
			// at or after this one enclose it
			ms := enclosing[r.ID]
			for len(ms) > 0 && ms[len(ms)-1].end < n.End {
				ms = ms[:len(ms)-1]
			}
			for _, m := range ms {
				outer[m.idx] = true
			}
			enclosing[r.ID] = append(ms, open{len(pc.findings), n.End})
			pc.findings = append(pc.findings, pc.emit(r, n))
			outer = append(outer, false)
		}
		for i := len(n.Children) - 1; i >= 0; i-- {
			stack = append(stack, n.Children[i])
		}
	}
	kept := pc.findings[:0]
	for i, f := range pc.findings {
		if !outer[i] {
			kept = append(kept, f)
		}
	}
	pc.findings = kept
}

func (pc *patternCtx) part(n *syntax.Node, f string) *syntax.Node {
	switch {
	case f == "":
		return nil
	case f[0] == '#':
		return n.FirstOfType(f[1:])
	case f[0] == '@':
		i := int(f[1] - '0')
		for _, c := range n.Children {
			if c.Field == "" && c.Named && !pc.spec.comments[c.Type] {
				if i == 0 {
					return c
				}
				i--
			}
		}
		return nil
	}
	return n.Child(f)
}

func (pc *patternCtx) isCall(n *syntax.Node) bool {
	if _, ok := pc.spec.calls[n.Type]; ok {
		return true
	}
	if _, ok := pc.spec.methods[n.Type]; ok {
		return true
	}
	_, ok := pc.spec.keywords[n.Type]
	return ok
}

func (pc *patternCtx) callee(n *syntax.Node) string {
	if m, ok := pc.spec.methods[n.Type]; ok {
		name := n.Child(m.name)
		if name == nil {
			return ""
		}
		if obj := n.Child(m.recv); obj != nil {
			return pc.norm(obj, 200) + m.sep + name.Text(pc.src)
		}
		return name.Text(pc.src)
	}
	if kw, ok := pc.spec.keywords[n.Type]; ok {
		if strings.HasPrefix(kw, "@") {
			if t := n.Child(kw[1:]); t != nil {
				return "(" + pc.norm(t, 50) + ")"
			}
			return ""
		}
		return kw
	}
	if c := pc.part(n, pc.spec.calls[n.Type]); c != nil {
		return pc.norm(c, 200)
	}
	return ""
}

func (pc *patternCtx) match(p *patternSpec, n *syntax.Node) bool {
	if p.callee != nil {
		callee, isCall := pc.nodeCallee(n)
		if !isCall || !pc.calleeMatches(p.callee, callee) {
			return false
		}
	}
	if len(p.res) > 0 || p.notRe != nil {
		text := pc.nodeText(n)
		for i, re := range p.res {
			if !containsAnyFold(text, p.needs[i]) || !re.MatchString(text) {
				return false
			}
		}
		if p.notRe != nil && p.notRe.MatchString(text) {
			return false
		}
	}
	if p.lineRe != nil {
		if pc.lines == nil {
			pc.lines = strings.Split(string(pc.src), "\n")
		}
		if n.Row >= len(pc.lines) || !p.lineRe.MatchString(pc.lines[n.Row]) {
			return false
		}
	}
	if p.pathRe != nil && !p.pathRe.MatchString(pc.file) {
		return false
	}
	if p.fileRe != nil && !p.fileRe.Match(pc.src) {
		return false
	}
	if p.fileNotRe != nil && p.fileNotRe.Match(pc.src) {
		return false
	}
	return true
}

func (pc *patternCtx) emit(r *ruleSpec, n *syntax.Node) finding.Finding {
	if pc.lines == nil {
		pc.lines = strings.Split(string(pc.src), "\n")
	}
	endRow := min(n.EndRow, n.Row+10)
	sinkText := finding.NormalizeCode(n.Text(pc.src))
	if len(sinkText) > 300 {
		sinkText = sinkText[:300]
	}
	f := r.Finding(pc.file, pc.lang)
	f.AffectedCode = finding.Snippet(pc.lines, n.Row-2, endRow+2)
	f.StartLine, f.EndLine, f.Language = n.Row+1, endRow+1, pc.lang
	f.FingerprintKey = enclosingName(pc.src, n) + "|" + sinkText
	return f
}

// enclosingName names the function around a node for fingerprints: the
// first "name" child of an enclosing node that has a body.
func enclosingName(src []byte, n *syntax.Node) string {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Child("body") != nil {
			if nm := p.Child("name"); nm != nil {
				return nm.Text(src)
			}
		}
	}
	return "<module>"
}
