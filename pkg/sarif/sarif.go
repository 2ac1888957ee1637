// Package sarif renders findings as one SARIF 2.1.0 log: one run with one
// rule per detector (the rule id is the detector's id, stable across scans),
// each with help text, its CWE weakness in the CWE taxonomy and
// security-severity; triaged findings (false positive, accepted risk) are
// results with an external suppression. The findings service's export and
// the command-line client's local scans both write through it, so a local
// run and a server scan of the same tree give the same document.
//
// The log is written in one pass: Head, then each Result joined by commas,
// then Tail, so a server can stream it from the database row by row.
package sarif

import (
	"bytes"
	"encoding/json"
	"io"
	"net/url"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/vulnscan/vulnscan/pkg/vocab"
)

const schemaURI = "https://json.schemastore.org/sarif-2.1.0.json"

// guidNamespace is the namespace of the result guids derived from finding
// ids (ResultGUID).
var guidNamespace = uuid.MustParse("4776993f-d796-446d-ac5c-8e22fa619e59")

// ResultGUID returns the SARIF guid of the result for the finding with id:
// a name-based (version 5) UUID of the id, the same in every export of the
// finding. SARIF 2.1.0's schema accepts UUIDs of versions 1 to 5 only, and
// finding ids are time-ordered version 7 UUIDs, so the id cannot be the guid
// itself; it is in the result's properties as finding_id.
func ResultGUID(id string) string { return uuid.NewSHA1(guidNamespace, []byte(id)).String() }

// Finding is what a SARIF result is made of: a finding as the API shows it,
// with its lines and fingerprint. ID, ScanID and DuplicateOf are empty for
// findings that never reached a server (a local scan).
type Finding struct {
	ID, Title, Category, Severity, State string
	Description, AffectedFile            string
	AffectedCode                         string
	Tags                                 []string
	ScanID                               string
	DuplicateOf                          *string
	StartLine, EndLine                   int32
	Fingerprint                          string
}

type cweInfo struct{ id, name string }

// categoryCWE relates each category to the CWE weakness it stands for.
var categoryCWE = map[string]cweInfo{
	"injection":        {"74", "Improper Neutralization of Special Elements in Output Used by a Downstream Component ('Injection')"},
	"xss":              {"79", "Improper Neutralization of Input During Web Page Generation ('Cross-site Scripting')"},
	"auth":             {"287", "Improper Authentication"},
	"access_control":   {"284", "Improper Access Control"},
	"secrets":          {"798", "Use of Hard-coded Credentials"},
	"ssrf":             {"918", "Server-Side Request Forgery (SSRF)"},
	"path_traversal":   {"22", "Improper Limitation of a Pathname to a Restricted Directory ('Path Traversal')"},
	"deserialization":  {"502", "Deserialization of Untrusted Data"},
	"crypto":           {"327", "Use of a Broken or Risky Cryptographic Algorithm"},
	"misconfiguration": {"16", "Configuration"},
	"dependency":       {"1395", "Dependency on Vulnerable Third-Party Component"},
	"other":            {"710", "Improper Adherence to Coding Standards"},
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRel struct {
	Target struct {
		ID            string `json:"id"`
		ToolComponent struct {
			Name string `json:"name"`
		} `json:"toolComponent"`
	} `json:"target"`
	Kinds []string `json:"kinds"`
}

type sarifHelp struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     sarifText      `json:"shortDescription"`
	FullDescription      sarifText      `json:"fullDescription"`
	Help                 sarifHelp      `json:"help"`
	DefaultConfiguration map[string]any `json:"defaultConfiguration"`
	Relationships        []sarifRel     `json:"relationships"`
	Properties           map[string]any `json:"properties"`
}

// Rules collects one rule per detector as results stream past. The
// results are written first and the tool, with its rules, after them: JSON
// members have no order, so the export stays one pass over the findings
// while every rule carries what its results show (the highest severity
// among them is the rule's security-severity, which code scanning tools read
// from the rule).
type Rules struct {
	index map[string]int
	rules []sarifRule
	rank  []int
	cwes  map[string]bool
}

// NewRules starts an empty rule set for one log.
func NewRules() *Rules {
	return &Rules{index: map[string]int{}, cwes: map[string]bool{}}
}

// detector is a finding's rule id: its first tag, which the engine sets to
// the detector that reported it ("python.cmdi.shell", "secrets.aws-access-token",
// "live.sqli.error"). Findings without one fall back to their category.
func detector(f Finding) string {
	if len(f.Tags) > 0 {
		t := f.Tags[0]
		if strings.Contains(t, ".") && !strings.HasPrefix(t, "CWE-") && !strings.Contains(t, ":") && !strings.ContainsAny(t, " \t/") {
			return t
		}
	}
	return categoryOrOther(f.Category)
}

