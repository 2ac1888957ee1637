package jobs

import (
	"github.com/vulnscan/vulnscan/pkg/engine"
	"github.com/vulnscan/vulnscan/pkg/engine/finding"
)

// WhyHeading starts the paragraph that Describe appends to a finding's
// description (see finding.WhyHeading).
const WhyHeading = finding.WhyHeading

// ConfidenceTag is the prefix of the tag that carries a finding's confidence.
const ConfidenceTag = finding.ConfidenceTag

// Tags returns the finding's tags with its confidence ("confidence:high"),
// as the command-line client's local runs report them too.
func Tags(f engine.Finding) []string { return finding.ReportTags(f) }

// Describe returns the finding's description followed by the reasons of its
// confidence, so that whoever reads the finding sees why it is reported.
func Describe(f engine.Finding) string { return finding.ReportDescription(f) }
