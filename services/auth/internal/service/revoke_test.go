package service

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/apikey"
	"github.com/vulnscan/vulnscan/pkg/keycache"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/redistest"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	"github.com/vulnscan/vulnscan/services/auth/internal/store"
)

// The tests share the Redis server at REDIS_URL (see redistest) and touch
// only the entries of keys they generated.

// tombstone reads the cache entry of a key hash ("" when there is none).
func tombstone(t *testing.T, rdb *redis.Client, hash string) string {
	t.Helper()
	b, err := rdb.Get(context.Background(), keycache.Key(hash)).Bytes()
	if err == redis.Nil {
		return ""
	}
	require.NoError(t, err)
	var e keycache.Entry
	require.NoError(t, json.Unmarshal(b, &e))
	ttl, err := rdb.TTL(context.Background(), keycache.Key(hash)).Result()
	require.NoError(t, err)
	require.Positive(t, ttl, "the tombstone expires")
	require.LessOrEqual(t, ttl, keycache.TombstoneTTL)
	return e.Status
}

// keyTree issues a root key of user and a key it creates, and returns the
// public API, the root's caller, the root and both keys' hashes.
func keyTree(t *testing.T, s *Service, org, user string) (*Public, context.Context, store.Key, []string) {
	t.Helper()
	pub := &Public{Service: s}
	ctx := context.Background()
	root, rootKey, err := s.issueKey(ctx, org, user, "root", []string{"write"}, nil)
	require.NoError(t, err)
	caller := principal.With(ctx, principal.Principal{OrgID: org, UserID: user, KeyID: root.ID, Scopes: root.Scopes})
	child, err := pub.CreateAPIKey(caller, &authv1.CreateAPIKeyRequest{Name: "child", Scopes: []string{"read"}})
	require.NoError(t, err)
	return pub, caller, root, []string{apikey.Hash(rootKey), apikey.Hash(child.GetKey())}
}

func TestRevocationInvalidatesTheKeyCache(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	s, org, user := newServiceWith(t, rdb)
	pub, caller, root, hashes := keyTree(t, s, org, user)
	ctx := context.Background()
	_, bystander, err := s.issueKey(ctx, org, user, "bystander", []string{"read"}, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, h := range append(hashes, apikey.Hash(bystander)) {
			_ = rdb.Del(context.Background(), keycache.Key(h)).Err()
		}
	})

	sub := rdb.Subscribe(ctx, keycache.Channel)
	defer func() { _ = sub.Close() }()
	_, err = sub.Receive(ctx) // the subscription is live before revoking
	require.NoError(t, err)

	_, err = pub.RevokeAPIKey(caller, &authv1.RevokeAPIKeyRequest{Id: root.ID})
	require.NoError(t, err)

	// The gateways hear of the key and of the key it created, at once.
	for _, h := range hashes {
		require.Equal(t, string(vocab.KeyRevoked), tombstone(t, rdb, h))
	}
	require.Empty(t, tombstone(t, rdb, apikey.Hash(bystander)), "other keys stay cached")
	heard := map[string]bool{}
	for !heard[hashes[0]] || !heard[hashes[1]] {
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		m, err := sub.ReceiveMessage(rctx)
		cancel()
		require.NoError(t, err)
		heard[m.Payload] = true
	}
	require.False(t, heard[apikey.Hash(bystander)])
	pending, err := s.Store.PendingRevocations(ctx)
	require.NoError(t, err)
	require.Zero(t, pending, "published announcements leave the outbox")
}

// TestRevocationPublishesBeforeAnswering: the revoke answers only once the
// tombstones are in Redis, even when the outbox rows committed with it were
// claimed by another announcer (Announce on this replica or another) that
// has not yet published them. The rule below keeps the rows from this
// revoke's own announcement, as that claim would.
func TestRevocationPublishesBeforeAnswering(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	s, org, user := newServiceWith(t, rdb)
	pub, caller, root, hashes := keyTree(t, s, org, user)
	ctx := context.Background()
	t.Cleanup(func() {
		for _, h := range hashes {
			_ = rdb.Del(context.Background(), keycache.Key(h)).Err()
		}
	})
	// A gateway cached both keys as active.
	for _, h := range hashes {
		b, err := json.Marshal(keycache.Entry{Status: string(vocab.KeyActive), OrgID: org})
		require.NoError(t, err)
		require.NoError(t, rdb.Set(ctx, keycache.Key(h), b, keycache.TTL).Err())
	}
	_, err := s.Store.Pool.Exec(ctx, `CREATE RULE claimed_elsewhere AS ON INSERT TO auth.revocation_outbox DO INSTEAD NOTHING`)
	require.NoError(t, err)

	_, err = pub.RevokeAPIKey(caller, &authv1.RevokeAPIKeyRequest{Id: root.ID})
	require.NoError(t, err)
	for _, h := range hashes {
		require.Equal(t, string(vocab.KeyRevoked), tombstone(t, rdb, h), "revoked before the answer")
	}
}

func TestRevocationWaitsForRedisThenAnnounces(t *testing.T) {
	t.Parallel()
	s, org, user := newService(t) // Redis unreachable
	a := &Admin{Service: s}
	ctx := context.Background()
	k, key, err := s.issueKey(ctx, org, user, "k", []string{"read"}, nil)
	require.NoError(t, err)
	hash := apikey.Hash(key)

	r, err := a.AdminRevokeAPIKey(ctx, &authv1.AdminRevokeAPIKeyRequest{Id: k.ID})
	require.NoError(t, err, "the revocation commits without Redis")
	require.NotNil(t, r.GetRevokedAt())
	_, err = s.announceOnce(ctx)
	require.Error(t, err, "publishing fails while Redis is down")
	pending, err := s.Store.PendingRevocations(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, pending)

	// Redis is back: the next round publishes what waited.
	live := redistest.Client(t)
	t.Cleanup(func() { _ = live.Close() })
	t.Cleanup(func() { _ = live.Del(context.Background(), keycache.Key(hash)).Err() })
	s.Redis = live
	n, err := s.announceOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, string(vocab.KeyRevoked), tombstone(t, live, hash))
	pending, err = s.Store.PendingRevocations(ctx)
	require.NoError(t, err)
	require.Zero(t, pending)

	// Announce stops when its context ends.
	actx, cancel := context.WithCancel(ctx)
	cancel()
	require.NoError(t, s.Announce(actx))
}
