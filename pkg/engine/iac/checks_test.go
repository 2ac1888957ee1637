package iac_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/iac"
)

// check runs the checks of kind over one file and renders the findings as
// "rule:line", in order, after checking what every finding carries.
func check(t *testing.T, kind, rel, data string) []string {
	t.Helper()
	out := []string{}
	for _, f := range iac.Check(kind, rel, []byte(data)) {
		require.Equal(t, rel, f.AffectedFile)
		require.NotEmpty(t, f.AffectedCode, "%s has a snippet", f.RuleID)
		require.Equal(t, f.StartLine, f.EndLine)
		require.Contains(t, f.Tags, f.RuleID)
		require.NotEmpty(t, f.Category)
		require.NotEmpty(t, f.Severity)
		require.NotEmpty(t, f.FingerprintKey)
		out = append(out, fmt.Sprintf("%s:%d", f.RuleID, f.StartLine))
	}
	return out
}

// checkCase is one file and the "rule:line" findings it must produce
// (none: a safe variant).
type checkCase struct {
	name, data string
	want       []string
}

func runChecks(t *testing.T, kind, rel string, cases []checkCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := tc.want
			if want == nil {
				want = []string{}
			}
			require.Equal(t, want, check(t, kind, rel, tc.data))
		})
	}
}

// securityGroup is an aws_security_group with one rule block.
func securityGroup(block, from, to, cidrKey, cidr string) string {
	return fmt.Sprintf(`resource "aws_security_group" "s" {
  %s {
    from_port   = %s
    to_port     = %s
    %s = ["%s"]
  }
}`, block, from, to, cidrKey, cidr)
}

func TestKindOfFiles(t *testing.T) {
	t.Parallel()
	k8s := "apiVersion: v1\nkind: Pod\n"
	cases := []struct {
		path, data, want string
	}{
		{"Dockerfile", "", iac.Dockerfile},
		{"svc/DOCKERFILE", "", iac.Dockerfile},
		{"Dockerfile.prod", "", iac.Dockerfile},
		{"web.dockerfile", "", iac.Dockerfile},
		{"Containerfile", "", iac.Dockerfile},
		{"Dockerfile-old", "", ""},
		{"main.tf", "", iac.Terraform},
		{"main.tf.json", "", ""},
		{".github/workflows/ci.yaml", "", iac.Workflow},
		{"sub/.github/workflows/ci.yml", "", iac.Workflow},
		{".github/ci.yml", "on: push", ""},
		{"k8s/pod.yml", k8s, iac.Kubernetes},
		{"k8s/pod.yaml", "apiVersion: v1\n", ""},
		{"k8s/pod.yaml", "kind: Pod\n", ""},
		{"k8s/pod.json", k8s, ""},
		{"values.yaml", "  apiVersion: v1\nkind: Pod\n", ""},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, iac.Kind(tc.path, []byte(tc.data)), "%s %q", tc.path, tc.data)
	}
}

func TestCheckUnknownKind(t *testing.T) {
	t.Parallel()
	require.Empty(t, iac.Check("helm", "x", []byte("FROM alpine\n")))
	require.Empty(t, iac.Check("", "x", nil))
}

