package keyauth

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/vulnscan/vulnscan/pkg/apikey"
	"github.com/vulnscan/vulnscan/pkg/keycache"
	"github.com/vulnscan/vulnscan/pkg/redistest"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
)

// authStub answers VerifyAPIKey from a fixed table and counts the calls:
// each call stands for one Postgres query in the auth service.
type authStub struct {
	authv1.AuthInternalServiceClient
	keys  map[string]*authv1.VerifyAPIKeyResponse
	calls atomic.Int64
}

func (s *authStub) VerifyAPIKey(_ context.Context, in *authv1.VerifyAPIKeyRequest, _ ...grpc.CallOption) (*authv1.VerifyAPIKeyResponse, error) {
	s.calls.Add(1)
	if r, ok := s.keys[in.GetKeyHash()]; ok {
		return r, nil
	}
	return &authv1.VerifyAPIKeyResponse{Status: string(vocab.KeyUnknown)}, nil
}

func setup(t testing.TB) (*Verifier, *authStub, string, *redis.Client) {
	key, _, hash, err := apikey.Generate()
	require.NoError(t, err)
	stub := &authStub{keys: map[string]*authv1.VerifyAPIKeyResponse{
		hash: {Status: string(vocab.KeyActive), KeyId: "k1", OrgId: "o1", UserId: "u1", Scopes: []string{"read"}},
	}}
	rdb := redistest.Client(t)
	t.Cleanup(func() { rdb.Del(context.Background(), keycache.Key(hash)) })
	v := New(rdb, stub, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Minute, 1000)
	return v, stub, key, rdb
}

func TestCacheLevels(t *testing.T) {
	t.Parallel()
	v, stub, key, _ := setup(t)
	ctx := context.Background()

	e, err := v.Verify(ctx, key)
	require.NoError(t, err)
	require.Equal(t, "o1", e.OrgID)
	require.EqualValues(t, 1, stub.calls.Load())

	for i := 0; i < 10; i++ {
		_, err = v.Verify(ctx, key)
		require.NoError(t, err)
	}
	require.EqualValues(t, 1, stub.calls.Load(), "cache hits must not reach the auth service")
	require.EqualValues(t, 10, v.Stats.LocalHits.Load())

	// Another replica (empty local cache) is served by Redis.
	v.Flush()
	_, err = v.Verify(ctx, key)
	require.NoError(t, err)
	require.EqualValues(t, 1, stub.calls.Load())
	require.EqualValues(t, 1, v.Stats.RedisHits.Load())
}

func TestRevocationReachesEveryReplica(t *testing.T) {
	t.Parallel()
	v, _, key, rdb := setup(t)
	replica := New(rdb, v.auth, v.log, time.Minute, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, r := range []*Verifier{v, replica} {
		go func() { _ = r.Listen(ctx) }()
	}
	time.Sleep(200 * time.Millisecond) // subscriptions established
	for _, r := range []*Verifier{v, replica} {
		_, err := r.Verify(ctx, key)
		require.NoError(t, err)
	}
	require.NoError(t, keycache.Revoke(ctx, rdb, apikey.Hash(key)))
	for _, r := range []*Verifier{v, replica} {
		require.Eventually(t, func() bool {
			_, err := r.Verify(ctx, key)
			return err == ErrRevoked
		}, 2*time.Second, 5*time.Millisecond)
	}
}

// racingAuth answers "active" but, like a revocation landing during the
// lookup, writes the tombstone before answering.
type racingAuth struct {
	*authStub
	rdb *redis.Client
}

func (r racingAuth) VerifyAPIKey(ctx context.Context, in *authv1.VerifyAPIKeyRequest, opts ...grpc.CallOption) (*authv1.VerifyAPIKeyResponse, error) {
	if err := keycache.Revoke(ctx, r.rdb, in.GetKeyHash()); err != nil {
		return nil, err
	}
	return r.authStub.VerifyAPIKey(ctx, in, opts...)
}

func TestTombstoneIsNeverOverwritten(t *testing.T) {
	t.Parallel()
	v, stub, key, rdb := setup(t)
	racing := New(rdb, racingAuth{stub, rdb}, v.log, time.Minute, 1000)
	_, err := racing.Verify(context.Background(), key)
	require.ErrorIs(t, err, ErrRevoked, "a stale active answer must not win over the revocation")
	_, err = racing.Verify(context.Background(), key)
	require.ErrorIs(t, err, ErrRevoked)
	b, err := rdb.Get(context.Background(), keycache.Key(apikey.Hash(key))).Bytes()
	require.NoError(t, err)
	require.Contains(t, string(b), string(vocab.KeyRevoked))
}

func TestVerifyOutcomes(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t)
	past := time.Now().Add(-time.Minute)
	mk := func() (string, string) { k, _, h, _ := apikey.Generate(); return k, h }
	active, ha := mk()
	expired, he := mk()
	revoked, hr := mk()
	unknown, _ := mk()
	stub := &authStub{keys: map[string]*authv1.VerifyAPIKeyResponse{
		ha: {Status: string(vocab.KeyActive), KeyId: "a", OrgId: "o", UserId: "u"},
		he: {Status: string(vocab.KeyActive), KeyId: "e", OrgId: "o", UserId: "u", ExpiresAt: timestamp(past)},
		hr: {Status: string(vocab.KeyRevoked), KeyId: "r"},
	}}
	v := New(rdb, stub, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Minute, 1000)
	tests := []struct {
		name string
		key  string
		err  error
	}{
		{"active", active, nil},
		{"expired", expired, ErrExpired},
		{"revoked", revoked, ErrRevoked},
		{"unknown", unknown, ErrUnknown},
		{"malformed", "vsk_short", ErrMalformed},
		{"empty", "", ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), tc.key)
			require.ErrorIs(t, err, tc.err)
		})
	}
}

// BenchmarkVerifyLocalHit measures the key check on an in-process cache hit:
// no Redis round trip and no auth service (Postgres) query.
func BenchmarkVerifyLocalHit(b *testing.B) {
	v, stub, key, _ := setup(b)
	ctx := context.Background()
	_, _ = v.Verify(ctx, key)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := v.Verify(ctx, key); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(stub.calls.Load()-1)/float64(b.N), "auth-lookups/op")
}

// BenchmarkVerifyRedisHit measures the key check when only Redis has the key
// (e.g. the first request on a fresh gateway replica).
func BenchmarkVerifyRedisHit(b *testing.B) {
	v, stub, key, _ := setup(b)
	ctx := context.Background()
	_, _ = v.Verify(ctx, key)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v.Flush()
		if _, err := v.Verify(ctx, key); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(stub.calls.Load()-1)/float64(b.N), "auth-lookups/op")
}
