package gateway

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// fastOnly marshals msg on the fast path alone (never through protojson);
// ok is false when the fast path declined it.
func fastOnly(t *testing.T, m fastJSON, msg proto.Message) ([]byte, bool) {
	t.Helper()
	switch v := msg.(type) {
	case *authv1.GetCreditsResponse:
		return m.credits(v), true
	case *findingsv1.ListFindingsResponse:
		return m.page(v.Data, v.Total, v.Page, v.Limit)
	case *findingsv1.ListScanFindingsResponse:
		return m.page(v.Data, v.Total, v.Page, v.Limit)
	}
	t.Fatalf("no fast path for %T", msg)
	return nil, false
}

// requireSameAsProtojson checks that the fast path writes exactly the bytes
// the gateway's protojson options write, or declines exactly what protojson
// refuses, and that Marshal answers the same either way.
func requireSameAsProtojson(t *testing.T, m fastJSON, msg proto.Message) {
	t.Helper()
	want, wantErr := m.MarshalOptions.Marshal(msg)
	got, ok := fastOnly(t, m, msg)
	if wantErr != nil {
		require.False(t, ok, "protojson refuses it (%v), the fast path must decline", wantErr)
	} else {
		require.True(t, ok, "the fast path declined a message protojson writes: %s", want)
		require.Equal(t, string(want), string(got))
	}
	viaMarshal, err := m.Marshal(msg)
	if wantErr != nil {
		require.Error(t, err)
		return
	}
	require.NoError(t, err)
	require.Equal(t, string(want), string(viaMarshal))
}

func fullFinding() *findingsv1.Finding {
	return &findingsv1.Finding{
		Id: "7d3c1a52-0c39-4f4e-9d7b-1b0e8f0a9b11", Title: "SQL injection in login", Category: "injection", Severity: "high", State: "open",
		Description: "User input reaches a query.\nSee line 42.", AffectedFile: "src/db/login.go", AffectedCode: "db.Query(\"SELECT * FROM u WHERE n='\" + n + \"'\")",
		ProofOfConcept: wrapperspb.String("curl -d \"n=' OR 1=1 --\" http://x/login"), Tags: []string{"sql", "owasp-a03"},
		ScanId: wrapperspb.String("2f1e7c1a-5a4b-4d0e-8a51-0b5e3c0f9c22"), FoundAt: &timestamppb.Timestamp{Seconds: 1763900000, Nanos: 123456789},
		UpdatedAt: &timestamppb.Timestamp{Seconds: 1763900100}, DuplicateOf: wrapperspb.String("11111111-2222-3333-4444-555555555555"),
		Line: wrapperspb.Int32(42), Fingerprint: "sha256:0f1e2d3c4b5a69788796a5b4c3d2e1f0",
	}
}

func TestFastJSONMatchesProtojson(t *testing.T) {
	t.Parallel()
	m := newFastJSON(gatewayJSON())
	require.True(t, m.fast, "the gateway's options are the fast path's")
	unicode := fullFinding()
	unicode.Title = "日本語 — émoji 🚀, <b>&amp;</b> \u2028\u2029 \ufffd \x7f"
	unicode.Description = "ctl \x00\x01\x08\x09\x0a\x0b\x0c\x0d\x1b\x1f \"quoted\" back\\slash /slash"
	unicode.Tags = []string{"", "ü", "\t"}
	unicode.ProofOfConcept = wrapperspb.String("")
	empties := &findingsv1.Finding{Tags: []string{}, ProofOfConcept: wrapperspb.String(""), Line: wrapperspb.Int32(0),
		FoundAt: &timestamppb.Timestamp{}, UpdatedAt: &timestamppb.Timestamp{}}
	ts := func(secs int64, nanos int32) *findingsv1.Finding {
		f := fullFinding()
		f.FoundAt = &timestamppb.Timestamp{Seconds: secs, Nanos: nanos}
		return f
	}
	page := func(fs ...*findingsv1.Finding) *findingsv1.ListFindingsResponse {
		return &findingsv1.ListFindingsResponse{Data: fs, Total: int32(len(fs)), Page: 1, Limit: 15}
	}
	tests := []struct {
		name string
		msg  proto.Message
	}{
		{"credits zero", &authv1.GetCreditsResponse{}},
		{"credits", &authv1.GetCreditsResponse{Balance: 1250}},
		{"credits negative", &authv1.GetCreditsResponse{Balance: -3}},
		{"credits max", &authv1.GetCreditsResponse{Balance: math.MaxInt32}},
		{"credits min", &authv1.GetCreditsResponse{Balance: math.MinInt32}},
		{"empty page", &findingsv1.ListFindingsResponse{}},
		{"empty scan page", &findingsv1.ListScanFindingsResponse{}},
		{"empty finding", page(&findingsv1.Finding{})},
		{"empty values set", page(empties)},
		{"full", page(fullFinding(), fullFinding(), fullFinding())},
		{"scan page", &findingsv1.ListScanFindingsResponse{Data: []*findingsv1.Finding{fullFinding(), {}}, Total: 1000000, Page: 66667, Limit: 15}},
		{"unicode and escapes", page(unicode)},
		{"large ints", &findingsv1.ListFindingsResponse{Data: []*findingsv1.Finding{{Line: wrapperspb.Int32(math.MaxInt32)}, {Line: wrapperspb.Int32(math.MinInt32)}},
			Total: math.MaxInt32, Page: math.MinInt32, Limit: -1}},
		{"timestamp whole seconds", page(ts(1763900000, 0))},
		{"timestamp milliseconds", page(ts(1763900000, 120000000))},
		{"timestamp microseconds", page(ts(1763900000, 120300000+400))},
		{"timestamp nanoseconds", page(ts(1763900000, 1))},
		{"timestamp before 1970", page(ts(-1, 999999999))},
		{"timestamp first", page(ts(minTimestampSeconds, 0))},
		{"timestamp last", page(ts(maxTimestampSeconds, 999999999))},
		{"timestamp too early", page(ts(minTimestampSeconds-1, 0))},
		{"timestamp too late", page(ts(maxTimestampSeconds+1, 0))},
		{"timestamp negative nanos", page(ts(0, -1))},
		{"timestamp nanos overflow", page(ts(0, 1000000000))},
		{"invalid UTF-8 title", page(&findingsv1.Finding{Title: "a\xffb"})},
		{"invalid UTF-8 tag", page(&findingsv1.Finding{Tags: []string{"ok", "\xc3"}})},
		{"invalid UTF-8 wrapper", page(&findingsv1.Finding{ScanId: wrapperspb.String("\xed\xa0\x80")})},
		{"long text", page(&findingsv1.Finding{Description: strings.Repeat("x\"é\n", 5000)})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requireSameAsProtojson(t, m, tc.msg)
		})
	}
}

