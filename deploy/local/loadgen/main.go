// Command loadgen sends GET requests to URLs for a while with a fixed
// number of concurrent clients and prints the completed requests per second
// of each URL, for deploy/local/bench-run.sh:
//
//	loadgen -c 16 -d 20s -H "X-Api-Key: KEY" URL...
//
// URLs are measured one after the other. Any answer but 200 counts as an
// error; errors are printed and make the exit status 1.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	clients := flag.Int("c", 16, "concurrent clients")
	dur := flag.Duration("d", 20*time.Second, "duration per URL")
	header := flag.String("H", "", "a request header, Name: value")
	flag.Parse()
	if flag.NArg() == 0 || *clients < 1 || *dur <= 0 {
		fmt.Fprintln(os.Stderr, "usage: loadgen [-c clients] [-d duration] [-H 'Name: value'] URL...")
		os.Exit(2)
	}
	name, value, _ := strings.Cut(*header, ":")
	failed := false
	for _, url := range flag.Args() {
		ok, errs, err := load(url, strings.TrimSpace(name), strings.TrimSpace(value), *clients, *dur)
		if err != nil {
			fmt.Fprintf(os.Stderr, "loadgen: %s: %v\n", url, err)
			failed = true
		}
		fmt.Printf("%s %.0f req/s (%d errors)\n", url, float64(ok)/dur.Seconds(), errs)
		failed = failed || errs > 0
	}
	if failed {
		os.Exit(1)
	}
}

// load runs clients loops of requests to url for d and returns the
// successful and failed requests and the first failure.
func load(url, name, value string, clients int, d time.Duration) (int64, int64, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var ok, errs atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				err := get(ctx, client, url, name, value)
				switch {
				case err == nil:
					ok.Add(1)
				case ctx.Err() == nil:
					errs.Add(1)
					once.Do(func() { first = err })
				}
			}
		}()
	}
	wg.Wait()
	return ok.Load(), errs.Load(), first
}

func get(ctx context.Context, client *http.Client, url, name, value string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	if name != "" {
		req.Header.Set(name, value)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("get: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}
