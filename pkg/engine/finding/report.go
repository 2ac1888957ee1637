package finding

import "strings"

// WhyHeading starts the paragraph that ReportDescription appends to a
// finding's description: "Why we report this (confidence: high):" followed
// by one "- reason" line per reason. The findings service reads it back for
// the operators' list.
const WhyHeading = "Why we report this (confidence: "

// ConfidenceTag is the prefix of the tag that carries a finding's confidence.
const ConfidenceTag = "confidence:"

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
