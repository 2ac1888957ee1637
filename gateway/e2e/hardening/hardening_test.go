package hardening

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/apikey"
	"github.com/vulnscan/vulnscan/pkg/keycache"
	"github.com/vulnscan/vulnscan/pkg/systest"
	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// client never waits long: a hang is a failure, not a slow pass.
var client = &http.Client{Timeout: 15 * time.Second}

func call(t *testing.T, method, path, key string, body any) systest.Response {
	t.Helper()
	r, err := send(method, path, key, body)
	require.NoError(t, err)
	return r
}

func send(method, path, key string, body any) (systest.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return systest.Response{}, err
		}
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, sys.BaseURL+path, rd)
	if err != nil {
		return systest.Response{}, err
	}
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return systest.Response{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return systest.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, err
}

// requireSpecError checks the spec's error body {statusCode, message, error}.
func requireSpecError(t *testing.T, r systest.Response, status int) {
	t.Helper()
	require.Equal(t, status, r.Status, "body: %s", r.Body)
	m := r.JSON()
	require.EqualValues(t, status, m["statusCode"], "body: %s", r.Body)
	require.Equal(t, http.StatusText(status), m["error"])
	require.NotEmpty(t, m["message"])
}

func createKey(t *testing.T, creator string, body map[string]any) (id, key string, r systest.Response) {
	t.Helper()
	r = call(t, "POST", "/api-keys", creator, body)
	if r.Status == http.StatusCreated {
		m := r.JSON()
		return m["id"].(string), m["key"].(string), r
	}
	return "", "", r
}

// metric sums the gateway's metric samples whose line starts with prefix.
func metric(t *testing.T, prefix string) float64 {
	t.Helper()
	resp, err := client.Get("http://" + sys.Metrics["gateway"] + "/metrics")
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, prefix) {
			v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
			require.NoError(t, err)
			sum += v
		}
	}
	return sum
}

func dbConn(t *testing.T) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, pg.URL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// Weakness 6: a key that expires soon cannot create one that outlives it,
// and revoking a key revokes every key it created, transitively.
func TestChildKeysNeverOutliveTheirParent(t *testing.T) {
	o := sys.Org(t, 0)
	parentExp := time.Now().Add(10 * time.Minute).UTC().Truncate(time.Second)
	parentID, parentKey, r := createKey(t, o.WriteKey, map[string]any{"name": "parent", "scopes": []string{"read", "write"}, "expires_at": parentExp.Format(time.RFC3339)})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)

	_, _, r = createKey(t, parentKey, map[string]any{"name": "later", "scopes": []string{"read"}, "expires_at": parentExp.Add(time.Hour).Format(time.RFC3339)})
	requireSpecError(t, r, http.StatusBadRequest)
	require.Contains(t, r.JSON()["message"], "expires_at")

	_, childKey, r := createKey(t, parentKey, map[string]any{"name": "child", "scopes": []string{"read", "write"}})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	got, err := time.Parse(time.RFC3339Nano, r.JSON()["expires_at"].(string))
	require.NoError(t, err)
	require.True(t, got.Equal(parentExp), "a child without expires_at inherits its parent's expiry: %s", got)
	_, grandKey, r := createKey(t, childKey, map[string]any{"name": "grandchild", "scopes": []string{"read"}})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	require.Equal(t, http.StatusOK, call(t, "GET", "/credits", grandKey, nil).Status)

	require.Equal(t, http.StatusNoContent, call(t, "DELETE", "/api-keys/"+parentID, o.WriteKey, nil).Status)
	for _, k := range []string{parentKey, childKey, grandKey} {
		require.Eventually(t, func() bool { return call(t, "GET", "/credits", k, nil).Status == http.StatusUnauthorized },
			15*time.Second, 200*time.Millisecond, "revoked with its ancestor")
	}
	require.Equal(t, http.StatusOK, call(t, "GET", "/credits", o.WriteKey, nil).Status, "the creator's own key is untouched")
}

