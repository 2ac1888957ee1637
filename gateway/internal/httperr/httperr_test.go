package httperr

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteRendersTheSpecBody(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		status  int
		message string
		want    Body
	}{
		{"bad request", http.StatusBadRequest, "repos: expected an array", Body{400, "repos: expected an array", "Bad Request"}},
		{"payment required", http.StatusPaymentRequired, "Insufficient credits to start this scan", Body{402, "Insufficient credits to start this scan", "Payment Required"}},
		{"too many requests", http.StatusTooManyRequests, "slow down", Body{429, "slow down", "Too Many Requests"}},
		{"client closed request has no standard text", 499, "cancelled", Body{499, "cancelled", "Error"}},
		{"empty message", http.StatusInternalServerError, "", Body{500, "", "Internal Server Error"}},
		{"message needing escapes", http.StatusNotFound, `<script>"x"</script>`, Body{404, `<script>"x"</script>`, "Not Found"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Write(rec, tc.status, tc.message)
			require.Equal(t, tc.status, rec.Code)
			require.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
			require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))

			var raw map[string]any
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &raw))
			require.Len(t, raw, 3, "exactly statusCode, message and error: %s", rec.Body)
			var got Body
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
			require.Equal(t, tc.want, got)
			require.NotContains(t, rec.Body.String(), "<script>", "HTML is escaped in the JSON")
		})
	}
}