// findingCWE is the CWE number a finding's tags name, else its category's.
func findingCWE(f Finding) cweInfo {
	for _, t := range f.Tags {
		if n, ok := strings.CutPrefix(t, "CWE-"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			if c := categoryCWE[categoryOrOther(f.Category)]; c.id == n {
				return c
			}
			return cweInfo{id: n, name: "CWE-" + n}
		}
	}
	return categoryCWE[categoryOrOther(f.Category)]
}

// ruleFor returns the index of f's rule, adding the rule on first sight.
func (r *Rules) ruleFor(f Finding) (string, int) {
	id := detector(f)
	i, ok := r.index[id]
	if !ok {
		cwe := findingCWE(f)
		r.cwes[cwe.id] = true
		about := strings.TrimSpace(f.Description)
		if k := strings.Index(about, "Why we report this"); k >= 0 {
			about = strings.TrimSpace(about[:k])
		}
		if about == "" {
			about = f.Title
		}
		var tags []string
		for _, t := range f.Tags {
			if strings.HasPrefix(t, "A") && strings.Contains(t, ":20") {
				tags = append(tags, "owasp/"+t)
			}
		}
		rule := sarifRule{ID: id, Name: id, ShortDescription: sarifText{Text: f.Title},
			FullDescription: sarifText{Text: about},
			Help: sarifHelp{
				Text: about + "\n\nWeakness: CWE-" + cwe.id + " (" + cwe.name + "). Category: " + categoryOrOther(f.Category) + ".",
				Markdown: "**" + f.Title + "**\n\n" + about + "\n\nWeakness: [CWE-" + cwe.id + "](https://cwe.mitre.org/data/definitions/" + cwe.id +
					".html) " + cwe.name + ". Category: `" + categoryOrOther(f.Category) + "`.",
			},
			DefaultConfiguration: map[string]any{"level": sarifLevel(f.Severity)},
			Properties: map[string]any{"tags": append([]string{"security", "external/cwe/cwe-" + cwe.id}, tags...),
				"category": categoryOrOther(f.Category), "security-severity": securitySeverity(f.Severity), "precision": "high"}}
		var rel sarifRel
		rel.Target.ID = cwe.id
		rel.Target.ToolComponent.Name = "CWE"
		rel.Kinds = []string{"relevant"}
		rule.Relationships = []sarifRel{rel}
		i = len(r.rules)
		r.index[id] = i
		r.rules = append(r.rules, rule)
		r.rank = append(r.rank, vocab.Severity(f.Severity).Rank())
	}
	if rk := vocab.Severity(f.Severity).Rank(); rk > r.rank[i] {
		r.rank[i] = rk
		r.rules[i].DefaultConfiguration["level"] = sarifLevel(f.Severity)
		r.rules[i].Properties["security-severity"] = securitySeverity(f.Severity)
	}
	return id, i
}

// Head opens the document and its run at the results array.
func Head() []byte {
	return []byte(`{"$schema":"` + schemaURI + `","version":"2.1.0","runs":[{"results":[`)
}

