// Package client is a small Go client of the public REST API (/v1), used by
// the vulnscan command-line tool. Every failure the API answers is returned
// as an *APIError carrying the spec's error body, so callers show the API's
// own message. Reads are retried on 429 (after Retry-After) and on 502, 503
// and 504 with backoff; writes are never retried, because a repeated POST
// could start a second scan.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls one vulnscan API with one API key.
type Client struct {
	base string // ends in /v1, no trailing slash
	key  string
	HTTP *http.Client
	// Retries is how many times a read is retried (default 5).
	Retries int
	// UserAgent is sent with every request.
	UserAgent string
}

// New returns a client of the API at baseURL ("https://host" or
// "https://host/v1"; the /v1 segment is added when missing) using key.
func New(baseURL, key string) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the API URL %q is not an http(s) URL", baseURL)
	}
	p := strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(p, "/v1") {
		p += "/v1"
	}
	u.Path, u.RawQuery, u.Fragment = p, "", ""
	if key == "" {
		return nil, errors.New("no API key")
	}
	return &Client{base: u.String(), key: key, HTTP: &http.Client{Timeout: 5 * time.Minute}, Retries: 5, UserAgent: "vulnscan-cli"}, nil
}

// BaseURL is the API's base URL, ending in /v1.
func (c *Client) BaseURL() string { return c.base }

// APIError is an error answer of the API in the spec's body.
type APIError struct {
	StatusCode int
	Message    string // the message, or the field messages joined by "; "
	ErrorText  string // the status text, e.g. "Bad Request"
}

func (e *APIError) Error() string {
	text := e.ErrorText
	if text == "" {
		text = http.StatusText(e.StatusCode)
	}
	if e.Message == "" {
		return fmt.Sprintf("%d %s", e.StatusCode, text)
	}
	return fmt.Sprintf("%d %s: %s", e.StatusCode, text, e.Message)
}

func decodeError(status int, body []byte) *APIError {
	var b struct {
		StatusCode int             `json:"statusCode"`
		Message    json.RawMessage `json:"message"`
		Error      string          `json:"error"`
	}
	e := &APIError{StatusCode: status}
	if json.Unmarshal(body, &b) != nil {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 500 {
			e.Message = e.Message[:500]
		}
		return e
	}
	e.ErrorText = b.Error
	var one string
	var many []string
	switch {
	case json.Unmarshal(b.Message, &one) == nil:
		e.Message = one
	case json.Unmarshal(b.Message, &many) == nil:
		e.Message = strings.Join(many, "; ")
	}
	return e
}

type request struct {
	method, path string
	query        url.Values
	body         any    // encoded as JSON unless raw is set
	raw          []byte // sent as is with contentType
	contentType  string
}

// send performs r and returns the successful response; the caller closes its body.
func (c *Client) send(ctx context.Context, r request) (*http.Response, error) {
	var payload []byte
	contentType := r.contentType
	switch {
	case r.raw != nil:
		payload = r.raw
	case r.body != nil:
		b, err := json.Marshal(r.body)
		if err != nil {
			return nil, err
		}
		payload, contentType = b, "application/json"
	}
	target := c.base + r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	retries := 0
	if r.method == http.MethodGet {
		retries = c.Retries
	}
	wait := time.Second
	for attempt := 0; ; attempt++ {
		var rd io.Reader
		if payload != nil {
			rd = bytes.NewReader(payload)
		}
		req, err := http.NewRequestWithContext(ctx, r.method, target, rd)
		if err != nil {
			return nil, err
		}
		req.Header.Set("X-Api-Key", c.key)
		req.Header.Set("Accept", "application/json")
		req.Header.Set("User-Agent", c.UserAgent)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := c.HTTP.Do(req)
		if err != nil {
			if attempt < retries && ctx.Err() == nil {
				if err := Sleep(ctx, wait); err != nil {
					return nil, err
				}
				wait = min(wait*2, 30*time.Second)
				continue
			}
			return nil, fmt.Errorf("%s %s: %w", r.method, r.path, err)
		}
		if resp.StatusCode < 300 {
			return resp, nil
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		retryable := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusBadGateway ||
			resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusGatewayTimeout
		if retryable && attempt < retries {
			d := wait
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
				d = time.Duration(s) * time.Second
			}
			if err := Sleep(ctx, d); err != nil {
				return nil, err
			}
			wait = min(wait*2, 30*time.Second)
			continue
		}
		return nil, decodeError(resp.StatusCode, body)
	}
}

// Sleep waits d, or until ctx ends and then returns its error: callers
// polling the API wait with it between reads.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// fetch performs r and returns the JSON answer decoded as a T.
func fetch[T any](ctx context.Context, c *Client, r request) (T, error) {
	var out T
	err := c.call(ctx, r, &out)
	return out, err
}

// call performs r and decodes the JSON answer into out (when not nil).
func (c *Client) call(ctx context.Context, r request, out any) error {
	resp, err := c.send(ctx, r)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the expected JSON: %w", r.method, r.path, err)
	}
	return nil
}