func TestDockerfileChecks(t *testing.T) {
	t.Parallel()
	cases := []checkCase{
		{"pinned image with a user", "FROM alpine:3.19\nUSER app\n", nil},
		{"no tag and no user", "FROM alpine\nRUN true\n", []string{"docker.unpinned-base:1", "docker.user-root:1"}},
		{"latest tag", "FROM node:latest\nUSER node\n", []string{"docker.unpinned-base:1"}},
		{"digest is pinned", "FROM alpine@sha256:abc\nUSER 1000\n", nil},
		{"registry port is not a tag", "FROM registry:5000/team/app\nUSER app\n", []string{"docker.unpinned-base:1"}},
		{"registry port with tag", "FROM registry:5000/team/app:1.2\nUSER app\n", nil},
		{"platform flag", "FROM --platform=linux/amd64 golang\nUSER app\n", []string{"docker.unpinned-base:1"}},
		{"scratch needs no tag", "FROM scratch\nUSER 65532\n", nil},
		{"build argument image", "ARG BASE=alpine\nFROM $BASE\nUSER app\n", nil},
		{"earlier stage reused", "FROM golang:1.22 AS build\nRUN go build\nFROM build\nUSER app\n", nil},
		{"user root explicitly", "FROM alpine:3\nUSER root\n", []string{"docker.user-root:2"}},
		{"user zero with group", "FROM alpine:3\nUSER 0:0\n", []string{"docker.user-root:2"}},
		{"user of a build stage only", "FROM golang:1.22 AS b\nUSER app\nFROM alpine:3\nCOPY --from=b /x /x\n", []string{"docker.user-root:3"}},
		{"user set then reset to root", "FROM alpine:3\nUSER app\nUSER root\n", []string{"docker.user-root:3"}},
		{"lowercase instructions", "from alpine:3\nuser app\n", nil},
		{"comments and blank lines", "# FROM ubuntu\n\nFROM alpine:3\n  # USER root\nUSER app\n", nil},
		{"curl piped to sh", "FROM alpine:3\nRUN curl -fsSL https://x/i.sh | sh\nUSER app\n", []string{"docker.curl-pipe-shell:2"}},
		{"wget piped to sudo bash", "FROM alpine:3\nRUN wget -qO- https://x | sudo bash\nUSER app\n", []string{"docker.curl-pipe-shell:2"}},
		{"curl saved to a file", "FROM alpine:3\nRUN curl -o /tmp/i.sh https://x && sha256sum -c sums\nUSER app\n", nil},
		{"ADD of a URL", "FROM alpine:3\nADD https://x/app.tgz /app\nUSER app\n", []string{"docker.add-remote:2"}},
		{"ADD of a URL with flags", "FROM alpine:3\nADD --chown=app https://x/app.tgz /app\nUSER app\n", []string{"docker.add-remote:2"}},
		{"ADD of a local file", "FROM alpine:3\nADD app.tgz /app\nUSER app\n", nil},
		{"windows line endings", "FROM alpine\r\nUSER app\r\n", []string{"docker.unpinned-base:1"}},
		{"empty file", "", nil},
	}
	runChecks(t, iac.Dockerfile, "Dockerfile", cases)
}