// Weakness 5: with Redis stopped, revocation commits, the revoked key stops
// working within the local cache TTL, the rate limit still limits, and the
// revocation reaches Redis once it is back.
func TestRevocationWhileRedisIsDown(t *testing.T) {
	o := sys.Org(t, 0)
	victimID, victim, r := createKey(t, o.WriteKey, map[string]any{"name": "victim", "scopes": []string{"read"}})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	require.Equal(t, http.StatusOK, call(t, "GET", "/credits", victim, nil).Status)

	rds.Stop()
	restarted := false
	defer func() {
		if !restarted {
			_ = rds.Start()
		}
	}()

	r = call(t, "DELETE", "/api-keys/"+victimID, o.WriteKey, nil)
	require.Equal(t, http.StatusNoContent, r.Status, "revocation commits without Redis: %s", r.Body)
	require.Eventually(t, func() bool { return call(t, "GET", "/credits", victim, nil).Status == http.StatusUnauthorized },
		15*time.Second, 250*time.Millisecond, "the gateway re-validates through auth once its copy is older than the cache TTL")
	var pending int
	require.NoError(t, dbConn(t).QueryRow(context.Background(), `SELECT count(*) FROM auth.revocation_outbox`).Scan(&pending))
	require.Positive(t, pending, "the announcement waits in the outbox")

	// The limiter falls back to the in-process limit, never to none.
	limited := 0
	for range 4 * fallbackBurst {
		r := call(t, "GET", "/credits", o.ReadKey, nil)
		require.Contains(t, []int{http.StatusOK, http.StatusTooManyRequests}, r.Status, "%s", r.Body)
		require.Equal(t, strconv.Itoa(fallbackBurst), r.Header.Get("X-RateLimit-Limit"))
		require.NotEmpty(t, r.Header.Get("X-RateLimit-Remaining"))
		if r.Status == http.StatusTooManyRequests {
			limited++
			requireSpecError(t, r, http.StatusTooManyRequests)
			require.NotEmpty(t, r.Header.Get("Retry-After"))
		}
	}
	require.Positive(t, limited)

	require.NoError(t, rds.Start())
	restarted = true
	require.Eventually(t, func() bool {
		var n int
		return dbConn(t).QueryRow(context.Background(), `SELECT count(*) FROM auth.revocation_outbox`).Scan(&n) == nil && n == 0
	}, 20*time.Second, 250*time.Millisecond, "the outbox is published once Redis is back")
	opt, err := redis.ParseURL(rds.URL)
	require.NoError(t, err)
	rc := redis.NewClient(opt)
	defer func() { _ = rc.Close() }()
	b, err := rc.Get(context.Background(), keycache.Key(apikey.Hash(victim))).Bytes()
	require.NoError(t, err)
	var e keycache.Entry
	require.NoError(t, json.Unmarshal(b, &e))
	require.Equal(t, string(vocab.KeyRevoked), e.Status)
	require.Equal(t, http.StatusUnauthorized, call(t, "GET", "/credits", victim, nil).Status)
	// The read key spent its in-process allowance above. After the failed
	// dials of the outage the gateway's Redis client refuses to dial until
	// a background probe, made once a second, succeeds; until then the key
	// is still limited in process (and refused), so the shared limit is
	// back within about a second, not at once.
	require.Eventually(t, func() bool { return call(t, "GET", "/credits", o.ReadKey, nil).Status == http.StatusOK },
		10*time.Second, 100*time.Millisecond, "the shared limit applies again once Redis is back")
}

// stalledUpload sends an upload's headers and a few bytes of a large body,
// then stops sending.
func stalledUpload(t *testing.T, key string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", sys.HTTPAddr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = fmt.Fprintf(c, "POST /v1/uploads HTTP/1.1\r\nHost: %s\r\nX-Api-Key: %s\r\nContent-Type: application/zip\r\nContent-Length: 10000000\r\n\r\nPK\x03\x04", sys.HTTPAddr, key)
	require.NoError(t, err)
	return c
}

