package principal

import (
	"crypto/ed25519"
	"crypto/rand"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// clock is a time the test moves by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// newPair returns a signer and a verifier of one key on a clock the test moves.
func newPair(t *testing.T) (*clock, *Signer, *Verifier) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	s, v := NewSigner(priv), NewVerifier(pub)
	s.now, v.now = c.now, c.now
	return c, s, v
}

func TestTokenReuseAndRefresh(t *testing.T) {
	t.Parallel()
	c, s, v := newPair(t)
	p := Principal{OrgID: "o", UserID: "u", KeyID: "k", Scopes: []string{"read"}}

	first, err := s.Token(p, "/m")
	require.NoError(t, err)
	again, err := s.Token(p, "/m")
	require.NoError(t, err)
	require.Equal(t, first, again, "same caller and method reuse the token")

	other, err := s.Token(p, "/other")
	require.NoError(t, err)
	require.NotEqual(t, first, other, "another method gets its own token")
	wider, err := s.Token(Principal{OrgID: "o", UserID: "u", KeyID: "k", Scopes: []string{"read", "write"}}, "/m")
	require.NoError(t, err)
	require.NotEqual(t, first, wider, "other scopes get their own token")
	otherKey, err := s.Token(Principal{OrgID: "o", UserID: "u", KeyID: "k2", Scopes: []string{"read"}}, "/m")
	require.NoError(t, err)
	require.NotEqual(t, first, otherKey, "another key gets its own token")

	// A reused token is accepted for any request of its method, and only for it.
	for _, rid := range []string{"r1", "r2", ""} {
		got, err := v.Verify(first, rid, "/m")
		require.NoError(t, err)
		require.Equal(t, p, got)
	}
	_, err = v.Verify(first, "r1", "/other")
	require.ErrorIs(t, err, ErrBinding)

	c.t = c.t.Add(ReuseFor - time.Second)
	last, err := s.Token(p, "/m")
	require.NoError(t, err)
	require.Equal(t, first, last, "still reused just before the reuse window closes")
	c.t = c.t.Add(time.Second)
	fresh, err := s.Token(p, "/m")
	require.NoError(t, err)
	require.NotEqual(t, first, fresh, "signed anew once the window closed")
	_, err = v.Verify(first, "r", "/m")
	require.NoError(t, err, "the old token still has TokenTTL-ReuseFor to live")

	// A clock that went back does not reuse a token from its future.
	c.t = c.t.Add(-time.Minute)
	back, err := s.Token(p, "/m")
	require.NoError(t, err)
	require.NotEqual(t, fresh, back)
}

func TestVerifiedTokenExpiresFromCache(t *testing.T) {
	t.Parallel()
	c, s, v := newPair(t)
	tok, err := s.Token(Principal{OrgID: "o", UserID: "u"}, "/m")
	require.NoError(t, err)
	_, err = v.Verify(tok, "r", "/m")
	require.NoError(t, err)
	require.Equal(t, 1, v.verified.len(), "a verified token is remembered")

	// The bound on a token signed before its key was revoked: it is
	// accepted, from the cache, until TokenTTL plus the clock skew after
	// it was signed and never after, as without the cache.
	c.t = c.t.Add(TokenTTL + clockSkew)
	_, err = v.Verify(tok, "r", "/m")
	require.NoError(t, err)
	c.t = c.t.Add(time.Second)
	_, err = v.Verify(tok, "r", "/m")
	require.ErrorIs(t, err, ErrExpired)
	require.Zero(t, v.verified.len(), "an expired token is dropped")
	_, err = v.Verify(tok, "r", "/m")
	require.ErrorIs(t, err, ErrExpired)

	// Expired entries of other tokens are swept when a new one is put.
	t2, err := s.Token(Principal{OrgID: "o", UserID: "u2"}, "/m")
	require.NoError(t, err)
	_, err = v.Verify(t2, "r", "/m")
	require.NoError(t, err)
	c.t = c.t.Add(TokenTTL + clockSkew + sweepEvery + time.Second)
	t3, err := s.Token(Principal{OrgID: "o", UserID: "u3"}, "/m")
	require.NoError(t, err)
	_, err = v.Verify(t3, "r", "/m")
	require.NoError(t, err)
	require.Equal(t, 1, v.verified.len())
}

