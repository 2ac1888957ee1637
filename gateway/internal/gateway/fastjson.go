package gateway

import (
	"bytes"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// fastJSON is the gateway's marshaler. The hottest responses (the credit
// balance and pages of findings) are written without reflection, byte for
// byte as protojson writes them under the gateway's options (proto field
// names, unpopulated fields emitted: null for an absent message or wrapper,
// [] for an empty list, "" and 0 for scalars; wrappers as their bare value;
// timestamps in RFC 3339, UTC, with 0, 3, 6 or 9 fractional digits; the same
// string escaping; and the same separator after commas, which protojson
// picks per binary). Every other message, and any value protojson would
// refuse (invalid UTF-8, a timestamp out of range), goes to protojson.
type fastJSON struct {
	bodyMarshaler
	fast bool   // the options are the ones the fast path writes
	sep  string // what follows a comma in this binary's protojson output
}

func newFastJSON(m bodyMarshaler) fastJSON {
	o := m.MarshalOptions
	return fastJSON{
		bodyMarshaler: m,
		fast: o.UseProtoNames && o.EmitUnpopulated && !o.Multiline && o.Indent == "" && !o.UseEnumNumbers && !o.EmitDefaultValues &&
			!o.AllowPartial && findingFieldsAsWritten(),
		sep: commaSeparator(o),
	}
}

// commaSeparator finds out what protojson writes after a comma: "," or ", "
// (it adds a space or not depending on the binary, to keep callers from
// relying on its exact bytes; the fast path follows it so that the two
// paths agree within one binary).
func commaSeparator(o protojson.MarshalOptions) string {
	b, err := o.Marshal(&findingsv1.ListFindingsResponse{})
	if err == nil && bytes.Contains(b, []byte(", ")) {
		return ", "
	}
	return ","
}

// findingFields are Finding's fields in declaration order, the order
// protojson writes them in. If the message changes, the fast path turns
// itself off until appendFinding is updated (the tests fail first).
var findingFields = []string{"id", "title", "category", "severity", "state", "description", "affected_file", "affected_code",
	"proof_of_concept", "tags", "scan_id", "found_at", "updated_at", "duplicate_of", "line", "fingerprint"}

func findingFieldsAsWritten() bool {
	fields := (&findingsv1.Finding{}).ProtoReflect().Descriptor().Fields()
	names := make([]string, fields.Len())
	for i := range fields.Len() {
		names[i] = string(fields.Get(i).Name())
	}
	return slices.Equal(names, findingFields) && fieldKinds(fields)
}

// fieldKinds checks the kinds appendFinding assumes for Finding's fields.
func fieldKinds(fields protoreflect.FieldDescriptors) bool {
	for i := range fields.Len() {
		fd := fields.Get(i)
		want := protoreflect.StringKind
		var msg protoreflect.FullName
		switch fd.Name() {
		case "proof_of_concept", "scan_id", "duplicate_of":
			want, msg = protoreflect.MessageKind, "google.protobuf.StringValue"
		case "found_at", "updated_at":
			want, msg = protoreflect.MessageKind, "google.protobuf.Timestamp"
		case "line":
			want, msg = protoreflect.MessageKind, "google.protobuf.Int32Value"
		}
		if fd.Kind() != want || (fd.Name() == "tags") != fd.IsList() || (msg != "" && fd.Message().FullName() != msg) {
			return false
		}
	}
	return true
}

// Marshal writes the hot messages by hand and everything else through
// protojson.
func (m fastJSON) Marshal(v any) ([]byte, error) {
	if m.fast {
		var out []byte
		var ok bool
		switch msg := v.(type) {
		case *authv1.GetCreditsResponse:
			if msg != nil {
				out, ok = m.credits(msg), true
			}
		case *findingsv1.ListFindingsResponse:
			if msg != nil {
				out, ok = m.page(msg.Data, msg.Total, msg.Page, msg.Limit)
			}
		case *findingsv1.ListScanFindingsResponse:
			if msg != nil {
				out, ok = m.page(msg.Data, msg.Total, msg.Page, msg.Limit)
			}
		}
		if ok {
			return out, nil
		}
	}
	return m.bodyMarshaler.Marshal(v)
}

func (m fastJSON) credits(msg *authv1.GetCreditsResponse) []byte {
	b := make([]byte, 0, 24)
	b = append(b, `{"balance":`...)
	b = strconv.AppendInt(b, int64(msg.GetBalance()), 10)
	return append(b, '}')
}

// page writes a findings page; ok is false when protojson would refuse it.
func (m fastJSON) page(data []*findingsv1.Finding, total, page, limit int32) (out []byte, ok bool) {
	size := 64
	for _, f := range data {
		size += findingSize(f)
	}
	b := make([]byte, 0, size)
	b = append(b, `{"data":[`...)
	for i, f := range data {
		if i > 0 {
			b = append(b, m.sep...)
		}
		if f == nil {
			return nil, false
		}
		if b, ok = m.appendFinding(b, f); !ok {
			return nil, false
		}
	}
	b = append(b, ']')
	b = m.appendInt(b, "total", total)
	b = m.appendInt(b, "page", page)
	b = m.appendInt(b, "limit", limit)
	return append(b, '}'), true
}

func (m fastJSON) appendInt(b []byte, name string, v int32) []byte {
	b = append(b, m.sep...)
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, `":`...)
	return strconv.AppendInt(b, int64(v), 10)
}

