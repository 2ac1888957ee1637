package e2e

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

// BenchmarkCreditsFullStack measures an authenticated GET /v1/credits through
// the real gateway, auth service, PostgreSQL and Redis, and reports how many
// key checks reached the auth service (a database query) per request: on a
// cache hit there are none.
func BenchmarkCreditsFullStack(b *testing.B) {
	s, err := systest.Start(systest.Options{Env: map[string]string{"VULNSCAN_RATE_LIMIT": "1000000:1000000"}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Stop()
	org, err := s.NewOrg(10, "auto")
	if err != nil {
		b.Fatal(err)
	}
	req, _ := http.NewRequest("GET", s.BaseURL+"/credits", nil)
	req.Header.Set("X-Api-Key", org.ReadKey)
	get := func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	get() // warm the key cache
	before := keyLookups(b, s)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		get()
	}
	b.StopTimer()
	after := keyLookups(b, s)
	b.ReportMetric((after["auth"]-before["auth"])/float64(b.N), "key-db-lookups/op")
	b.ReportMetric((after["local"]-before["local"])/float64(b.N), "key-local-hits/op")
}

func keyLookups(b *testing.B, s *systest.System) map[string]float64 {
	resp, err := http.Get("http://" + s.Metrics["gateway"] + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "gateway_key_lookups_total{") {
			continue
		}
		src := line[strings.Index(line, `"`)+1 : strings.LastIndex(line, `"`)]
		v, _ := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		out[src] = v
	}
	return out
}