// Messages without a fast path, and options it does not write, go to
// protojson unchanged.
func TestFastJSONFallsBack(t *testing.T) {
	t.Parallel()
	m := newFastJSON(gatewayJSON())
	other := &findingsv1.GetFindingResponse{Id: "x", Title: "y"}
	want, err := m.MarshalOptions.Marshal(other)
	require.NoError(t, err)
	got, err := m.Marshal(other)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))

	got, err = m.Marshal(page1WithNil())
	require.NoError(t, err)
	want, err = m.MarshalOptions.Marshal(page1WithNil())
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "a nil list element is left to protojson")

	j := gatewayJSON()
	j.EmitUnpopulated = false
	require.False(t, newFastJSON(j).fast)
}

func page1WithNil() *findingsv1.ListFindingsResponse {
	return &findingsv1.ListFindingsResponse{Data: []*findingsv1.Finding{fullFinding(), nil}, Total: 2}
}

func FuzzFastJSONMatchesProtojson(f *testing.F) {
	f.Add("title", "desc", "tag", "poc", true, int64(1763900000), int32(5), int32(7), int32(100))
	f.Add("日本\x00\"\\", "\u2028", "", "", false, int64(-62135596800), int32(0), int32(-1), int32(math.MaxInt32))
	f.Add("a\xff", "x", "y", "z", true, int64(253402300800), int32(1000000000), int32(0), int32(0))
	m := newFastJSON(gatewayJSON())
	f.Fuzz(func(t *testing.T, title, desc, tag, poc string, hasPoc bool, secs int64, nanos, line, total int32) {
		fd := &findingsv1.Finding{Id: tag + title, Title: title, Description: desc, AffectedCode: poc + desc, Tags: []string{tag, title},
			FoundAt: &timestamppb.Timestamp{Seconds: secs, Nanos: nanos}, UpdatedAt: &timestamppb.Timestamp{Seconds: secs / 7, Nanos: nanos / 1000 * 1000},
			Line: wrapperspb.Int32(line), Fingerprint: desc}
		if hasPoc {
			fd.ProofOfConcept, fd.DuplicateOf = wrapperspb.String(poc), wrapperspb.String(tag)
		}
		requireSameAsProtojson(t, m, &findingsv1.ListFindingsResponse{Data: []*findingsv1.Finding{fd, {}}, Total: total, Page: line, Limit: nanos})
		requireSameAsProtojson(t, m, &authv1.GetCreditsResponse{Balance: total})
	})
}

func BenchmarkFindingsPageJSON(b *testing.B) {
	m := newFastJSON(gatewayJSON())
	msg := &findingsv1.ListFindingsResponse{Total: 1000000, Page: 1, Limit: 15}
	for range 15 {
		msg.Data = append(msg.Data, fullFinding())
	}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = m.Marshal(msg)
		}
	})
	b.Run("protojson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = m.bodyMarshaler.Marshal(msg)
		}
	})
}