func TestTerraformChecks(t *testing.T) {
	t.Parallel()
	cases := []checkCase{
		{"public bucket acl", `resource "aws_s3_bucket" "b" {
  acl = "public-read"
}`, []string{"terraform.public-bucket:2"}},
		{"private bucket acl", `resource "aws_s3_bucket" "b" {
  acl = "private"
}`, nil},
		{"acl outside a resource", `locals {
  acl = "public-read"
}`, nil},
		{"gcs all users", `resource "google_storage_bucket_iam_member" "m" {
  member = "allUsers"
}`, []string{"terraform.public-bucket:2"}},
		{"public database", `resource "aws_db_instance" "d" {
  publicly_accessible = true
  storage_encrypted   = false
}`, []string{"terraform.public-database:2", "terraform.unencrypted-storage:3"}},
		{"private encrypted database", `resource "aws_db_instance" "d" {
  publicly_accessible = false
  storage_encrypted   = true
}`, nil},
		{"public access block off", `resource "aws_s3_bucket_public_access_block" "p" {
  block_public_acls       = false
  block_public_policy     = true
  ignore_public_acls      = false
  restrict_public_buckets = true
}`, []string{"terraform.public-access-block-disabled:2", "terraform.public-access-block-disabled:4"}},
		{"ssh open to the world", securityGroup("ingress", "22", "22", "cidr_blocks", "0.0.0.0/0"), []string{"terraform.open-security-group:5"}},
		{"https open to the world", securityGroup("ingress", "443", "443", "cidr_blocks", "0.0.0.0/0"), nil},
		{"all ports open over ipv6", securityGroup("ingress", "0", "65535", "ipv6_cidr_blocks", "::/0"), []string{"terraform.open-security-group:5"}},
		{"egress to the world", securityGroup("egress", "0", "0", "cidr_blocks", "0.0.0.0/0"), nil},
		{"ssh from a private range", securityGroup("ingress", "22", "22", "cidr_blocks", "10.0.0.0/8"), nil},
		{"separate ingress rule resource", `resource "aws_security_group_rule" "r" {
  type        = "ingress"
  from_port   = 3306
  to_port     = 3306
  cidr_blocks = ["0.0.0.0/0"]
}`, []string{"terraform.open-security-group:5"}},
		{"separate egress rule resource", `resource "aws_security_group_rule" "r" {
  type        = "egress"
  from_port   = 3306
  to_port     = 3306
  cidr_blocks = ["0.0.0.0/0"]
}`, nil},
		{"gcp firewall without ports", `resource "google_compute_firewall" "f" {
  source_ranges = ["0.0.0.0/0"]
}`, []string{"terraform.open-security-group:2"}},
		{"commented out settings", `resource "aws_s3_bucket" "b" {
  # acl = "public-read"
  // publicly_accessible = true
  tags = { note = "acl = public-read # not a comment" }
}`, nil},
		{"trailing comment after a value", `resource "aws_db_instance" "d" {
  publicly_accessible = true # temporary
}`, []string{"terraform.public-database:2"}},
	}
	runChecks(t, iac.Terraform, "main.tf", cases)
}