// findingSize is about the JSON size of f, to allocate the page once.
func findingSize(f *findingsv1.Finding) int {
	n := 420 + len(f.GetId()) + len(f.GetTitle()) + len(f.GetCategory()) + len(f.GetSeverity()) + len(f.GetState()) +
		len(f.GetDescription()) + len(f.GetAffectedFile()) + len(f.GetAffectedCode()) + len(f.GetProofOfConcept().GetValue()) +
		len(f.GetScanId().GetValue()) + len(f.GetDuplicateOf().GetValue()) + len(f.GetFingerprint())
	for _, t := range f.GetTags() {
		n += len(t) + 4
	}
	return n + n/16 // escapes
}

// appendFinding writes f as protojson does; ok is false when protojson
// would refuse it.
func (m fastJSON) appendFinding(b []byte, f *findingsv1.Finding) ([]byte, bool) {
	ok := true
	str := func(name, v string, first bool) {
		if !first {
			b = append(b, m.sep...)
		}
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
		if ok {
			b, ok = appendJSONString(b, v)
		}
	}
	opt := func(name string, v *wrapperspb.StringValue) {
		if v == nil {
			b = append(b, m.sep...)
			b = append(b, '"')
			b = append(b, name...)
			b = append(b, `":null`...)
			return
		}
		str(name, v.GetValue(), false)
	}
	ts := func(name string, v *timestamppb.Timestamp) {
		b = append(b, m.sep...)
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
		if v == nil {
			b = append(b, "null"...)
			return
		}
		if ok {
			b, ok = appendTimestamp(b, v)
		}
	}
	b = append(b, '{')
	str("id", f.GetId(), true)
	str("title", f.GetTitle(), false)
	str("category", f.GetCategory(), false)
	str("severity", f.GetSeverity(), false)
	str("state", f.GetState(), false)
	str("description", f.GetDescription(), false)
	str("affected_file", f.GetAffectedFile(), false)
	str("affected_code", f.GetAffectedCode(), false)
	opt("proof_of_concept", f.GetProofOfConcept())
	b = append(b, m.sep...)
	b = append(b, `"tags":[`...)
	for i, t := range f.GetTags() {
		if i > 0 {
			b = append(b, m.sep...)
		}
		if ok {
			b, ok = appendJSONString(b, t)
		}
	}
	b = append(b, ']')
	opt("scan_id", f.GetScanId())
	ts("found_at", f.GetFoundAt())
	ts("updated_at", f.GetUpdatedAt())
	opt("duplicate_of", f.GetDuplicateOf())
	b = append(b, m.sep...)
	if line := f.GetLine(); line == nil {
		b = append(b, `"line":null`...)
	} else {
		b = append(b, `"line":`...)
		b = strconv.AppendInt(b, int64(line.GetValue()), 10)
	}
	str("fingerprint", f.GetFingerprint(), false)
	return append(b, '}'), ok
}

// appendJSONString quotes s as protojson does: only '"', '\\' and control
// characters are escaped (the usual short forms, otherwise \u00XX in lower
// case); ok is false for invalid UTF-8, which protojson refuses.
func appendJSONString(b []byte, s string) ([]byte, bool) {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return b, false
			}
			i += n
			continue
		}
		if c >= ' ' && c != '"' && c != '\\' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"'), true
}

// Timestamp bounds protojson accepts: years 0001 to 9999.
const (
	minTimestampSeconds = -62135596800
	maxTimestampSeconds = 253402300799
)

// appendTimestamp writes ts quoted as protojson does; ok is false when
// protojson would refuse it.
func appendTimestamp(b []byte, ts *timestamppb.Timestamp) ([]byte, bool) {
	secs, nanos := ts.GetSeconds(), int64(ts.GetNanos())
	if secs < minTimestampSeconds || secs > maxTimestampSeconds || nanos < 0 || nanos > 999999999 {
		return b, false
	}
	b = append(b, '"')
	b = time.Unix(secs, nanos).UTC().AppendFormat(b, "2006-01-02T15:04:05")
	if nanos != 0 {
		digits := 9
		switch {
		case nanos%1000000 == 0:
			nanos, digits = nanos/1000000, 3
		case nanos%1000 == 0:
			nanos, digits = nanos/1000, 6
		}
		var frac [9]byte
		for d := digits - 1; d >= 0; d-- {
			frac[d] = byte('0' + nanos%10)
			nanos /= 10
		}
		b = append(b, '.')
		b = append(b, frac[:digits]...)
	}
	return append(b, 'Z', '"'), true
}
