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
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vulnscan/vulnscan/pkg/apikey"
	"github.com/vulnscan/vulnscan/pkg/keycache"
	"github.com/vulnscan/vulnscan/pkg/vocab"
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

	local    *keycache.LRU
	lastWarn atomic.Int64
}

// NegativeTTL is how long a replica remembers that a key hash is unknown.
// Keys are random, so a hash that was unknown stays unknown until someone
// creates exactly that key; remembering it spares the auth service and its
// database a lookup per repeated guess.
const NegativeTTL = 30 * time.Second

// redisTimeout bounds each Redis call on the request path, so that an
// unavailable Redis costs a request little before the fallbacks apply.
const redisTimeout = 300 * time.Millisecond

// New returns a Verifier. localTTL bounds how long a replica trusts its own
// copy if it were to miss a revocation message (e.g. while Redis is down or
// reconnecting): after it, the key is checked again through Redis or, when
// Redis is unavailable, the auth service. size bounds the in-process cache.
func New(rdb redis.UniversalClient, auth authv1.AuthInternalServiceClient, log *slog.Logger, localTTL time.Duration, size int) *Verifier {
	return &Verifier{rdb: rdb, auth: auth, log: log, localTTL: localTTL, now: time.Now, local: keycache.NewLRU(size)}
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

// warn logs a Redis failure at most once a second: during an outage every
// request would otherwise log it.
func (v *Verifier) warn(ctx context.Context, msg string, err error) {
	if now := v.now().Unix(); v.lastWarn.Swap(now) != now {
		v.log.WarnContext(ctx, msg, "error", err.Error())
	}
}

// Flush drops the in-process cache.
func (v *Verifier) Flush() { v.local.Clear() }

func (v *Verifier) evict(hash string) { v.local.Delete(hash) }

// ForgetOrganization drops the in-process copies of an organization's
// keys, so that their next use is looked up again; "" drops every key.
func (v *Verifier) ForgetOrganization(orgID string) {
	if orgID == "" {
		v.Flush()
		return
	}
	v.local.DeleteFunc(func(e keycache.Entry) bool { return strings.EqualFold(e.OrgID, orgID) })
}

func (v *Verifier) put(hash string, e keycache.Entry) {
	ttl := v.localTTL
	if e.Status == string(vocab.KeyUnknown) {
		ttl = max(ttl, NegativeTTL)
	}
	v.local.Put(hash, e, v.now().Add(ttl))
}

func (v *Verifier) get(hash string) (keycache.Entry, bool) { return v.local.Get(hash, v.now()) }

// Active reports whether key is held in the in-process cache as active and
// unexpired: it costs no lookup, so it may be answered even for a client
// address that is over its failed-authentication budget.
func (v *Verifier) Active(key string) bool {
	if !apikey.WellFormed(key) {
		return false
	}
	e, ok := v.get(apikey.Hash(key))
	return ok && v.judge(e) == nil
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
	case string(vocab.KeyActive):
		if e.ExpiresAt != nil && !v.now().Before(*e.ExpiresAt) {
			return ErrExpired
		}
		return nil
	case string(vocab.KeyRevoked):
		return ErrRevoked
	case string(vocab.KeyExpired):
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
	rctx, cancel := context.WithTimeout(ctx, redisTimeout)
	defer cancel()
	b, err := v.rdb.Get(rctx, rkey).Bytes()
	if err == nil {
		var e keycache.Entry
		if json.Unmarshal(b, &e) == nil {
			v.Stats.RedisHits.Add(1)
			v.put(hash, e)
			return e, nil
		}
	} else if !errors.Is(err, redis.Nil) {
		v.warn(ctx, "key cache unavailable, asking the auth service", err)
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
	if e.Status == string(vocab.KeyUnknown) {
		ttl = NegativeTTL
	}
	payload, _ := json.Marshal(e)
	wctx, wcancel := context.WithTimeout(ctx, redisTimeout)
	defer wcancel()
	ok, err := v.rdb.SetNX(wctx, rkey, payload, ttl).Result()
	if err != nil {
		v.warn(ctx, "cannot write key cache", err)
		return e, nil
	}
	if !ok {
		// Someone wrote first, possibly a revocation tombstone: trust Redis.
		if b, err := v.rdb.Get(wctx, rkey).Bytes(); err == nil {
			var cur keycache.Entry
			if json.Unmarshal(b, &cur) == nil {
				v.put(hash, cur)
				return cur, nil
			}
		}
	}
	return e, nil
}
