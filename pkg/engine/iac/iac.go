// Package iac checks infrastructure and pipeline files (Dockerfiles,
// Kubernetes manifests, Terraform and GitHub Actions workflows) for the common
// dangerous settings.
package iac

import (
	"bytes"
	_ "embed"
	"path"
	"regexp"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/finding"
)

// Kinds of configuration files.
const (
	Dockerfile = "dockerfile"
	Kubernetes = "kubernetes"
	Terraform  = "terraform"
	Workflow   = "workflow"
)

var k8sMarker = regexp.MustCompile(`(?m)^apiVersion:\s*\S+`)

// Kind returns the kind of configuration file rel is, or "".
func Kind(rel string, data []byte) string {
	base := strings.ToLower(path.Base(rel))
	ext := path.Ext(base)
	switch {
	case base == "dockerfile" || strings.HasPrefix(base, "dockerfile.") || ext == ".dockerfile" || base == "containerfile":
		return Dockerfile
	case ext == ".tf":
		return Terraform
	case (ext == ".yml" || ext == ".yaml") && strings.Contains(rel, ".github/workflows/"):
		return Workflow
	case (ext == ".yml" || ext == ".yaml") && k8sMarker.Match(data) && bytes.Contains(data, []byte("kind:")):
		return Kubernetes
	}
	return ""
}

// Check runs the checks for kind over one file.
func Check(kind, rel string, data []byte) []finding.Finding {
	switch kind {
	case Dockerfile:
		return CheckDockerfile(rel, data)
	case Kubernetes:
		return CheckKubernetes(rel, data)
	case Terraform:
		return CheckTerraform(rel, data)
	case Workflow:
		return CheckWorkflow(rel, data)
	}
	return nil
}

// rulesYAML lists the metadata of every check.
//
//go:embed rules.yaml
var rulesYAML []byte

// catalog holds the metadata of every check, by rule ID.
var catalog = finding.MustLoadRules(rulesYAML)

// at is a finding of the rule id at the 1-based line of a file, with two
// lines of context before and one after.
func at(id, rel, lang string, lines []string, line int, key string) finding.Finding {
	if line < 1 {
		line = 1
	}
	f := catalog.Get(id).Finding(rel, lang)
	f.AffectedCode = finding.Snippet(lines, line-3, line)
	f.StartLine, f.EndLine, f.Language = line, line, lang
	f.FingerprintKey = key
	return f
}

func splitLines(data []byte) []string {
	return strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
}

var (
	dockerFrom = regexp.MustCompile(`(?i)^FROM\s+(--\S+\s+)*(\S+)`)
	dockerUser = regexp.MustCompile(`(?i)^USER\s+(\S+)`)
	curlPipe   = regexp.MustCompile(`(?i)(curl|wget)\s[^|;&]*\|\s*(sudo\s+)?(ba|z|da)?sh\b`)
	addURL     = regexp.MustCompile(`(?i)^ADD\s+(--\S+\s+)*https?://`)
)

// CheckDockerfile checks one Dockerfile. Only the final stage decides the user.
func CheckDockerfile(rel string, data []byte) []finding.Finding {
	lines := splitLines(data)
	var out []finding.Finding
	lastFrom, user, userLine := 0, "", 0
	stages := map[string]bool{}
	for i, raw := range lines {
		l := strings.TrimSpace(raw)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if m := dockerFrom.FindStringSubmatch(l); m != nil {
			lastFrom, user, userLine = i+1, "", 0
			img := m[2]
			alias := ""
			if f := strings.Fields(l); len(f) >= 4 && strings.EqualFold(f[len(f)-2], "as") {
				alias = strings.ToLower(f[len(f)-1])
			}
			name, tag := img, ""
			if at := strings.Index(img, "@"); at >= 0 {
				name, tag = img[:at], "digest"
			} else if c := strings.LastIndex(img, ":"); c > strings.LastIndex(img, "/") {
				name, tag = img[:c], img[c+1:]
			}
			if !stages[strings.ToLower(name)] && name != "scratch" && !strings.Contains(name, "$") && (tag == "" || tag == "latest") {
				out = append(out, at("docker.unpinned-base", rel, "dockerfile", lines, i+1, "from:"+name))
			}
			if alias != "" {
				stages[alias] = true
			}
			continue
		}
		if m := dockerUser.FindStringSubmatch(l); m != nil {
			user, userLine = strings.Split(m[1], ":")[0], i+1
		}
		if curlPipe.MatchString(l) {
			out = append(out, at("docker.curl-pipe-shell", rel, "dockerfile", lines, i+1, "curl:"+finding.NormalizeCode(l)))
		}
		if addURL.MatchString(l) {
			out = append(out, at("docker.add-remote", rel, "dockerfile", lines, i+1, "add:"+finding.NormalizeCode(l)))
		}
	}
	if lastFrom > 0 && (user == "" || user == "root" || user == "0") {
		line := lastFrom
		if userLine > 0 {
			line = userLine
		}
		out = append(out, at("docker.user-root", rel, "dockerfile", lines, line, "user"))
	}
	return out
}

