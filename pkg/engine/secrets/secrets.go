// Package secrets finds committed credentials with the gitleaks detector and
// turns them into findings whose secret value is redacted everywhere.
package secrets

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/vulnscan/vulnscan/pkg/engine/finding"
)

// Scanner wraps a gitleaks detector with its default rule set, run behind a
// keyword prefilter (see prefilter). Scan is safe for concurrent use.
type Scanner struct {
	d *detect.Detector
	p *prefilter
}

// maxTargetMegaBytes skips files larger than this many megabytes (whole
// megabytes, as gitleaks counts them).
const maxTargetMegaBytes = 2

var (
	once    sync.Once
	shared  *detect.Detector
	filter  *prefilter
	initErr error
)

// New returns a scanner. The detector and its rules are built once per process.
func New() (*Scanner, error) {
	once.Do(func() {
		// gitleaks logs findings (including secret values) at debug level;
		// never let it write anything.
		logging.Logger = zerolog.Nop()
		shared, initErr = detect.NewDetectorDefaultConfig()
		if initErr != nil {
			initErr = fmt.Errorf("gitleaks rules: %w", initErr)
			return
		}
		shared.MaxTargetMegaBytes = maxTargetMegaBytes
		if filter, initErr = newPrefilter(shared.Config); initErr != nil {
			initErr = fmt.Errorf("keyword prefilter: %w", initErr)
			return
		}
		// The line rules see cut-out lines; the size limit applies to the
		// whole file (see detect), as it would without the prefilter.
		filter.fileDet.MaxTargetMegaBytes = maxTargetMegaBytes
	})
	if initErr != nil {
		return nil, initErr
	}
	return &Scanner{d: shared, p: filter}, nil
}

// Scan returns one finding per secret in content. file is repository-relative.
func (s *Scanner) Scan(file string, content []byte) []finding.Finding {
	return s.findings(file, content, s.p.detect(file, content))
}

// scanFull is Scan without the keyword prefilter: every rule on the whole
// file, as gitleaks runs them. Tests and benchmarks compare the two.
func (s *Scanner) scanFull(file string, content []byte) []finding.Finding {
	//nolint:staticcheck // detect.Fragment is the v8 API; sources.Fragment arrives with v9.
	return s.findings(file, content, s.d.Detect(detect.Fragment{Raw: string(content), FilePath: file}))
}

// findings turns gitleaks results (lines counted from 0) into findings.
func (s *Scanner) findings(file string, content []byte, res []report.Finding) []finding.Finding {
	if len(res) == 0 {
		return nil
	}
	lines := strings.Split(string(content), "\n")
	var out []finding.Finding
	seen := map[string]bool{}
	for _, r := range res {
		if r.Secret == "" {
			continue
		}
		sum := sha256.Sum256([]byte(r.Secret))
		key := hex.EncodeToString(sum[:8])
		if seen[r.RuleID+key+fmt.Sprint(r.StartLine)] {
			continue
		}
		seen[r.RuleID+key+fmt.Sprint(r.StartLine)] = true
		// gitleaks counts lines from 0 for a raw fragment.
		start, end := r.StartLine+1, r.EndLine+1
		if start < 1 {
			start = 1
		}
		if end < start {
			end = start
		}
		code := secretSnippet(lines, start-1, end-1, r.Secret)
		out = append(out, finding.Finding{
			RuleID:   "secrets." + r.RuleID,
			Title:    "Secret committed to the repository: " + r.Description,
			Category: "secrets",
			Severity: "high",
			Description: fmt.Sprintf("A credential matching the %q detector (%s) is committed in this file. Anyone with "+
				"read access to the repository or any clone, fork or backup of it can use it. Revoke and rotate the "+
				"credential now, remove it from the code (and history), and load it from a secret manager or the "+
				"environment instead. Only the first characters of the value are shown: %s.", r.RuleID, r.Description, finding.Redact(r.Secret)),
			AffectedFile:   file,
			AffectedCode:   code,
			Tags:           []string{"secrets." + r.RuleID, "CWE-798", "A07:2021-Identification and Authentication Failures", "secret"},
			StartLine:      start,
			EndLine:        end,
			FingerprintKey: "secret:" + key,
		})
	}
	return out
}

// secretSnippet is the snippet of lines from to to (0-based, at most six
// lines) with the secret redacted before long lines are cut, so that a cut
// never leaves part of the secret in clear.
func secretSnippet(lines []string, from, to int, secret string) string {
	if from >= len(lines) {
		return ""
	}
	to = min(to, from+5, len(lines)-1)
	redacted := strings.Split(RedactSnippet(strings.Join(lines[from:to+1], "\n"), secret), "\n")
	return finding.Snippet(redacted, 0, len(redacted)-1)
}

// RedactSnippet replaces every occurrence of secret (and each of its lines,
// for multi-line secrets) in s by its redacted form.
func RedactSnippet(s, secret string) string {
	s = strings.ReplaceAll(s, secret, finding.Redact(secret))
	for _, part := range strings.Split(secret, "\n") {
		part = strings.TrimSpace(part)
		if len(part) >= 8 {
			s = strings.ReplaceAll(s, part, finding.Redact(part))
		}
	}
	return s
}
