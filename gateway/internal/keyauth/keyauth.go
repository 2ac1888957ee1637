// Package keyauth verifies API keys for the gateway. A key is looked up by
// its SHA-256 in a short-lived in-process cache, then in Redis, then with the
// auth service; results are written back to Redis with SET NX so that a
// revocation tombstone is never overwritten. Revocations published by the
// auth service evict the in-process copy on every replica at once.
package keyauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vulnscan/vulnscan/pkg/apikey"
	"github.com/vulnscan/vulnscan/pkg/keycache"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
)

// Errors of Verify, each answered with 401 and its Message.
var (
	ErrMalformed = errors.New("malformed API key")
	ErrUnknown   = errors.New("invalid API key")
	ErrRevoked   = errors.New("API key has been revoked")
	ErrExpired   = errors.New("API key has expired")
)

// Message is the public 401 message for an error of Verify.
func Message(err error) string {
	switch {
	case errors.Is(err, ErrMalformed):
		return "Malformed API key"
	case errors.Is(err, ErrUnknown):
		return "Invalid API key"
	case errors.Is(err, ErrRevoked):
		return "API key has been revoked"
	case errors.Is(err, ErrExpired):
		return "API key has expired"
	}
	return ""
}

// Stats counts where lookups were answered.
type Stats struct {
	LocalHits, RedisHits, AuthLookups atomic.Int64
}

// Verifier checks keys.
type Verifier struct {
	rdb      redis.UniversalClient
	auth     authv1.AuthInternalServiceClient
	log      *slog.Logger
	localTTL time.Duration
	now      func() time.Time
	Stats    Stats

	mu    sync.Mutex
	local map[string]localEntry
}

type localEntry struct {
	e       keycache.Entry
	expires time.Time
}

const maxLocal = 50000

// New returns a Verifier. localTTL bounds how long a replica trusts its own
// copy if it were to miss a revocation message (e.g. while reconnecting).
func New(rdb redis.UniversalClient, auth authv1.AuthInternalServiceClient, log *slog.Logger, localTTL time.Duration) *Verifier {
	return &Verifier{rdb: rdb, auth: auth, log: log, localTTL: localTTL, now: time.Now, local: map[string]localEntry{}}
}

// Listen evicts revoked keys announced on Redis until ctx ends.
func (v *Verifier) Listen(ctx context.Context) error {
	sub := v.rdb.Subscribe(ctx, keycache.Channel)
	defer func() { _ = sub.Close() }()
	if _, err := sub.Receive(ctx); err != nil {
		return fmt.Errorf("subscribe to key revocations: %w", err)
	}
	// Anything cached before the subscription was live may have missed a message.
	v.Flush()
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return nil
		case m, ok := <-ch:
			if !ok {
				return nil
			}
			v.evict(m.Payload)
		}
	}
}

// Flush drops the in-process cache.
func (v *Verifier) Flush() {
	v.mu.Lock()
	clear(v.local)
	v.mu.Unlock()
}

func (v *Verifier) evict(hash string) {
	v.mu.Lock()
	delete(v.local, hash)
	v.mu.Unlock()
}

func (v *Verifier) put(hash string, e keycache.Entry) {
	v.mu.Lock()
	if len(v.local) >= maxLocal {
		clear(v.local)
	}
	v.local[hash] = localEntry{e: e, expires: v.now().Add(v.localTTL)}
	v.mu.Unlock()
}

func (v *Verifier) get(hash string) (keycache.Entry, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	le, ok := v.local[hash]
	if !ok || v.now().After(le.expires) {
		return keycache.Entry{}, false
	}
	return le.e, true
}

// Verify returns the active entry of key, or one of the errors above, or
// another error when neither Redis nor the auth service could answer.
func (v *Verifier) Verify(ctx context.Context, key string) (keycache.Entry, error) {
	if !apikey.WellFormed(key) {
		return keycache.Entry{}, ErrMalformed
	}
	hash := apikey.Hash(key)
	e, err := v.lookup(ctx, hash)
	if err != nil {
		return e, err
	}
	return e, v.judge(e)
}

func (v *Verifier) judge(e keycache.Entry) error {
	switch e.Status {
	case keycache.StatusActive:
		if e.ExpiresAt != nil && !v.now().Before(*e.ExpiresAt) {
			return ErrExpired
		}
		return nil
	case keycache.StatusRevoked:
		return ErrRevoked
	case keycache.StatusExpired:
		return ErrExpired
	default:
		return ErrUnknown
	}
}

func (v *Verifier) lookup(ctx context.Context, hash string) (keycache.Entry, error) {
	if e, ok := v.get(hash); ok {
		v.Stats.LocalHits.Add(1)
		return e, nil
	}
	rkey := keycache.Key(hash)
	b, err := v.rdb.Get(ctx, rkey).Bytes()
	if err == nil {
		var e keycache.Entry
		if json.Unmarshal(b, &e) == nil {
			v.Stats.RedisHits.Add(1)
			v.put(hash, e)
			return e, nil
		}
	} else if !errors.Is(err, redis.Nil) {
		v.log.WarnContext(ctx, "key cache unavailable, asking the auth service", "error", err.Error())
	}

	v.Stats.AuthLookups.Add(1)
	resp, err := v.auth.VerifyAPIKey(ctx, &authv1.VerifyAPIKeyRequest{KeyHash: hash})
	if err != nil {
		return keycache.Entry{}, fmt.Errorf("verify key: %w", err)
	}
	e := keycache.Entry{Status: resp.GetStatus(), KeyID: resp.GetKeyId(), OrgID: resp.GetOrgId(), UserID: resp.GetUserId(), Scopes: resp.GetScopes()}
	if resp.GetExpiresAt() != nil {
		t := resp.GetExpiresAt().AsTime()
		e.ExpiresAt = &t
	}
	// Cache locally before writing Redis: a revocation that lands after the
	// write below evicts this copy; one that landed before makes SET NX fail.
	v.put(hash, e)
	ttl := keycache.TTL
	if e.Status == keycache.StatusUnknown {
		ttl = 30 * time.Second
	}
	payload, _ := json.Marshal(e)
	ok, err := v.rdb.SetNX(ctx, rkey, payload, ttl).Result()
	if err != nil {
		v.log.WarnContext(ctx, "cannot write key cache", "error", err.Error())
		return e, nil
	}
	if !ok {
		// Someone wrote first, possibly a revocation tombstone: trust Redis.
		if b, err := v.rdb.Get(ctx, rkey).Bytes(); err == nil {
			var cur keycache.Entry
			if json.Unmarshal(b, &cur) == nil {
				v.put(hash, cur)
				return cur, nil
			}
		}
	}
	return e, nil
}