func TestVerifyCachesNoFailure(t *testing.T) {
	t.Parallel()
	c, s, v := newPair(t)
	tok, err := s.Token(Principal{OrgID: "o", UserID: "u"}, "/m")
	require.NoError(t, err)

	_, err = v.Verify(tok, "r", "/other")
	require.ErrorIs(t, err, ErrBinding)
	c.t = c.t.Add(-time.Minute)
	_, err = v.Verify(tok, "r", "/m")
	require.ErrorIs(t, err, ErrExpired)
	require.Zero(t, v.verified.len(), "refused tokens are not remembered")

	// A token bound to one request serves one call: it is checked every
	// time rather than remembered.
	c.t = c.t.Add(time.Minute)
	once, err := s.Sign(Principal{OrgID: "o", UserID: "u"}, "r", "/m")
	require.NoError(t, err)
	_, err = v.Verify(once, "r", "/m")
	require.NoError(t, err)
	_, err = v.Verify(once, "r2", "/m")
	require.ErrorIs(t, err, ErrBinding)
	require.Zero(t, v.verified.len())

	// Once the good token is remembered, tampered copies of it are still refused.
	_, err = v.Verify(tok, "r", "/m")
	require.NoError(t, err)
	for _, bad := range []string{"x" + tok[1:], tok[:len(tok)-2] + "AA", tok + "A", tok[:len(tok)-1]} {
		if bad == tok {
			continue
		}
		_, err = v.Verify(bad, "r", "/m")
		require.ErrorIs(t, err, ErrBadToken)
	}
	require.Equal(t, 1, v.verified.len())

	// Another verifier (other keys) does not trust what this one remembered.
	pub2, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	_, err = NewVerifier(pub2).Verify(tok, "r", "/m")
	require.ErrorIs(t, err, ErrBadToken)
}

func TestCachesStayBounded(t *testing.T) {
	t.Parallel()
	c, s, v := newPair(t)
	var toks []string
	for i := range maxIssued + 10 {
		tok, err := s.Token(Principal{OrgID: "o", UserID: string(rune('a' + i%26)), KeyID: time.Duration(i).String()}, "/m")
		require.NoError(t, err)
		toks = append(toks, tok)
	}
	require.LessOrEqual(t, len(s.issued.m), maxIssued)
	for _, tok := range toks[:10] {
		_, err := v.Verify(tok, "r", "/m")
		require.NoError(t, err)
	}
	live := claims{Org: "o", User: "u", Method: "/m", Issued: c.t.Unix(), Expires: c.t.Add(TokenTTL).Unix()}
	for i := range maxVerified {
		v.verified.put(strconv.Itoa(i), live, c.t)
	}
	require.Equal(t, maxVerified, v.verified.len(), "a full cache takes no more live tokens")
	_, err := v.Verify(toks[10], "r", "/m")
	require.NoError(t, err, "a token that is not remembered is still verified")
}

func BenchmarkIdentity(b *testing.B) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(b, err)
	p := Principal{OrgID: "o", UserID: "u", KeyID: "k", Scopes: []string{"read", "write"}}
	s, v := NewSigner(priv), NewVerifier(pub)
	b.Run("sign per call", func(b *testing.B) {
		for range b.N {
			_, _ = s.Sign(p, "rid", "/m")
		}
	})
	b.Run("reused token", func(b *testing.B) {
		for range b.N {
			_, _ = s.Token(p, "/m")
		}
	})
	once, err := s.Sign(p, "rid", "/m")
	require.NoError(b, err)
	b.Run("verify signature", func(b *testing.B) {
		for range b.N {
			_, _ = v.Verify(once, "rid", "/m")
		}
	})
	tok, err := s.Token(p, "/m")
	require.NoError(b, err)
	b.Run("verify remembered", func(b *testing.B) {
		for range b.N {
			_, _ = v.Verify(tok, "rid", "/m")
		}
	})
}