func readResponse(t *testing.T, c net.Conn) systest.Response {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(30*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return systest.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// Weakness 4: uploads are capped per key, per organization and in total
// (429 with Retry-After), and stalled or trickling bodies are cut (408),
// after which the gateway holds no more goroutines than before.
func TestStalledUploadsAreCutAndCapped(t *testing.T) {
	o1, o2, o3 := sys.Org(t, 0), sys.Org(t, 0), sys.Org(t, 0)
	_, o1second, r := createKey(t, o1.WriteKey, map[string]any{"name": "second", "scopes": []string{"read", "write"}})
	require.Equal(t, http.StatusCreated, r.Status)
	baseGoroutines := metric(t, "go_goroutines ")
	inProgress := func() float64 { return metric(t, "gateway_uploads_in_progress ") }

	var accepted []net.Conn
	admit := func(key string) {
		accepted = append(accepted, stalledUpload(t, key))
		n := float64(len(accepted))
		require.Eventually(t, func() bool { return inProgress() == n }, 10*time.Second, 20*time.Millisecond)
	}
	refuse := func(key, why string) {
		r := readResponse(t, stalledUpload(t, key))
		requireSpecError(t, r, http.StatusTooManyRequests)
		require.NotEmpty(t, r.Header.Get("Retry-After"), why)
	}
	admit(o1.WriteKey)
	admit(o1.WriteKey)
	refuse(o1.WriteKey, "per-key cap")
	admit(o1second)
	refuse(o1second, "per-organization cap")
	// One upload trickles a byte at a time: below the minimum rate.
	trickle := stalledUpload(t, o2.WriteKey)
	accepted = append(accepted, trickle)
	require.Eventually(t, func() bool { return inProgress() == 4 }, 10*time.Second, 20*time.Millisecond)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
				if _, err := trickle.Write([]byte{0}); err != nil {
					return
				}
			}
		}
	}()
	for range 20 {
		refuse(o3.WriteKey, "global cap")
	}

	for _, c := range accepted {
		requireSpecError(t, readResponse(t, c), http.StatusRequestTimeout)
	}
	close(stop)
	wg.Wait()
	require.Eventually(t, func() bool { return inProgress() == 0 }, 10*time.Second, 50*time.Millisecond)
	require.Eventually(t, func() bool { return metric(t, "go_goroutines ") <= baseGoroutines+10 }, 15*time.Second, 100*time.Millisecond,
		"goroutines return to their level before the uploads")
	require.GreaterOrEqual(t, metric(t, "gateway_slow_bodies_cut_total "), 4.0)

	// A normal upload still goes through.
	req, err := http.NewRequest("POST", sys.BaseURL+"/uploads", strings.NewReader("not a zip"))
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", o3.WriteKey)
	req.Header.Set("Content-Type", "application/zip")
	resp, err := client.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "the archive itself is judged, not refused for capacity")
}

// load sends a mix of writes and reads until stop is closed, recording
// every status and the id of every accepted write.
type load struct {
	mu       sync.Mutex
	statuses map[int]int
	accepted []string
	failures []string
	bodies   map[int]string
}

func (l *load) run(t *testing.T, key string, stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		var r systest.Response
		var err error
		if i%2 == 0 {
			r, err = send("POST", "/context-documents", key, map[string]any{"name": fmt.Sprintf("doc-%d", i), "content": "keep me"})
		} else {
			r, err = send("GET", "/credits", key, nil)
		}
		l.mu.Lock()
		if err != nil {
			l.failures = append(l.failures, err.Error())
		} else {
			l.statuses[r.Status]++
			if _, ok := l.bodies[r.Status]; !ok {
				l.bodies[r.Status] = string(r.Body)
			}
			if r.Status == http.StatusCreated {
				l.accepted = append(l.accepted, r.JSON()["id"].(string))
			}
		}
		l.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
}

