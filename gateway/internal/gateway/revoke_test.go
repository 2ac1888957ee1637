package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/vulnscan/vulnscan/gateway/internal/keyauth"
	"github.com/vulnscan/vulnscan/pkg/apikey"
	"github.com/vulnscan/vulnscan/pkg/keycache"
	"github.com/vulnscan/vulnscan/pkg/redistest"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
)

// TestRevocationThroughReplicaIsImmediate: a key this replica holds as
// active is refused on the next request once a revocation made through the
// replica succeeds, even when the announcement has not reached it (no
// listener runs here); a failed revocation or another call forgets nothing.
func TestRevocationThroughReplicaIsImmediate(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Client(t)
	v := keyauth.New(rdb, nil, discardLog(), time.Minute, 100)
	v.Flush()
	key, _, hash, err := apikey.Generate()
	require.NoError(t, err)
	active, _ := json.Marshal(keycache.Entry{Status: "active", KeyID: "k", OrgID: "o", Scopes: []string{"read"}})
	require.NoError(t, rdb.Set(ctx, keycache.Key(hash), active, keycache.TTL).Err())
	t.Cleanup(func() { rdb.Del(ctx, keycache.Key(hash)) })
	_, err = v.Verify(ctx, key) // now held in process
	require.NoError(t, err)

	// The auth service records the revocation in Redis; this replica has
	// not heard the announcement.
	tomb, _ := json.Marshal(keycache.Entry{Status: "revoked"})
	require.NoError(t, rdb.Set(ctx, keycache.Key(hash), tomb, keycache.TombstoneTTL).Err())
	_, err = v.Verify(ctx, key)
	require.NoError(t, err, "the fixture needs the replica's own copy to be stale")

	intercept := forgetOnRevoke(v.Flush)
	call := func(method string, fail error) {
		err := intercept(ctx, method, nil, nil, nil, func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
			return fail
		})
		require.Equal(t, fail, err)
	}
	call(authv1.AuthService_RevokeAPIKey_FullMethodName, errors.New("refused"))
	call(authv1.AuthService_GetCredits_FullMethodName, nil)
	_, err = v.Verify(ctx, key)
	require.NoError(t, err, "a failed revocation or another call forgot the cache")

	call(authv1.AuthService_RevokeAPIKey_FullMethodName, nil)
	_, err = v.Verify(ctx, key)
	require.ErrorIs(t, err, keyauth.ErrRevoked)
}
