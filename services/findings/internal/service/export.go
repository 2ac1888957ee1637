package service

import (
	"bytes"
	"context"
	"encoding/csv"
	"strconv"
	"strings"
	"time"
	"unicode"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/sarif"
	"github.com/vulnscan/vulnscan/pkg/validate"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// chunkSize is roughly how much of an export is sent per stream message.
const chunkSize = 32 << 10

var exportJSON = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// ExportScanFindings streams a scan's approved findings, row by row from the
// database, in chunks that the gateway copies to the client as they come.
func (p *Public) ExportScanFindings(req *findingsv1.ExportScanFindingsRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	ctx := stream.Context()
	caller, err := principal.From(ctx)
	if err != nil {
		return err
	}
	if err := validate.UUID("id", req.GetId()); err != nil {
		return err
	}
	format := req.GetFormat()
	if format == "" {
		format = "json"
	}
	if err := validate.OneOf("format", format, "json", "csv", "sarif"); err != nil {
		return err
	}
	f, _, _, err := filter(caller.OrgID, listQuery{severity: req.GetSeverity(), state: req.GetState(), search: req})
	if err != nil {
		return err
	}
	if err := p.checkScan(ctx, caller.OrgID, req.GetId()); err != nil {
		return err
	}
	f.ScanID = req.GetId()
	f.Desc = true

	contentType, ext := map[string][2]string{
		"json":  {"application/json", "json"},
		"csv":   {"text/csv; charset=utf-8", "csv"},
		"sarif": {"application/sarif+json", "sarif"},
	}[format][0], format
	if err := stream.SendHeader(metadata.Pairs("content-disposition",
		`attachment; filename="findings-`+req.GetId()+`.`+ext+`"`)); err != nil {
		return err
	}

	var buf bytes.Buffer
	send := func() error {
		b := buf.Bytes()
		if len(b) == 0 {
			buf.Reset()
			return nil
		}
		err := stream.Send(&httpbody.HttpBody{ContentType: contentType, Data: append([]byte(nil), b...)})
		buf.Reset()
		return err
	}

	switch format {
	case "json":
		return p.streamArray(ctx, f, &buf, send, []byte("["), func(fd store.Finding, _ store.Extra) ([]byte, error) {
			return exportJSON.Marshal(findingProto(fd))
		}, func() ([]byte, error) { return []byte("]"), nil })

	case "csv":
		w := csv.NewWriter(&buf)
		_ = w.Write(csvHeader)
		err = p.Store.Each(ctx, f, func(fd store.Finding, x store.Extra) error {
			_ = w.Write(csvRow(fd, x))
			w.Flush()
			if buf.Len() >= chunkSize {
				return send()
			}
			return w.Error()
		})
		if err != nil {
			return err
		}
		w.Flush()
		return send()

	default:
		rules := sarif.NewRules()
		return p.streamArray(ctx, f, &buf, send, sarif.Head(), func(fd store.Finding, x store.Extra) ([]byte, error) {
			return rules.Result(sarifFinding(fd, x))
		}, rules.Tail)
	}
}

// streamArray writes one JSON array of the filtered findings, for the JSON
// export and for SARIF's results alike: open, each finding's element
// (elem) separated by commas, then the closing bytes tail returns, sending a
// chunk whenever buf has grown past chunkSize.
func (p *Public) streamArray(ctx context.Context, f store.Filter, buf *bytes.Buffer, send func() error, open []byte,
	elem func(store.Finding, store.Extra) ([]byte, error), tail func() ([]byte, error),
) error {
	buf.Write(open)
	n := 0
	err := p.Store.Each(ctx, f, func(fd store.Finding, x store.Extra) error {
		b, err := elem(fd, x)
		if err != nil {
			return err
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		buf.Write(b)
		if buf.Len() >= chunkSize {
			return send()
		}
		return nil
	})
	if err != nil {
		return err
	}
	t, err := tail()
	if err != nil {
		return err
	}
	buf.Write(t)
	return send()
}

// sarifFinding is a stored finding as the shared SARIF renderer takes it.
func sarifFinding(f store.Finding, x store.Extra) sarif.Finding {
	return sarif.Finding{ID: f.ID, Title: f.Title, Category: f.Category, Severity: f.Severity, State: f.State,
		Description: f.Description, AffectedFile: f.AffectedFile, AffectedCode: f.AffectedCode, Tags: f.Tags,
		ScanID: f.ScanID, DuplicateOf: f.DuplicateOf, StartLine: x.StartLine, EndLine: x.EndLine, Fingerprint: x.Fingerprint}
}

var csvHeader = []string{"id", "title", "category", "severity", "state", "description", "affected_file", "start_line", "end_line",
	"affected_code", "proof_of_concept", "tags", "scan_id", "found_at", "updated_at", "duplicate_of", "fingerprint"}

// cell neutralizes spreadsheet formulas following OWASP's CSV injection
// advice: a cell whose first character is = + - @ tab (0x09) or carriage
// return (0x0D) is prefixed with a single quote, and so is a cell whose
// first such character only follows leading whitespace or line breaks
// (" =1+1", "\n@SUM(A1)"), because spreadsheets skip those before parsing a
// formula. Embedded double quotes are escaped by the CSV writer (doubled,
// the cell quoted). The quote changes what a spreadsheet shows, never what
// the JSON or SARIF exports carry.
func cell(s string) string {
	if s == "" {
		return s
	}
	if strings.ContainsRune(formulaStart, rune(s[0])) {
		return "'" + s
	}
	t := strings.TrimLeftFunc(s, unicode.IsSpace)
	if t != "" && strings.ContainsRune(formulaStart, rune(t[0])) {
		return "'" + s
	}
	return s
}

// formulaStart are the characters OWASP lists as starting a formula.
const formulaStart = "=+-@\t\r"

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func csvRow(f store.Finding, x store.Extra) []string {
	return []string{f.ID, cell(f.Title), f.Category, f.Severity, f.State, cell(f.Description), cell(f.AffectedFile),
		strconv.Itoa(int(x.StartLine)), strconv.Itoa(int(x.EndLine)), cell(f.AffectedCode), cell(deref(f.ProofOfConcept)),
		cell(strings.Join(f.Tags, ";")), f.ScanID, f.FoundAt.UTC().Format(time.RFC3339Nano), f.UpdatedAt.UTC().Format(time.RFC3339Nano),
		deref(f.DuplicateOf), x.Fingerprint}
}
