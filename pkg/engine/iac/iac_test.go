package iac

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path, data, want string
	}{
		{"Dockerfile", "", Dockerfile},
		{"build/api.Dockerfile", "", Dockerfile},
		{"infra/main.tf", "", Terraform},
		{".github/workflows/ci.yml", "on: push", Workflow},
		{"k8s/dep.yaml", "apiVersion: apps/v1\nkind: Deployment\n", Kubernetes},
		{"config.yaml", "name: x\n", ""},
		{"main.go", "", ""},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, Kind(tc.path, []byte(tc.data)), tc.path)
	}
}

func TestCronJobAndMultiDoc(t *testing.T) {
	t.Parallel()
	src := `apiVersion: v1
kind: Service
metadata: {name: s}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: c}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          hostPID: true
          securityContext: {runAsNonRoot: true}
          containers:
            - name: c
              image: x:1
`
	out := CheckKubernetes("c.yaml", []byte(src))
	require.Len(t, out, 1)
	require.Equal(t, "k8s.host-namespace", out[0].RuleID)
	require.Equal(t, 13, out[0].StartLine)
}

func fuzzCheck(t *testing.T, kind string, data []byte) {
	for _, f := range Check(kind, "f", data) {
		require.GreaterOrEqual(t, f.StartLine, 1)
		require.NotEmpty(t, f.RuleID)
	}
}

func FuzzDockerfile(f *testing.F) {
	f.Add([]byte("FROM alpine\nRUN curl x | sh\nUSER 0\n"))
	f.Add([]byte("FROM a AS b\nFROM b\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzCheck(t, Dockerfile, data) })
}

func FuzzKubernetes(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    securityContext: {privileged: true}\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte(strings.Repeat("- ", 1000)))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzCheck(t, Kubernetes, data) })
}

func FuzzTerraform(f *testing.F) {
	f.Add([]byte("resource \"aws_security_group\" \"a\" {\n ingress {\n from_port = 22\n cidr_blocks = [\"0.0.0.0/0\"]\n }\n}\n"))
	f.Add([]byte("}}}}{{{{ acl = \"public-read\""))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzCheck(t, Terraform, data) })
}

func FuzzWorkflow(f *testing.F) {
	f.Add([]byte("on: pull_request_target\njobs:\n  a:\n    steps:\n      - uses: actions/checkout@v4\n        with: {ref: '${{ github.event.pull_request.head.sha }}'}\n"))
	f.Add([]byte("on: [push]\njobs: [1, 2]\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzCheck(t, Workflow, data) })
}
