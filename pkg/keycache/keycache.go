// Package keycache is the shared Redis contract for API key lookups between
// the auth service (which revokes) and every gateway replica (which caches).
//
// Entries live at Key(hash) as JSON. Gateways write verified entries with SET
// NX so that they never overwrite a revocation; the auth service writes a
// "revoked" tombstone unconditionally and publishes the hash on Channel, and
// each gateway drops its in-process copy when the message arrives.
package keycache

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vulnscan/vulnscan/pkg/vocab"
)

const (
	// Channel carries hashes of revoked keys.
	Channel = "vulnscan:apikeys:revoked"
	// TTL bounds how long a verified entry is trusted in Redis.
	TTL = 5 * time.Minute
	// TombstoneTTL outlives any entry written before the revocation.
	TombstoneTTL = 2 * TTL
)

// Entry is the cached result of verifying one key.
type Entry struct {
	Status    string     `json:"status"`
	KeyID     string     `json:"key_id,omitempty"`
	OrgID     string     `json:"org_id,omitempty"`
	UserID    string     `json:"user_id,omitempty"`
	Scopes    []string   `json:"scopes,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// Key is the Redis key of a key hash.
func Key(hash string) string { return "vulnscan:apikey:" + hash }

// Revoke records the revocation of the keys with these hashes and tells
// every gateway to forget them, in one round trip.
func Revoke(ctx context.Context, rdb redis.UniversalClient, hashes ...string) error {
	if len(hashes) == 0 {
		return nil
	}
	b, _ := json.Marshal(Entry{Status: string(vocab.KeyRevoked)})
	pipe := rdb.TxPipeline()
	for _, hash := range hashes {
		pipe.Set(ctx, Key(hash), b, TombstoneTTL)
		pipe.Publish(ctx, Channel, hash)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("publish key revocation: %w", err)
	}
	return nil
}
