package gateway

import (
	"container/list"
	"errors"
	"io"
	"math"
	"net/http"
	"os"
	"sync"
	"time"
)

// buckets is a bounded set of token buckets by key, held in process. It
// backs the rate limit while Redis is unavailable and the per-address
// failed-authentication limit. When full it forgets the least recently
// used key; a forgotten key starts again with a full burst, so the bound
// must be far above the number of keys active at once.
type buckets struct {
	mu    sync.Mutex
	rate  float64 // tokens per second
	burst float64
	max   int
	ll    *list.List
	items map[string]*list.Element
	now   func() time.Time
}

type bucket struct {
	key    string
	tokens float64
	at     time.Time
}

func newBuckets(rate float64, burst, max int) *buckets {
	return &buckets{rate: rate, burst: float64(burst), max: max, ll: list.New(), items: map[string]*list.Element{}, now: time.Now}
}

// get returns key's bucket refilled to now, creating it full.
func (b *buckets) get(key string) *bucket {
	now := b.now()
	if el, ok := b.items[key]; ok {
		b.ll.MoveToFront(el)
		bk := el.Value.(*bucket)
		bk.tokens = math.Min(b.burst, bk.tokens+now.Sub(bk.at).Seconds()*b.rate)
		bk.at = now
		return bk
	}
	bk := &bucket{key: key, tokens: b.burst, at: now}
	b.items[key] = b.ll.PushFront(bk)
	for b.ll.Len() > b.max {
		last := b.ll.Back()
		b.ll.Remove(last)
		delete(b.items, last.Value.(*bucket).key)
	}
	return bk
}

// take spends one token of key if it has one; it reports what is left and,
// when refused, how long until a token is back.
func (b *buckets) take(key string) (ok bool, remaining int, retry time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	bk := b.get(key)
	if bk.tokens >= 1 {
		bk.tokens--
		return true, int(bk.tokens), 0
	}
	return false, 0, b.wait(bk)
}

// empty reports whether key has no token left, without spending one.
func (b *buckets) empty(key string) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	bk := b.get(key)
	if bk.tokens >= 1 {
		return false, 0
	}
	return true, b.wait(bk)
}

func (b *buckets) wait(bk *bucket) time.Duration {
	return time.Duration((1 - bk.tokens) / b.rate * float64(time.Second))
}

// retryAfter renders a wait as whole seconds, at least 1.
func retryAfter(d time.Duration) int { return int(math.Max(1, math.Ceil(d.Seconds()))) }

// uploadSlots caps concurrent uploads per key, per organization and in
// total. Every upload holds one buffer of uploadChunk bytes and one stream
// to the estimation service, so the global cap bounds the gateway's memory
// for uploads to about Global MiB however slowly clients send.
type uploadSlots struct {
	mu                  sync.Mutex
	perKey, perOrg, all int
	byKey, byOrg        map[string]int
	total               int
}

func newUploadSlots(perKey, perOrg, global int) *uploadSlots {
	return &uploadSlots{perKey: perKey, perOrg: perOrg, all: global, byKey: map[string]int{}, byOrg: map[string]int{}}
}

// acquire takes a slot for key of org, or reports false when any cap is
// reached; release must follow a successful acquire.
func (u *uploadSlots) acquire(key, org string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.total >= u.all || u.byKey[key] >= u.perKey || u.byOrg[org] >= u.perOrg {
		return false
	}
	u.total++
	u.byKey[key]++
	u.byOrg[org]++
	return true
}

func (u *uploadSlots) inProgress() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.total
}

func (u *uploadSlots) release(key, org string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.total--
	if u.byKey[key]--; u.byKey[key] <= 0 {
		delete(u.byKey, key)
	}
	if u.byOrg[org]--; u.byOrg[org] <= 0 {
		delete(u.byOrg, org)
	}
}

// errTooSlow is the read error of a body that fell under the minimum rate.
var errTooSlow = errors.New("request body arrived below the minimum rate")

// minRateBody cuts a request body that delivers fewer than min bytes within
// any window: the first window starts when the handler first reads the
// body, each next one when the previous one reached min bytes, and the
// connection's read deadline is the end of the current window, so a client
// that stalls completely is cut by the deadline and one that trickles is
// cut at the first window it does not fill. The time the gateway spends
// before it reads (authenticating, rate limiting, waiting on a store that
// is down) is not the client's: a body the client sent at once is not cut
// for it. It holds no goroutine or timer of its own.
type minRateBody struct {
	rc     io.ReadCloser
	ctl    *http.ResponseController
	window time.Duration
	min    int64
	start  time.Time
	got    int64
	cut    *bool
	now    func() time.Time
}

func newMinRateBody(rc io.ReadCloser, w http.ResponseWriter, window time.Duration, min int64, cut *bool) *minRateBody {
	return &minRateBody{rc: rc, ctl: http.NewResponseController(w), window: window, min: min, cut: cut, now: time.Now}
}

func (b *minRateBody) Read(p []byte) (int, error) {
	if *b.cut {
		return 0, errTooSlow
	}
	if b.start.IsZero() {
		b.start = b.now()
		_ = b.ctl.SetReadDeadline(b.start.Add(b.window))
	}
	if b.now().Sub(b.start) >= b.window {
		*b.cut = true
		return 0, errTooSlow
	}
	n, err := b.rc.Read(p)
	b.got += int64(n)
	if b.got >= b.min {
		b.start, b.got = b.now(), 0
		_ = b.ctl.SetReadDeadline(b.start.Add(b.window))
	}
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		*b.cut = true
		return n, errTooSlow
	}
	if errors.Is(err, io.EOF) {
		// The whole body is in: the handler may take its time now.
		_ = b.ctl.SetReadDeadline(time.Time{})
	}
	return n, err
}

func (b *minRateBody) Close() error {
	// Later reads of the connection (the next request) get their own
	// deadlines from the server.
	_ = b.ctl.SetReadDeadline(time.Time{})
	return b.rc.Close()
}