func (l *load) phase(t *testing.T, key string, d time.Duration) map[int]int {
	t.Helper()
	l.mu.Lock()
	l.statuses = map[int]int{}
	l.mu.Unlock()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go l.run(t, key, stop, &wg)
	}
	time.Sleep(d)
	close(stop)
	wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	require.Empty(t, l.failures, "no request hangs or loses its connection")
	out := map[int]int{}
	for k, v := range l.statuses {
		out[k] = v
	}
	return out
}

// The fault test: Redis, then PostgreSQL, are stopped and restarted under
// load. While a store is down the API answers 2xx, 429 or a clear 503 in the
// spec's body, never 500 and never a hang; afterwards everything recovers
// without restarting any process, and every write that got a 201 is there.
func TestStoresStopAndRestartUnderLoad(t *testing.T) {
	o := sys.Org(t, 0)
	l := &load{bodies: map[int]string{}}
	only := func(got map[int]int, allowed ...int) {
		t.Helper()
		for code := range got {
			require.Contains(t, allowed, code, "statuses %v; a %d answered %s", got, code, l.bodies[code])
		}
	}

	only(l.phase(t, o.WriteKey, time.Second), 200, 201)

	rds.Stop()
	only(l.phase(t, o.WriteKey, 1500*time.Millisecond), 200, 201, 429)
	require.NoError(t, rds.Start())
	only(l.phase(t, o.WriteKey, time.Second), 200, 201, 429)

	require.NoError(t, pg.Stop())
	down := l.phase(t, o.WriteKey, 1500*time.Millisecond)
	only(down, 200, 201, 429, 503)
	require.Positive(t, down[503], "statuses %v", down)
	var body map[string]any
	require.NoError(t, json.Unmarshal([]byte(l.bodies[503]), &body))
	require.EqualValues(t, 503, body["statusCode"])
	require.Equal(t, "Service Unavailable", body["error"])
	require.NoError(t, pg.Start())

	require.Eventually(t, func() bool {
		r, err := send("POST", "/context-documents", o.WriteKey, map[string]any{"name": "after", "content": "x"})
		if err == nil && r.Status == http.StatusCreated {
			l.mu.Lock()
			l.accepted = append(l.accepted, r.JSON()["id"].(string))
			l.mu.Unlock()
			return true
		}
		return false
	}, 30*time.Second, 200*time.Millisecond, "writes recover without restarting any process")
	require.Eventually(t, func() bool {
		resp, err := client.Get("http://" + sys.HTTPAddr + "/readyz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 200*time.Millisecond)
	only(l.phase(t, o.WriteKey, time.Second), 200, 201)

	require.NotEmpty(t, l.accepted)
	for _, id := range l.accepted {
		r := call(t, "GET", "/context-documents/"+id, o.ReadKey, nil)
		require.Equal(t, http.StatusOK, r.Status, "accepted document %s is still there: %s", id, r.Body)
	}
}

// Weakness 10: guessing keys (well-formed, checksum valid) from one address
// costs at most the failed-authentication budget of lookups, then 429.
func TestKeyGuessingIsLimitedBeforeAnyLookup(t *testing.T) {
	before := metric(t, `gateway_key_lookups_total{source="auth"}`)
	const guesses = 3 * authFailureBurst
	counts := map[int]int{}
	var last systest.Response
	for range guesses {
		key, _, _, err := apikey.Generate()
		require.NoError(t, err)
		last = call(t, "GET", "/credits", key, nil)
		counts[last.Status]++
	}
	lookups := metric(t, `gateway_key_lookups_total{source="auth"}`) - before
	require.LessOrEqual(t, lookups, float64(authFailureBurst+1), "statuses %v", counts)
	require.GreaterOrEqual(t, counts[http.StatusTooManyRequests], guesses-authFailureBurst-1, "statuses %v", counts)
	require.Equal(t, guesses, counts[http.StatusUnauthorized]+counts[http.StatusTooManyRequests], "statuses %v", counts)
	requireSpecError(t, last, http.StatusTooManyRequests)
	require.NotEmpty(t, last.Header.Get("Retry-After"))
}
