package service_test

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/vulnscan/vulnscan/pkg/validate"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// BenchmarkTextCheck measures the text checks every service applies to the
// requests it receives (and every caller to those it sends, see
// server.CheckText), beside marshalling the same request, its floor: a
// report of 100 findings and a list request.
func BenchmarkTextCheck(b *testing.B) {
	req := &findingsv1.ReportFindingsRequest{ScanId: "0a1b2c3d-4e5f-4a6b-8c7d-9e8f7a6b5c4d"}
	for i := range 100 {
		req.Findings = append(req.Findings, &findingsv1.ReportedFinding{Fingerprint: fmt.Sprintf("fp-%040d", i), Title: "SQL injection in order lookup", Category: "injection", Severity: "high",
			Description:  "Untrusted data reaches a SQL query built by concatenation; use parameters. Why we report this: the path is complete and no sanitizer is on it.",
			AffectedFile: fmt.Sprintf("app/handlers/user%d.py", i), AffectedCode: "def get(name):\n    cursor.execute(\"SELECT * FROM users WHERE name = '\" + name + \"'\")\n    return cursor.fetchall()\n",
			Tags: []string{"python.sqli", "CWE-89", "A03:2021-Injection", "python", "confidence:high"}, StartLine: 10, EndLine: 12, Verified: true, MermaidTrace: wrapperspb.String("graph TD; A-->B")})
	}
	small := &findingsv1.ListFindingsRequest{Severity: "high", State: "open", SortBy: "severity"}
	for _, r := range []struct {
		name string
		msg  proto.Message
	}{{"report", req}, {"list", small}} {
		b.Run(r.name+"/check", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := validate.Text(r.msg); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(r.name+"/marshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := proto.Marshal(r.msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
