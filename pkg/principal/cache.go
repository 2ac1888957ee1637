package principal

import (
	"strings"
	"sync"
	"time"
)

// Signing and verifying an Ed25519 token costs tens of microseconds, which
// on the hot path is more than the rest of a cached-key request. The gateway
// therefore reuses the token it signed for a (principal, method) pair until
// shortly before it expires, and a service checks the signature of a given
// token once and remembers the result until the token expires.
//
// Neither cache extends what a token allows. The gateway attaches a token
// only to calls of a request whose API key it has just authenticated, so a
// revoked key stops reaching the services as soon as the gateway's key cache
// refuses it; the token cache is never consulted for a request that failed
// authentication. A token already handed out stays valid until its own
// expiry, at most TokenTTL plus the clock skew after it was signed, exactly
// as without the caches. A changed set of scopes is a different cache key,
// hence a new token.

// ReuseFor is how long the gateway reuses a token after signing it. The
// remaining TokenTTL-ReuseFor is the least life a token has when it is sent,
// so that a call still in flight or retried is not refused as expired.
const ReuseFor = TokenTTL - 15*time.Second

// Bounds of the caches. Past them the stale entries are dropped; the
// gateway's cache is emptied if none was stale, and a service stops
// remembering new tokens until some expire.
const (
	maxIssued   = 4096
	maxVerified = 8192
)

// sweepEvery is how often a service drops the expired tokens it remembers.
const sweepEvery = time.Second

// Token returns a token asserting p for calls of method. Unlike Sign it is
// bound to no request id, which lets the Signer reuse one token for ReuseFor.
func (s *Signer) Token(p Principal, method string) (string, error) {
	now := s.now()
	k := issueKey{org: p.OrgID, user: p.UserID, key: p.KeyID, scopes: strings.Join(p.Scopes, "\x00"), method: method}
	if tok, ok := s.issued.get(k, now); ok {
		return tok, nil
	}
	tok, err := s.sign(p, "", method, now)
	if err != nil {
		return "", err
	}
	s.issued.put(k, tok, now)
	return tok, nil
}

type issueKey struct{ org, user, key, scopes, method string }

type issuedToken struct {
	tok string
	at  time.Time
}

type issuedTokens struct {
	mu sync.Mutex
	m  map[issueKey]issuedToken
}

// reusable reports whether a token signed at at may still be sent at now.
// A clock that went backwards makes it unusable, as a token from the future
// would be refused.
func reusable(at, now time.Time) bool {
	return !now.Before(at) && now.Before(at.Add(ReuseFor))
}

func (c *issuedTokens) get(k issueKey, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[k]
	if !ok || !reusable(t.at, now) {
		return "", false
	}
	return t.tok, true
}

func (c *issuedTokens) put(k issueKey, tok string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[issueKey]issuedToken)
	}
	if len(c.m) >= maxIssued {
		for k, t := range c.m {
			if !reusable(t.at, now) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxIssued {
			clear(c.m)
		}
	}
	c.m[k] = issuedToken{tok: tok, at: now}
}

// verifiedTokens maps the exact text of tokens whose signature and claims
// verified to their claims. Only tokens that passed every check are put.
type verifiedTokens struct {
	mu        sync.RWMutex
	m         map[string]claims
	nextSweep time.Time
}

func (c *verifiedTokens) drop(tok string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, tok)
}

func (c *verifiedTokens) get(tok string) (claims, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	cl, ok := c.m[tok]
	return cl, ok
}

// put remembers tok until it expires. A token bound to a request id serves
// one call only, so remembering it would only fill the cache.
func (c *verifiedTokens) put(tok string, cl claims, now time.Time) {
	if cl.RequestID != "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]claims)
	}
	if !now.Before(c.nextSweep) {
		c.nextSweep = now.Add(sweepEvery)
		for t, x := range c.m {
			if now.After(x.expiry()) {
				delete(c.m, t)
			}
		}
	}
	if len(c.m) >= maxVerified {
		return
	}
	c.m[tok] = cl
}

// len is the number of remembered tokens.
func (c *verifiedTokens) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}
