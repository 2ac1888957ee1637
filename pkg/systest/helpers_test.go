package systest

import (
	"archive/zip"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestZip(t *testing.T) {
	t.Parallel()
	b, err := Zip(map[string]string{"app.py": FlaskApp, "lib/x.py": "x = 1\n"})
	require.NoError(t, err)
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	got := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		body, err := io.ReadAll(rc)
		require.NoError(t, err)
		_ = rc.Close()
		got[f.Name] = string(body)
	}
	require.Equal(t, map[string]string{"app.py": FlaskApp, "lib/x.py": "x = 1\n"}, got)
}

func TestRecorder(t *testing.T) {
	t.Parallel()
	r := NewRecorder(t, func(c Call, n int) (int, string) {
		return http.StatusCreated, `{"n":` + string(rune('0'+n)) + `}`
	})
	r.FailNext(1, http.StatusServiceUnavailable)
	post := func(body string) (int, string) {
		resp, err := http.Post(r.URL+"/hook", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, _ := post(`{"a":1}`)
	require.Equal(t, http.StatusServiceUnavailable, code)
	code, body := post(`{"a":2}`)
	require.Equal(t, http.StatusCreated, code)
	require.Equal(t, `{"n":0}`, body, "failures do not count as answers")
	_, body = post(`{"a":3}`)
	require.Equal(t, `{"n":1}`, body)

	calls := r.Calls()
	require.Len(t, calls, 3)
	require.Equal(t, "POST", calls[0].Method)
	require.Equal(t, "/hook", calls[0].Path)
	require.Equal(t, http.StatusServiceUnavailable, calls[0].Status)
	ok := r.Succeeded()
	require.Len(t, ok, 2)
	require.EqualValues(t, 2, ok[0].JSON()["a"])
}

func TestWebhookReceiver(t *testing.T) {
	t.Parallel()
	r := NewWebhookReceiver(t)
	r.FailNext(1)
	send := func() int {
		req, err := http.NewRequest(http.MethodPost, r.URL, strings.NewReader(`{"type":"scan.completed","data":{"scan":{"id":"s1"}}}`))
		require.NoError(t, err)
		req.Header.Set("webhook-id", "msg_1")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusInternalServerError, send())
	require.Equal(t, http.StatusNoContent, send())
	got := r.WaitFor(t, 2, time.Second, "scan.completed", OfType("scan.completed"))
	require.Equal(t, "msg_1", got[0].ID)
	require.Equal(t, http.StatusInternalServerError, got[0].Answered)
	require.Equal(t, http.StatusNoContent, got[1].Answered)
	require.Equal(t, map[string]any{"scan": map[string]any{"id": "s1"}}, got[1].Data())
}

func TestSlowSiteRelease(t *testing.T) {
	t.Parallel()
	s := NewSlowSite(t)
	s.Release()
	resp, err := http.Get(s.URL)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Contains(t, string(b), "done", "a released site answers at once, with no links")
	require.EqualValues(t, 1, s.Hits())
	select {
	case <-s.Arrived:
	default:
		t.Fatal("the request's arrival was not told")
	}
}

func TestRequireErrorAcceptsFieldMessages(t *testing.T) {
	t.Parallel()
	h := http.Header{"Content-Type": {"application/json"}}
	RequireError(t, Response{Status: 400, Header: h, Body: []byte(`{"statusCode":400,"message":["repos: expected an array"],"error":"Bad Request"}`)}, 400, "REPOS")
	RequireError(t, Response{Status: 404, Header: h, Body: []byte(`{"statusCode":404,"message":"Scan not found","error":"Not Found"}`)}, 404, "scan not")
}

func TestUploadScan(t *testing.T) {
	t.Parallel()
	require.Equal(t, map[string]any{"cost_estimation_id": "e", "repos": []map[string]any{{"url": "u", "branch": "", "source": "upload"}}}, UploadScan("e", "u"))
	require.Equal(t, []string{"http://a/"}, UploadScan("e", "u", "http://a/")["target_urls"])
}
