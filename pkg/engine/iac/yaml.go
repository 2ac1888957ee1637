package iac

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/vulnscan/vulnscan/pkg/engine/finding"
)

const maxYAMLDocs = 200

// decodeAll decodes every YAML document, stopping at the first error.
func decodeAll(data []byte) []*yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for len(docs) < maxYAMLDocs {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if !errors.Is(err, io.EOF) {
				break
			}
			break
		}
		if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
			docs = append(docs, n.Content[0])
		}
	}
	return docs
}

// get follows a path of mapping keys.
func get(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
				break
			}
		}
		n = next
	}
	return n
}

func val(n *yaml.Node, keys ...string) string {
	if v := get(n, keys...); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

func items(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

var dangerousCaps = map[string]bool{"ALL": true, "SYS_ADMIN": true, "NET_ADMIN": true, "SYS_PTRACE": true, "SYS_MODULE": true, "DAC_READ_SEARCH": true, "NET_RAW": false}

// CheckKubernetes checks the pod specs of every workload in a manifest.
func CheckKubernetes(rel string, data []byte) []finding.Finding {
	lines := splitLines(data)
	var out []finding.Finding
	for _, doc := range decodeAll(data) {
		kind := val(doc, "kind")
		name := val(doc, "metadata", "name")
		var spec *yaml.Node
		switch kind {
		case "Pod":
			spec = get(doc, "spec")
		case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "ReplicationController":
			spec = get(doc, "spec", "template", "spec")
		case "CronJob":
			spec = get(doc, "spec", "jobTemplate", "spec", "template", "spec")
		}
		if spec == nil || spec.Kind != yaml.MappingNode {
			continue
		}
		id := kind + "/" + name
		for _, k := range []string{"hostNetwork", "hostPID", "hostIPC"} {
			if v := get(spec, k); v != nil && v.Value == "true" {
				out = append(out, at("k8s.host-namespace", rel, "kubernetes", lines, v.Line, id+":"+k))
			}
		}
		for _, vol := range items(get(spec, "volumes")) {
			if hp := get(vol, "hostPath"); hp != nil {
				out = append(out, at("k8s.host-path", rel, "kubernetes", lines, keyLine(vol, "hostPath"), id+":"+val(vol, "name")))
			}
		}
		podNonRoot := val(spec, "securityContext", "runAsNonRoot") == "true"
		podUser := val(spec, "securityContext", "runAsUser")
		var containers []*yaml.Node
		containers = append(containers, items(get(spec, "containers"))...)
		containers = append(containers, items(get(spec, "initContainers"))...)
		for _, c := range containers {
			cid := id + "/" + val(c, "name")
			line := c.Line
			sc := get(c, "securityContext")
			if v := get(sc, "privileged"); v != nil && v.Value == "true" {
				out = append(out, at("k8s.privileged", rel, "kubernetes", lines, v.Line, cid))
			}
			if v := get(sc, "allowPrivilegeEscalation"); v != nil && v.Value == "true" {
				out = append(out, at("k8s.privilege-escalation", rel, "kubernetes", lines, v.Line, cid))
			}
			for _, capn := range items(get(sc, "capabilities", "add")) {
				if dangerousCaps[strings.ToUpper(strings.TrimPrefix(capn.Value, "CAP_"))] {
					out = append(out, at("k8s.dangerous-capabilities", rel, "kubernetes", lines, capn.Line, cid+":"+capn.Value))
				}
			}
			nonRoot := podNonRoot
			if v := val(sc, "runAsNonRoot"); v != "" {
				nonRoot = v == "true"
			}
			user := podUser
			if v := val(sc, "runAsUser"); v != "" {
				user = v
			}
			if user == "0" || (!nonRoot && (user == "")) {
				out = append(out, at("k8s.run-as-root", rel, "kubernetes", lines, line, cid))
			}
		}
	}
	return out
}

var (
	untrustedExpr = regexp.MustCompile(`\$\{\{\s*github\.(event\.(issue\.(title|body)|pull_request\.(title|body|head\.ref|head\.label)|comment\.body|review\.body|review_comment\.body|pages\.[^}]*page_name|commits\.[^}]*\.(message|author\.(email|name))|head_commit\.(message|author\.(email|name))|workflow_run\.head_branch)|head_ref)\s*\}\}`)
	headRef       = regexp.MustCompile(`github\.event\.pull_request\.head\.(sha|ref)|github\.head_ref|refs/pull/`)
)

// CheckWorkflow checks one GitHub Actions workflow.
func CheckWorkflow(rel string, data []byte) []finding.Finding {
	lines := splitLines(data)
	var out []finding.Finding
	for _, doc := range decodeAll(data) {
		on := get(doc, "on")
		if on == nil {
			on = get(doc, "true") // YAML 1.1 reads a bare on: as a boolean key
		}
		prt := false
		if on != nil {
			switch on.Kind {
			case yaml.ScalarNode:
				prt = on.Value == "pull_request_target"
			case yaml.SequenceNode:
				for _, e := range on.Content {
					prt = prt || e.Value == "pull_request_target"
				}
			case yaml.MappingNode:
				prt = get(on, "pull_request_target") != nil
			}
		}
		if v := get(doc, "permissions"); v != nil && v.Value == "write-all" {
			out = append(out, at("ci.write-all-permissions", rel, "github-actions", lines, v.Line, "permissions"))
		}
		jobs := get(doc, "jobs")
		if jobs == nil || jobs.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(jobs.Content); i += 2 {
			jobName, job := jobs.Content[i].Value, jobs.Content[i+1]
			if v := get(job, "permissions"); v != nil && v.Value == "write-all" {
				out = append(out, at("ci.write-all-permissions", rel, "github-actions", lines, v.Line, jobName+":permissions"))
			}
			for si, st := range items(get(job, "steps")) {
				if uses := val(st, "uses"); prt && strings.HasPrefix(uses, "actions/checkout") {
					if ref := get(st, "with", "ref"); ref != nil && headRef.MatchString(ref.Value) {
						out = append(out, at("ci.pull-request-target-checkout", rel, "github-actions", lines, ref.Line, jobName+":checkout"))
					}
				}
				for _, k := range []string{"run", "script"} {
					key := k
					n := get(st, key)
					if n == nil && key == "script" {
						n = get(st, "with", "script")
					}
					if n == nil || n.Kind != yaml.ScalarNode {
						continue
					}
					if m := untrustedExpr.FindString(n.Value); m != "" {
						line := n.Line
						for off, l := range strings.Split(n.Value, "\n") {
							if strings.Contains(l, m) {
								if n.Style == yaml.LiteralStyle || n.Style == yaml.FoldedStyle {
									line = n.Line + 1 + off
								}
								break
							}
						}
						out = append(out, at("ci.script-injection", rel, "github-actions", lines, line, jobName+":"+itoa(si)+":"+m))
					}
				}
			}
		}
	}
	return out
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// keyLine returns the line of a mapping key.
func keyLine(n *yaml.Node, key string) int {
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i].Line
			}
		}
	}
	return 0
}
