package worker

import (
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine"
)

// WhyHeading starts the paragraph that Describe appends to a finding's
// description: "Why we report this (confidence: high):" followed by one
// "- reason" line per reason. The findings service reads it back for the
// operators' list.
const WhyHeading = "Why we report this (confidence: "

// ConfidenceTag is the prefix of the tag that carries a finding's confidence.
const ConfidenceTag = "confidence:"

// Tags returns the finding's tags with its confidence ("confidence:high").
func Tags(f engine.Finding) []string {
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

// Describe returns the finding's description followed by the reasons of its
// confidence, so that whoever reads the finding sees why it is reported.
func Describe(f engine.Finding) string {
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
