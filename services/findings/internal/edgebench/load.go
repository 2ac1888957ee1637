package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// result is what one closed-loop run measured.
type result struct {
	n        int64         // requests completed in the measured window
	errs     int64         // failed requests (any phase)
	elapsed  time.Duration // length of the measured window
	p50, p99 time.Duration
	allocs   map[string]float64 // process → heap allocations per request
}

func (r result) rps() float64 { return float64(r.n) / r.elapsed.Seconds() }

// closedLoop runs conc workers that each send one request, wait for its
// answer and send the next, for warm then dur. Only requests started and
// finished inside the measured window count. before and after run at the
// window's edges (to read the processes' allocation counters).
func closedLoop(ctx context.Context, conc int, warm, dur time.Duration, do func(ctx context.Context, worker int, i int64) error,
	before, after func()) result {
	var (
		measuring atomic.Bool
		stop      atomic.Bool
		errs      atomic.Int64
		mu        sync.Mutex
		lat       []time.Duration
		wg        sync.WaitGroup
		firstErr  atomic.Value
	)
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 4096)
			for i := int64(0); !stop.Load(); i++ {
				counted := measuring.Load()
				start := time.Now()
				err := do(ctx, w, i)
				d := time.Since(start)
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err)
					if ctx.Err() != nil {
						break
					}
					continue
				}
				if counted && measuring.Load() {
					local = append(local, d)
				}
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}()
	}
	time.Sleep(warm)
	if before != nil {
		before()
	}
	measuring.Store(true)
	start := time.Now()
	time.Sleep(dur)
	measuring.Store(false)
	elapsed := time.Since(start)
	if after != nil {
		after()
	}
	stop.Store(true)
	wg.Wait()
	slices.Sort(lat)
	r := result{n: int64(len(lat)), errs: errs.Load(), elapsed: elapsed}
	if len(lat) > 0 {
		r.p50 = lat[len(lat)*50/100]
		r.p99 = lat[min(len(lat)-1, len(lat)*99/100)]
	}
	if e := firstErr.Load(); e != nil {
		fmt.Printf("    (%d failed requests; first: %v)\n", r.errs, e)
	}
	return r
}

// httpGet returns a request function for GET url with the API key,
// reading the whole answer and failing on any status but 200.
func httpGet(client *http.Client, key string, url func(i int64) string) func(ctx context.Context, _ int, i int64) error {
	return func(ctx context.Context, _ int, i int64) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url(i), nil)
		if err != nil {
			return err
		}
		req.Header.Set("X-Api-Key", key)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: status %d", req.URL.Path, resp.StatusCode)
		}
		return nil
	}
}

// newClient is an HTTP client keeping one connection per worker.
func newClient(conc int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: conc * 2, MaxIdleConnsPerHost: conc * 2, IdleConnTimeout: time.Minute,
		DisableCompression: true}, Timeout: 30 * time.Second}
}