// Tail closes the results and adds the tool with the rules seen, the
// CWE taxonomy and the path root every result's location is relative to.
func (r *Rules) Tail() ([]byte, error) {
	rules := r.rules
	if rules == nil {
		rules = []sarifRule{}
	}
	ids := make([]string, 0, len(r.cwes))
	for id := range r.cwes {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	taxa := make([]map[string]any, 0, len(ids))
	for _, id := range ids {
		name := "CWE-" + id
		for _, c := range categoryCWE {
			if c.id == id {
				name = c.name
			}
		}
		taxa = append(taxa, map[string]any{"id": id, "name": name, "shortDescription": sarifText{Text: name}})
	}
	tail := map[string]any{
		"tool": map[string]any{"driver": map[string]any{
			"name": "vulnscan", "informationUri": "https://github.com/vulnscan/vulnscan", "semanticVersion": "1.0.0", "rules": rules,
			"supportedTaxonomies": []map[string]any{{"name": "CWE"}},
		}},
		"taxonomies": []map[string]any{{"name": "CWE", "organization": "MITRE", "version": "4.14",
			"informationUri": "https://cwe.mitre.org/data/published/cwec_v4.14.pdf", "shortDescription": sarifText{Text: "The MITRE Common Weakness Enumeration"},
			"taxa": taxa}},
		// Every artifactLocation.uri is relative to the root of the scanned
		// repository (or upload), named %SRCROOT% as code scanning tools expect.
		"originalUriBaseIds": map[string]any{"%SRCROOT%": map[string]any{
			"description": sarifText{Text: "The root of the scanned repository or uploaded archive; result paths are relative to it."}}},
		"columnKind": "unicodeCodePoints",
	}
	b, err := json.Marshal(tail)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteString("],")
	out.Write(bytes.TrimPrefix(b, []byte("{")))
	out.WriteString("]}")
	return out.Bytes(), nil
}

// ArtifactURI renders a repository-relative file path as the URI reference
// SARIF requires (format uri-reference): each segment percent-encoded, so a
// space, "%", "#", "?" or a character outside ASCII does not make the log
// invalid (code scanning uploads refuse the whole log for one such path),
// and "./" before a first segment holding a colon, which would otherwise
// read as a scheme. Consumers decode it back to the path.
func ArtifactURI(path string) string {
	return (&url.URL{Path: path}).String()
}

func sarifLevel(severity string) string {
	switch vocab.Severity(severity) {
	case vocab.Critical, vocab.High:
		return "error"
	case vocab.Medium:
		return "warning"
	default:
		return "note"
	}
}

// securitySeverity is the CVSS-like score code scanning tools read.
func securitySeverity(severity string) string {
	return map[vocab.Severity]string{vocab.Critical: "9.5", vocab.High: "8.0", vocab.Medium: "5.5", vocab.Low: "3.0", vocab.Info: "0.0"}[vocab.Severity(severity)]
}

// suppressedStates are triage decisions that a code scanning tool should
// show as dismissed: the finding is known and accepted, not open.
var suppressedStates = map[vocab.FindingState]string{
	vocab.FalsePositive: "Triaged in vulnscan as a false positive.",
	vocab.AcceptedRisk:  "Triaged in vulnscan as an accepted risk.",
}

// Result renders one finding as a result, adding its rule to r on first
// sight.
func (r *Rules) Result(f Finding) ([]byte, error) {
	ruleID, ruleIndex := r.ruleFor(f)
	return json.Marshal(result(f, ruleID, ruleIndex))
}

func result(f Finding, ruleID string, ruleIndex int) map[string]any {
	phys := map[string]any{"artifactLocation": map[string]any{"uri": ArtifactURI(f.AffectedFile), "uriBaseId": "%SRCROOT%"}}
	if f.StartLine > 0 {
		region := map[string]any{"startLine": f.StartLine}
		if f.EndLine >= f.StartLine {
			region["endLine"] = f.EndLine
		}
		if f.AffectedCode != "" {
			region["snippet"] = sarifText{Text: f.AffectedCode}
		}
		phys["region"] = region
	}
	msg := f.Title
	if f.Description != "" {
		msg += "\n\n" + f.Description
	}
	tags := f.Tags
	if tags == nil {
		tags = []string{}
	}
	props := map[string]any{"severity": f.Severity, "state": f.State, "category": categoryOrOther(f.Category),
		"tags": tags}
	if f.ScanID != "" {
		props["scan_id"] = f.ScanID
	}
	if f.DuplicateOf != nil {
		props["duplicate_of"] = *f.DuplicateOf
	}
	res := map[string]any{
		"ruleId":              ruleID,
		"ruleIndex":           ruleIndex,
		"level":               sarifLevel(f.Severity),
		"message":             sarifText{Text: msg},
		"locations":           []any{map[string]any{"physicalLocation": phys}},
		"partialFingerprints": map[string]string{"vulnscanFingerprint/v1": f.Fingerprint},
		"properties":          props,
	}
	if f.ID != "" {
		res["guid"] = ResultGUID(f.ID)
		props["finding_id"] = f.ID
	}
	if why, ok := suppressedStates[vocab.FindingState(f.State)]; ok {
		res["suppressions"] = []any{map[string]any{"kind": "external", "status": "accepted", "justification": why}}
	}
	return res
}

func categoryOrOther(c string) string {
	if _, ok := categoryCWE[c]; ok {
		return c
	}
	return "other"
}

// Write renders fs as one complete log on w, through the same Head, Result
// and Tail a streaming export uses.
func Write(w io.Writer, fs []Finding) error {
	var buf bytes.Buffer
	buf.Write(Head())
	rules := NewRules()
	for i, f := range fs {
		if i > 0 {
			buf.WriteByte(',')
		}
		b, err := rules.Result(f)
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	tail, err := rules.Tail()
	if err != nil {
		return err
	}
	buf.Write(tail)
	_, err = w.Write(buf.Bytes())
	return err
}
