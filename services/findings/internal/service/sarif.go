package service

import (
	"bytes"
	"encoding/json"

	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// SARIF 2.1.0 output: one run whose rules are the finding categories, each
// related to its CWE weakness in the CWE taxonomy.

const sarifSchema = "https://json.schemastore.org/sarif-2.1.0.json"

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

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     sarifText      `json:"shortDescription"`
	DefaultConfiguration map[string]any `json:"defaultConfiguration"`
	Relationships        []sarifRel     `json:"relationships"`
	Properties           map[string]any `json:"properties"`
}

func ruleIndex(category string) int {
	for i, c := range store.Categories {
		if c == category {
			return i
		}
	}
	return len(store.Categories) - 1 // other
}

// sarifHead renders everything before the first result.
func sarifHead() ([]byte, error) {
	rules := make([]sarifRule, 0, len(store.Categories))
	taxa := make([]map[string]any, 0, len(store.Categories))
	for _, c := range store.Categories {
		cwe := categoryCWE[c]
		r := sarifRule{ID: c, Name: c, ShortDescription: sarifText{Text: "vulnscan category " + c + " (CWE-" + cwe.id + ")"},
			DefaultConfiguration: map[string]any{"level": "warning"},
			Properties:           map[string]any{"tags": []string{"security", "external/cwe/cwe-" + cwe.id}}}
		var rel sarifRel
		rel.Target.ID = cwe.id
		rel.Target.ToolComponent.Name = "CWE"
		rel.Kinds = []string{"relevant"}
		r.Relationships = []sarifRel{rel}
		rules = append(rules, r)
		taxa = append(taxa, map[string]any{"id": cwe.id, "name": cwe.name, "shortDescription": sarifText{Text: cwe.name}})
	}
	run := map[string]any{
		"tool": map[string]any{"driver": map[string]any{
			"name": "vulnscan", "informationUri": "https://github.com/vulnscan/vulnscan", "semanticVersion": "1.0.0", "rules": rules,
			"supportedTaxonomies": []map[string]any{{"name": "CWE"}},
		}},
		"taxonomies": []map[string]any{{"name": "CWE", "organization": "MITRE", "version": "4.14",
			"informationUri": "https://cwe.mitre.org/data/published/cwec_v4.14.pdf", "shortDescription": sarifText{Text: "The MITRE Common Weakness Enumeration"},
			"taxa": taxa}},
		"columnKind": "unicodeCodePoints",
	}
	b, err := json.Marshal(run)
	if err != nil {
		return nil, err
	}
	// The run is left open at its results array, which is streamed in and
	// closed with "]}]}".
	var out bytes.Buffer
	out.WriteString(`{"$schema":"` + sarifSchema + `","version":"2.1.0","runs":[`)
	out.Write(bytes.TrimSuffix(b, []byte("}")))
	out.WriteString(`,"results":[`)
	return out.Bytes(), nil
}

func sarifLevel(severity string) string {
	switch severity {
	case "critical", "high":
		return "error"
	case "medium":
		return "warning"
	default:
		return "note"
	}
}

// securitySeverity is the CVSS-like score code scanning tools read.
func securitySeverity(severity string) string {
	return map[string]string{"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "3.0", "info": "0.0"}[severity]
}

func sarifResult(f store.Finding, x store.Extra) map[string]any {
	phys := map[string]any{"artifactLocation": map[string]any{"uri": f.AffectedFile, "uriBaseId": "%SRCROOT%"}}
	if x.StartLine > 0 {
		region := map[string]any{"startLine": x.StartLine}
		if x.EndLine >= x.StartLine {
			region["endLine"] = x.EndLine
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
	props := map[string]any{"severity": f.Severity, "state": f.State, "security-severity": securitySeverity(f.Severity),
		"tags": f.Tags, "scan_id": f.ScanID}
	if f.DuplicateOf != nil {
		props["duplicate_of"] = *f.DuplicateOf
	}
	return map[string]any{
		"ruleId":              categoryOrOther(f.Category),
		"ruleIndex":           ruleIndex(f.Category),
		"level":               sarifLevel(f.Severity),
		"message":             sarifText{Text: msg},
		"guid":                f.ID,
		"locations":           []any{map[string]any{"physicalLocation": phys}},
		"partialFingerprints": map[string]string{"vulnscanFingerprint/v1": x.Fingerprint},
		"properties":          props,
	}
}

func categoryOrOther(c string) string {
	if _, ok := categoryCWE[c]; ok {
		return c
	}
	return "other"
}