var (
	tfResource = regexp.MustCompile(`^\s*resource\s+"([^"]+)"\s+"([^"]+)"`)
	tfBlock    = regexp.MustCompile(`^\s*(ingress|egress)\s*\{`)
	tfAttr     = regexp.MustCompile(`^\s*([A-Za-z_][\w-]*)\s*=\s*(.+?)\s*$`)
)

var sensitivePorts = map[string]bool{"0": true, "22": true, "3389": true, "3306": true, "5432": true, "6379": true, "27017": true, "9200": true, "23": true, "445": true, "-1": true}

// CheckTerraform checks resources of one .tf file line by line, tracking the
// enclosing resource and ingress block by brace depth.
func CheckTerraform(rel string, data []byte) []finding.Finding {
	lines := splitLines(data)
	var out []finding.Finding
	depth, resDepth, ingDepth := 0, -1, -1
	rtype, rname := "", ""
	var ingressOpen bool
	var ingLine int
	var fromPort, toPort string
	var ruleType string
	var ruleOpenLine int
	flushRule := func() {
		if ingressOpen && (sensitivePorts[fromPort] || sensitivePorts[toPort] || fromPort == "") {
			out = append(out, at("terraform.open-security-group", rel, "terraform", lines, ingLine, rtype+"."+rname+":"+fromPort))
		}
		ingressOpen, fromPort, toPort = false, "", ""
	}
	for i, raw := range lines {
		l := raw
		l = stripComment(l)
		if m := tfResource.FindStringSubmatch(l); m != nil && depth == 0 {
			rtype, rname, resDepth, ruleType, ruleOpenLine = m[1], m[2], depth, "", 0
		}
		if tfBlock.MatchString(l) && resDepth >= 0 {
			ingDepth = depth
			if strings.HasPrefix(strings.TrimSpace(l), "ingress") {
				ruleType = "ingress"
			} else {
				ruleType = "egress"
			}
		}
		if m := tfAttr.FindStringSubmatch(l); m != nil && resDepth >= 0 {
			k, v := m[1], strings.Trim(m[2], `"`)
			switch {
			case k == "acl" && (v == "public-read" || v == "public-read-write" || v == "authenticated-read"):
				out = append(out, at("terraform.public-bucket", rel, "terraform", lines, i+1, rtype+"."+rname+":acl"))
			case (k == "member" || k == "members" || k == "role_entity" || k == "entity") && strings.Contains(v, "allUsers"):
				out = append(out, at("terraform.public-bucket", rel, "terraform", lines, i+1, rtype+"."+rname+":allUsers"))
			case k == "publicly_accessible" && v == "true":
				out = append(out, at("terraform.public-database", rel, "terraform", lines, i+1, rtype+"."+rname))
			case (k == "encrypted" || k == "storage_encrypted") && v == "false":
				out = append(out, at("terraform.unencrypted-storage", rel, "terraform", lines, i+1, rtype+"."+rname+":"+k))
			case strings.HasPrefix(k, "block_public_") || strings.HasPrefix(k, "ignore_public_acls") || strings.HasPrefix(k, "restrict_public_buckets"):
				if v == "false" {
					out = append(out, at("terraform.public-access-block-disabled", rel, "terraform", lines, i+1, rtype+"."+rname+":"+k))
				}
			case k == "type" && rtype == "aws_security_group_rule":
				ruleType = v
			case k == "from_port":
				fromPort = v
			case k == "to_port":
				toPort = v
			case (k == "cidr_blocks" || k == "ipv6_cidr_blocks" || k == "cidr_ipv4" || k == "cidr_ipv6" || k == "source_ranges") &&
				(strings.Contains(v, "0.0.0.0/0") || strings.Contains(v, "::/0")):
				if ruleType == "ingress" || rtype == "aws_vpc_security_group_ingress_rule" || rtype == "google_compute_firewall" {
					ingressOpen, ingLine = true, i+1
					if ruleOpenLine == 0 {
						ruleOpenLine = i + 1
					}
				}
			}
		}
		depth += strings.Count(l, "{") - strings.Count(l, "}")
		if ingDepth >= 0 && depth <= ingDepth {
			flushRule()
			ingDepth, ruleType = -1, ""
		}
		if resDepth >= 0 && depth <= resDepth {
			if ingressOpen {
				flushRule()
			}
			resDepth, rtype, rname = -1, "", ""
		}
	}
	return out
}

// stripComment removes a trailing # or // comment outside double quotes.
func stripComment(l string) string {
	in := false
	for i := 0; i < len(l); i++ {
		switch {
		case l[i] == '\\' && in:
			i++
		case l[i] == '"':
			in = !in
		case !in && (l[i] == '#' || (l[i] == '/' && i+1 < len(l) && l[i+1] == '/')):
			return l[:i]
		}
	}
	return l
}
