package gateway

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// leases is a token bucket per key kept in Redis and shared by every
// replica, which each replica draws from in batches: one script call takes
// up to batch tokens, the replica serves them locally, and whatever it has
// not served when the lease ends goes back with its next call for that key.
// A request costs a Redis round trip only when its replica's lease is spent.
//
// Tolerance: every request allowed was paid for by a token taken from the
// shared bucket, so a key is never allowed more than burst + rate × t over
// any span t across all replicas together. A request may be refused while
// other replicas still hold unserved tokens of the same key: at most
// replicas × (batch − 1) of them, for at most one lease period (after which
// they return, or simply lapse and refill at the key's rate). batch is an
// eighth of the burst (at least 1, at most maxLeaseBatch), so with the
// default 20:40 a replica reserves 5 requests at a time, and a burst of 8 or
// less is shared request by request, exactly as before.
type leases struct {
	rdb    redis.Scripter
	rate   float64 // tokens per second
	burst  int
	batch  int
	period time.Duration // how long a replica serves a lease locally
	max    int           // keys remembered locally
	// timeout bounds a take that calls the script, from its start; a
	// request served from its lease makes no call and sets up no deadline.
	timeout time.Duration
	now     func() time.Time

	mu   sync.Mutex
	keys map[string]*lease
}

// lease is one replica's reservation of a key's tokens.
type lease struct {
	mu     sync.Mutex
	tokens int       // reserved and not yet served
	shared int       // tokens the shared bucket had left when the lease was taken
	until  time.Time // end of the lease
}

// maxLeaseBatch bounds a lease however large the limit, so that a replica
// that stops serving a key strands few of its tokens.
const maxLeaseBatch = 1000

// leasePeriod is how long a replica serves the tokens it reserved.
const leasePeriod = 500 * time.Millisecond

func newLeases(rdb redis.Scripter, rate float64, burst int) *leases {
	return &leases{rdb: rdb, rate: rate, burst: burst, batch: min(maxLeaseBatch, max(1, burst/8)), period: leasePeriod,
		max: 100000, timeout: redisTimeout, now: time.Now, keys: map[string]*lease{}}
}

// leaseScript refills the bucket at KEYS[1] to the server's clock, puts back
// ARGV[4] unserved tokens, and takes up to ARGV[3] whole tokens. It answers
// the tokens taken, the whole tokens left, and, when none could be taken,
// the microseconds until one is back. The bucket is a hash of its tokens
// and the time (µs) they were counted; it expires once it would be full.
var leaseScript = redis.NewScript(`
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local give = tonumber(ARGV[4])
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local b = redis.call("HMGET", KEYS[1], "tokens", "at")
local tokens = burst
if b[1] and b[2] then
  local elapsed = math.max(0, now - tonumber(b[2]))
  tokens = math.min(burst, tonumber(b[1]) + elapsed * rate / 1000000)
end
tokens = math.min(burst, tokens + give)
local got = math.max(0, math.min(want, math.floor(tokens)))
tokens = tokens - got
redis.call("HSET", KEYS[1], "tokens", string.format("%.6f", tokens), "at", string.format("%d", now))
redis.call("PEXPIRE", KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
local wait = 0
if got == 0 then
  wait = math.ceil((1 - tokens) / rate * 1000000)
end
return {got, math.floor(tokens), wait}
`)

// take spends one token of key: from this replica's lease when it has one,
// otherwise from a new lease. It says whether the request is allowed, about
// how many tokens the key has left (the shared bucket when the lease was
// taken plus the lease), and, when refused, how long until a token is back.
// An error means Redis did not answer within the timeout; nothing was spent
// then.
func (l *leases) take(ctx context.Context, key string) (allowed bool, left int, wait time.Duration, err error) {
	// The timeout counts from here, waiting for the lease's lock included:
	// requests queued behind a script call that hangs fail in turn when
	// theirs is spent, instead of each waiting its own timeout after the
	// previous one's.
	deadline := time.Now().Add(l.timeout)
	ls := l.lease(key)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	now := l.now()
	if ls.tokens > 0 && now.Before(ls.until) {
		ls.tokens--
		return true, ls.shared + ls.tokens, 0, nil
	}
	give := ls.tokens // an ended lease's unserved tokens go back
	ls.tokens = 0     // and are dropped if Redis does not take them
	ctx, cancel := context.WithDeadline(ctx, deadline)
	res, err := leaseScript.Run(ctx, l.rdb, []string{key}, l.rate, l.burst, l.batch, give).Int64Slice()
	cancel()
	if err != nil {
		return false, 0, 0, fmt.Errorf("lease rate-limit tokens: %w", err)
	}
	if len(res) != 3 {
		return false, 0, 0, fmt.Errorf("lease rate-limit tokens: unexpected answer %v", res)
	}
	got, shared := int(res[0]), int(res[1])
	if got == 0 {
		return false, 0, time.Duration(res[2]) * time.Microsecond, nil
	}
	ls.tokens, ls.shared, ls.until = got-1, shared, now.Add(l.period)
	return true, shared + ls.tokens, 0, nil
}

// lease returns key's local lease, creating it empty. When max keys are
// remembered, ended leases are forgotten first (their unserved tokens lapse
// and refill in Redis at the key's rate).
func (l *leases) lease(key string) *lease {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ls, ok := l.keys[key]; ok {
		return ls
	}
	if len(l.keys) >= l.max {
		now := l.now()
		for k, ls := range l.keys {
			if ls.mu.TryLock() {
				ended := !now.Before(ls.until)
				ls.mu.Unlock()
				if ended {
					delete(l.keys, k)
				}
			}
		}
		for k := range l.keys { // still full: forget any, down to 7/8 of max
			if len(l.keys) < l.max-l.max/8 {
				break
			}
			delete(l.keys, k)
		}
	}
	ls := &lease{}
	l.keys[key] = ls
	return ls
}
