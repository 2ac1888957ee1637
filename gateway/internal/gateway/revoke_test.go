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
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/redistest"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
)

// TestRevocationThroughReplicaIsImmediate: a key this replica holds as
// active is refused on the next request once a revocation made through the
// replica succeeds, even when the announcement has not reached it (no
// listener runs here), and so is every other key of the caller's
// organization (the keys the revoked one created are revoked with it); a
// failed revocation or another call forgets nothing, and other
// organizations' keys stay cached.
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
	cached := func(id, org string) string {
		k, _, h, err := apikey.Generate()
		require.NoError(t, err)
		e, _ := json.Marshal(keycache.Entry{Status: "active", KeyID: id, OrgID: org, Scopes: []string{"read"}})
		require.NoError(t, rdb.Set(ctx, keycache.Key(h), e, keycache.TTL).Err())
		t.Cleanup(func() { rdb.Del(ctx, keycache.Key(h)) })
		_, err = v.Verify(ctx, k)
		require.NoError(t, err)
		return k
	}
	sibling, stranger := cached("child", "o"), cached("s", "p")

	// The auth service records the revocation in Redis; this replica has
	// not heard the announcement.
	tomb, _ := json.Marshal(keycache.Entry{Status: "revoked"})
	require.NoError(t, rdb.Set(ctx, keycache.Key(hash), tomb, keycache.TombstoneTTL).Err())
	_, err = v.Verify(ctx, key)
	require.NoError(t, err, "the fixture needs the replica's own copy to be stale")

	intercept := forgetOnRevoke(v.ForgetOrganization)
	caller := context.WithValue(ctx, principalKey, principal.Principal{OrgID: "O", KeyID: "caller"}) // ids compare as UUIDs do, whatever their case
	revoke := &authv1.RevokeAPIKeyRequest{Id: "k"}
	call := func(method string, req any, fail error) {
		err := intercept(caller, method, req, nil, nil, func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
			return fail
		})
		require.Equal(t, fail, err)
	}
	call(authv1.AuthService_RevokeAPIKey_FullMethodName, revoke, errors.New("refused"))
	call(authv1.AuthService_GetCredits_FullMethodName, &authv1.GetCreditsRequest{}, nil)
	_, err = v.Verify(ctx, key)
	require.NoError(t, err, "a failed revocation or another call forgot the key")

	require.True(t, v.Active(sibling))

	call(authv1.AuthService_RevokeAPIKey_FullMethodName, revoke, nil)
	require.True(t, v.Active(stranger), "another organization's key stays cached")
	require.False(t, v.Active(sibling), "the organization's other keys are looked up again")
	_, err = v.Verify(ctx, key)
	require.ErrorIs(t, err, keyauth.ErrRevoked)

	// Without a caller the organization is unknown: every key is forgotten.
	require.NoError(t, intercept(ctx, authv1.AuthService_RevokeAPIKey_FullMethodName, revoke, nil, nil,
		func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }))
	require.False(t, v.Active(stranger))
}