func TestKubernetesChecks(t *testing.T) {
	t.Parallel()
	pod := func(spec string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n" + spec
	}
	// nonRootPod is a pod that runs as non-root, with one container of the
	// given security context (indented under it).
	nonRootPod := func(sc string) string {
		return pod("  securityContext:\n    runAsNonRoot: true\n  containers:\n    - name: a\n      securityContext:\n" + sc)
	}
	cases := []checkCase{
		{"hardened pod", pod(`  securityContext:
    runAsNonRoot: true
  containers:
    - name: a
      image: a:1
`), nil},
		{"container may run as root", pod(`  containers:
    - name: a
      image: a:1
`), []string{"k8s.run-as-root:7"}},
		{"container runs as uid zero despite the pod", nonRootPod(`        runAsUser: 0
`), []string{"k8s.run-as-root:9"}},
		{"non-zero user is enough", pod(`  containers:
    - name: a
      securityContext:
        runAsUser: 1000
`), nil},
		{"container overrides the pod to allow root", nonRootPod(`        runAsNonRoot: false
`), []string{"k8s.run-as-root:9"}},
		{"privileged, escalation and capabilities", nonRootPod(`        privileged: true
        allowPrivilegeEscalation: true
        capabilities:
          add: ["NET_BIND_SERVICE", "CAP_SYS_ADMIN", "all"]
`), []string{"k8s.privileged:11", "k8s.privilege-escalation:12", "k8s.dangerous-capabilities:14", "k8s.dangerous-capabilities:14"}},
		{"privileged false", nonRootPod(`        privileged: false
        allowPrivilegeEscalation: false
        capabilities:
          add: [NET_RAW]
`), nil},
		{"host namespaces and paths", pod(`  hostNetwork: true
  hostIPC: false
  securityContext:
    runAsNonRoot: true
  volumes:
    - name: sock
      hostPath:
        path: /var/run/docker.sock
    - name: tmp
      emptyDir: {}
  containers:
    - name: a
`), []string{"k8s.host-namespace:6", "k8s.host-path:12"}},
		{"init containers are checked", pod(`  securityContext:
    runAsNonRoot: true
  initContainers:
    - name: init
      securityContext:
        privileged: true
  containers:
    - name: a
`), []string{"k8s.privileged:11"}},
		{"deployment template", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  template:
    spec:
      containers:
        - name: a
`, []string{"k8s.run-as-root:9"}},
		{"non-workload kinds are ignored", `apiVersion: v1
kind: ConfigMap
metadata:
  name: c
spec:
  containers:
    - name: a
`, nil},
		{"second document", `apiVersion: v1
kind: Service
metadata: {name: s}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: d}
spec:
  template:
    spec:
      hostPID: true
      securityContext: {runAsNonRoot: true}
      containers: [{name: a}]
`, []string{"k8s.host-namespace:11"}},
		{"malformed yaml", "apiVersion: v1\nkind: Pod\nspec: [\n", nil},
		{"spec that is not a mapping", pod("  - a\n"), nil},
	}
	runChecks(t, iac.Kubernetes, "k8s/p.yaml", cases)
}

func TestWorkflowChecks(t *testing.T) {
	t.Parallel()
	// checkoutHead is a workflow on the given trigger that checks out the
	// pull request's head commit.
	checkoutHead := func(on string) string {
		return "on: " + on + "\njobs:\n  build:\n    steps:\n      - uses: actions/checkout@v4\n        with:\n" +
			"          ref: ${{ github.event.pull_request.head.sha }}\n"
	}
	cases := []checkCase{
		{"pull_request_target checking out the head", checkoutHead("pull_request_target"), []string{"ci.pull-request-target-checkout:7"}},
		{"pull_request_target in a list", `on: [push, pull_request_target]
jobs:
  build:
    steps:
      - uses: actions/checkout@v4
        with: {ref: "${{ github.head_ref }}"}
`, []string{"ci.pull-request-target-checkout:6"}},
		{"pull_request_target as a mapping", `on:
  pull_request_target:
    types: [opened]
jobs:
  build:
    steps:
      - uses: actions/checkout@v4
        with:
          ref: refs/pull/${{ github.event.number }}/merge
`, []string{"ci.pull-request-target-checkout:9"}},
		{"pull_request_target checking out the base", `on: pull_request_target
jobs:
  build:
    steps:
      - uses: actions/checkout@v4
`, nil},
		{"pull_request checking out the head", checkoutHead("pull_request"), nil},
		{"title in a run script", `on: issues
jobs:
  triage:
    steps:
      - run: |
          echo "start"
          echo "${{ github.event.issue.title }}"
`, []string{"ci.script-injection:7"}},
		{"branch name in a single-line run", `on: pull_request
jobs:
  b:
    steps:
      - run: echo ${{ github.head_ref }}
`, []string{"ci.script-injection:5"}},
		{"github-script body", `on: issue_comment
jobs:
  b:
    steps:
      - uses: actions/github-script@v7
        with:
          script: |
            console.log("${{ github.event.comment.body }}")
`, []string{"ci.script-injection:8"}},
		{"trusted expressions", `on: push
jobs:
  b:
    steps:
      - run: echo ${{ github.sha }} ${{ github.event.issue.number }}
      - env:
          TITLE: ${{ github.event.issue.title }}
        run: echo "$TITLE"
`, nil},
		{"write-all at top and job level", `on: push
permissions: write-all
jobs:
  a:
    permissions: write-all
    steps: []
  b:
    permissions:
      contents: read
`, []string{"ci.write-all-permissions:2", "ci.write-all-permissions:5"}},
		{"jobs as a list", "on: push\njobs: [a, b]\n", nil},
		{"empty document", "", nil},
	}
	runChecks(t, iac.Workflow, ".github/workflows/ci.yml", cases)
}

func TestFingerprintKeysDistinguishResources(t *testing.T) {
	t.Parallel()
	data := `resource "aws_db_instance" "a" {
  publicly_accessible = true
}
resource "aws_db_instance" "b" {
  publicly_accessible = true
}
`
	fs := iac.CheckTerraform("main.tf", []byte(data))
	require.Len(t, fs, 2)
	require.NotEqual(t, fs[0].FingerprintKey, fs[1].FingerprintKey)
}
