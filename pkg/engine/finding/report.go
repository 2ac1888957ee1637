package finding

import (
	"slices"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/wiretext"
)

// WhyHeading starts the paragraph that ReportDescription appends to a
// finding's description: "Why we report this (confidence: high):" followed
// by one "- reason" line per reason. The findings service reads it back for
// the operators' list.
const WhyHeading = "Why we report this (confidence: "

// ConfidenceTag is the prefix of the tag that carries a finding's confidence.
const ConfidenceTag = "confidence:"

// ReportText returns f with every text it reports made fit to send and
// store (wiretext.Clean): a snippet, a path or a message taken from a
// repository holds whatever bytes its files hold. A server scan and a local
// run both report through it, so they show the same text for the same
// tree.
func ReportText(f Finding) Finding {
	text := wiretext.Clean
	f.Title, f.Category, f.Severity, f.Description = text(f.Title), text(f.Category), text(f.Severity), text(f.Description)
	f.AffectedFile, f.AffectedCode, f.Fingerprint = text(f.AffectedFile), text(f.AffectedCode), text(f.Fingerprint)
	if f.ProofOfConcept != nil {
		v := text(*f.ProofOfConcept)
		f.ProofOfConcept = &v
	}
	if f.MermaidTrace != nil {
		v := text(*f.MermaidTrace)
		f.MermaidTrace = &v
	}
	cleanAll := func(xs []string) []string {
		if !slices.ContainsFunc(xs, func(x string) bool { return text(x) != x }) {
			return xs
		}
		out := make([]string, len(xs)) // not the engine's own slice
		for i, x := range xs {
			out[i] = text(x)
		}
		return out
	}
	f.Tags, f.Reasons = cleanAll(f.Tags), cleanAll(f.Reasons)
	return f
}

// ReportTags returns the finding's tags as they are reported, with its
// confidence ("confidence:high"). A server scan and a local run both report
// through it.
func ReportTags(f Finding) []string {
	if f.Confidence == "" {
		return f.Tags
	}
	out := make([]string, 0, len(f.Tags)+1)
	for _, t := range f.Tags {
		if !strings.HasPrefix(t, ConfidenceTag) {
			out = append(out, t)
		}
	}
	return append(out, ConfidenceTag+f.Confidence)
}

// ReportDescription returns the finding's description followed by the
// reasons of its confidence, so that whoever reads the finding sees why it
// is reported.
func ReportDescription(f Finding) string {
	if f.Confidence == "" {
		return f.Description
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(f.Description, "\n "))
	if b.Len() > 0 {
		b.WriteString("\n\n")
	}
	b.WriteString(WhyHeading + f.Confidence + "):")
	for _, r := range f.Reasons {
		b.WriteString("\n- " + strings.Join(strings.Fields(r), " "))
	}
	return b.String()
}
