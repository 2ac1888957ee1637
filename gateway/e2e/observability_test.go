package e2e

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

// gatewayMetrics reads the gateway's samples of one metric family, keyed by
// their label text (`code="404",method="GET",route="/v1/findings/{id}"`).
func gatewayMetrics(t *testing.T, family string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + sys.Metrics["gateway"] + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, family+"{") {
			continue
		}
		labels := line[len(family)+1 : strings.LastIndex(line, "}")]
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		require.NoError(t, err)
		out[labels] = v
	}
	require.NoError(t, sc.Err())
	return out
}

// Every response is counted under its route template, whatever answered it:
// the key check (401), the scope check (403), the rate limit (429), the
// router (404, 405) or the service.
func TestHTTPMetricsCarryRouteTemplates(t *testing.T) {
	t.Parallel()
	org := sys.Org(t, 0)
	before := gatewayMetrics(t, "http_requests_total")

	finding := "/findings/" + uuid.NewString()
	systest.RequireError(t, do(t, "GET", finding, org.ReadKey, nil), 404, "")
	systest.RequireError(t, do(t, "GET", finding, "", nil), 401, "missing")
	systest.RequireError(t, do(t, "PATCH", finding, org.ReadKey, map[string]any{"state": "resolved"}), 403, "scope")
	systest.RequireError(t, do(t, "DELETE", "/credits", org.WriteKey, nil), 405, "not allowed")
	systest.RequireError(t, do(t, "GET", "/no-such-route/"+uuid.NewString(), org.ReadKey, nil), 404, "cannot get")
	systest.RequireError(t, do(t, "GET", "/scans/"+uuid.NewString()+"/findings/export?format=json", org.ReadKey, nil), 404, "")
	limited := false
	for i := 0; i < 200 && !limited; i++ {
		limited = do(t, "GET", "/credits", org.ReadKey, nil).Status == 429
	}
	require.True(t, limited)

	after := gatewayMetrics(t, "http_requests_total")
	grew := func(labels string) bool { return after[labels] > before[labels] }
	for _, labels := range []string{
		`code="404",method="GET",route="/v1/findings/{id}"`,
		`code="401",method="GET",route="/v1/findings/{id}"`,
		`code="403",method="PATCH",route="/v1/findings/{id}"`,
		`code="405",method="DELETE",route="/v1/credits"`,
		`code="404",method="GET",route="unmatched"`,
		`code="404",method="GET",route="/v1/scans/{id}/findings/export"`,
		`code="200",method="GET",route="/v1/credits"`,
		`code="429",method="GET",route="/v1/credits"`,
	} {
		require.True(t, grew(labels), "http_requests_total{%s} counted; samples: %v", labels, after)
	}
	for labels := range after {
		require.NotContains(t, labels, `route=""`)
		require.NotContains(t, labels, "/findings/"+finding[len("/findings/"):], "ids never become labels")
	}
	latency := gatewayMetrics(t, "http_request_duration_seconds_count")
	require.Positive(t, latency[`method="PATCH",route="/v1/findings/{id}"`])
}

func tarball(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

// An upload is counted and logged once, with its organization, size, id and
// digest; the access line of every request carries its trace and span ids.
func TestUploadMetricsAndLogs(t *testing.T) {
	t.Parallel()
	org := sys.Org(t, 0)
	before := gatewayMetrics(t, "gateway_uploads_total")
	archive := tarball(t, map[string]string{"app/main.py": "print('hello " + uuid.NewString() + "')\n"})
	r := do(t, "POST", "/uploads", org.WriteKey, string(archive), "Content-Type", "application/gzip")
	require.Equal(t, 201, r.Status, string(r.Body))
	id, _ := r.JSON()["id"].(string)
	require.NotEmpty(t, id)
	systest.RequireError(t, do(t, "POST", "/uploads", org.WriteKey, "not an archive", "Content-Type", "text/plain"), 400, "content-type")

	after := gatewayMetrics(t, "gateway_uploads_total")
	require.Greater(t, after[`code="201"`], before[`code="201"`])
	require.Greater(t, after[`code="400"`], before[`code="400"`])

	var upload map[string]any
	require.Eventually(t, func() bool {
		upload = nil
		for _, line := range strings.Split(sys.Log.String(), "\n") {
			rest, ok := strings.CutPrefix(line, "[gateway] ")
			if !ok || !strings.Contains(rest, org.ID) && !strings.Contains(rest, id) {
				continue
			}
			var rec map[string]any
			if json.Unmarshal([]byte(rest), &rec) != nil {
				continue
			}
			if rec["msg"] == "upload" && rec["upload_id"] == id {
				upload = rec
			}
		}
		return upload != nil
	}, 5*time.Second, 50*time.Millisecond, "the upload is logged")
	require.Equal(t, org.ID, upload["org_id"])
	require.EqualValues(t, len(archive), upload["bytes"])
	require.EqualValues(t, 201, upload["status"])
	require.Len(t, upload["sha256"], 64)

	// The access line of a request carries the span id of its trace.
	rid := "span-check-" + uuid.NewString()
	require.Equal(t, 200, do(t, "GET", "/credits", org.ReadKey, nil, "X-Request-Id", rid).Status)
	require.Eventually(t, func() bool {
		for _, line := range strings.Split(sys.Log.String(), "\n") {
			rest, ok := strings.CutPrefix(line, "[gateway] ")
			if !ok || !strings.Contains(rest, rid) {
				continue
			}
			var rec map[string]any
			if json.Unmarshal([]byte(rest), &rec) == nil && rec["msg"] == "http" {
				span, _ := rec["span_id"].(string)
				trace, _ := rec["trace_id"].(string)
				return len(span) == 16 && len(trace) == 32
			}
		}
		return false
	}, 5*time.Second, 50*time.Millisecond, "the access line has trace_id and span_id")
}
