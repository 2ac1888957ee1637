package sast

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/vulnscan/vulnscan/pkg/engine/dataflow"
	"github.com/vulnscan/vulnscan/pkg/engine/finding"
	"github.com/vulnscan/vulnscan/pkg/engine/ir"
)

// convert turns a dataflow finding into an engine finding with the rule's
// metadata, a snippet, a Mermaid trace across files and a fingerprint key.
func (a *Analyzer) convert(df *dataflow.Finding, lineCache map[*ir.File][]string) (finding.Finding, bool) {
	lang := df.File.Lang
	rs := a.sets[lang]
	if rs == nil {
		return finding.Finding{}, false
	}
	r := rs.byID[df.Rule.ID]
	if r == nil {
		return finding.Finding{}, false
	}
	lines, ok := lineCache[df.File]
	if !ok {
		lines = strings.Split(string(df.File.Src), "\n")
		lineCache[df.File] = lines
	}
	start := max(int(df.Pos.Line)-1, 0)
	end := min(max(int(df.Pos.EndLine)-1, start), start+10)
	if start >= len(lines) {
		start, end = len(lines)-1, len(lines)-1
	}
	sinkText := finding.NormalizeCode(df.File.Text(df.Pos))
	if len(sinkText) > 300 {
		sinkText = sinkText[:300]
	}
	fname := "<module>"
	if df.Func != nil {
		fname = df.Func.Name
		if df.Func.Class != nil {
			fname = df.Func.Class.Name + "." + fname
		}
	}
	f := r.Finding(df.File.Path, lang)
	f.AffectedCode = finding.Snippet(lines, start-2, end+2)
	f.StartLine, f.EndLine, f.Language = start+1, end+1, lang
	f.FingerprintKey = fname + "|" + sinkText
	if len(df.Steps) > 0 {
		f.MermaidTrace = mermaid(df.Steps)
		for _, s := range df.Steps {
			if s.File != nil {
				f.Path = append(f.Path, finding.Location{File: s.File.Path, Line: int(s.Pos.Line)})
			}
		}
	}
	f.Evidence = finding.Evidence{Flow: df.Kind == "flow", Steps: len(df.Steps), Source: df.Source, EntryPoint: df.Entry,
		TypedSink: df.TypedSink, Constant: df.Kind == "const", Property: df.Kind == "property"}
	return f, true
}

// mermaid renders a taint path as a Mermaid flowchart, one node per step,
// each naming its file and line.
func mermaid(steps []*dataflow.Trace) *string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	n := 0
	var prevFile string
	var prevLine int32 = -1
	for _, s := range steps {
		if s.File == nil || s.File.Path == prevFile && s.Pos.Line == prevLine && n > 0 {
			continue
		}
		code := strings.TrimSpace(s.File.Line(int(s.Pos.Line)))
		label := s.What
		if code != "" {
			label += ": " + code
		}
		fmt.Fprintf(&b, "  n%d[\"%s<br/>%s:%d\"]\n", n, mermaidEscape(label), mermaidEscape(s.File.Path), s.Pos.Line)
		if n > 0 {
			fmt.Fprintf(&b, "  n%d --> n%d\n", n-1, n)
		}
		prevFile, prevLine = s.File.Path, s.Pos.Line
		n++
	}
	out := b.String()
	return &out
}

// mermaidEscape makes code safe inside a quoted Mermaid label while keeping
// it as written: spaces and tabs stay, and only what Mermaid would read as
// syntax becomes an entity code — the quote, angle brackets (labels are
// HTML), the backtick (markdown strings) and '#' (which starts an entity,
// so code such as "#include" or "a#b;" is not mistaken for one). Line
// breaks become spaces because a label is one line. Labels longer than 100
// characters are cut at a character boundary, never inside a UTF-8 sequence.
func mermaidEscape(s string) string {
	if utf8.RuneCountInString(s) > 100 {
		n := 0
		for i := range s {
			if n == 100 {
				s = s[:i] + "…"
				break
			}
			n++
		}
	}
	return mermaidEscaper.Replace(strings.ToValidUTF8(s, "\uFFFD"))
}

var mermaidEscaper = strings.NewReplacer("#", "#35;", "\"", "#quot;", "<", "#lt;", ">", "#gt;", "`", "#96;", "\r\n", " ", "\n", " ", "\r", " ")
