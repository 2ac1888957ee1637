package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

func setup(t *testing.T) (*Store, string, string) {
	t.Helper()
	pool := dbtest.New(t)
	require.NoError(t, Migrate(context.Background(), pool))
	s := &Store{Pool: pool}
	org, user, err := s.CreateOrg(context.Background(), "org", "auto", "owner", 0)
	require.NoError(t, err)
	return s, org, user
}

func newKey(t *testing.T, s *Store, org, user, parent string, expires *time.Time) (Key, error) {
	t.Helper()
	n := time.Now().UnixNano()
	return s.CreateKey(context.Background(), Key{OrgID: org, UserID: user, ParentID: parent, Name: "k", Prefix: "vsk_x",
		Hash: fmt.Sprintf("hash-%d", n), Scopes: []string{"read"}, ExpiresAt: expires}, 100)
}

func at(d time.Duration) *time.Time { t := time.Now().Add(d); return &t }

func TestChildKeyNeverOutlivesParent(t *testing.T) {
	t.Parallel()
	s, org, user := setup(t)
	parent, err := newKey(t, s, org, user, "", at(10*time.Minute))
	require.NoError(t, err)

	tests := []struct {
		name    string
		expires *time.Time
		want    error
	}{
		{"no expiry under an expiring parent", nil, ErrOutlivesParent},
		{"later than the parent", at(time.Hour), ErrOutlivesParent},
		{"before the parent", at(5 * time.Minute), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newKey(t, s, org, user, parent.ID, tc.expires)
			if tc.want == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.want)
			}
		})
	}

	_, _, err = s.RevokeKey(context.Background(), parent.ID, org)
	require.NoError(t, err)
	_, err = newKey(t, s, org, user, parent.ID, at(time.Minute))
	require.ErrorIs(t, err, ErrParentInactive, "a revoked key creates nothing")
}

func TestRevokingAKeyRevokesItsDescendants(t *testing.T) {
	t.Parallel()
	s, org, user := setup(t)
	ctx := context.Background()
	root, err := newKey(t, s, org, user, "", nil)
	require.NoError(t, err)
	child, err := newKey(t, s, org, user, root.ID, nil)
	require.NoError(t, err)
	grandchild, err := newKey(t, s, org, user, child.ID, nil)
	require.NoError(t, err)
	sibling, err := newKey(t, s, org, user, "", nil)
	require.NoError(t, err)

	k, hashes, err := s.RevokeKey(ctx, root.ID, org)
	require.NoError(t, err)
	require.NotNil(t, k.RevokedAt)
	require.ElementsMatch(t, []string{root.Hash, child.Hash, grandchild.Hash}, hashes)
	for _, id := range []string{root.ID, child.ID, grandchild.ID} {
		got, err := s.KeyByID(ctx, id, org)
		require.NoError(t, err)
		require.NotNil(t, got.RevokedAt, "key %s", id)
	}
	got, err := s.KeyByID(ctx, sibling.ID, org)
	require.NoError(t, err)
	require.Nil(t, got.RevokedAt)

	// Every revoked hash waits in the outbox; a failed publication keeps it
	// there, a successful one removes it.
	n, err := s.PendingRevocations(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	done, err := s.AnnounceRevocations(ctx, 100, func(string) error { return errors.New("redis down") })
	require.NoError(t, err)
	require.Zero(t, done)
	n, err = s.PendingRevocations(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	var published []string
	done, err = s.AnnounceRevocations(ctx, 100, func(h string) error { published = append(published, h); return nil })
	require.NoError(t, err)
	require.Equal(t, 3, done)
	require.ElementsMatch(t, hashes, published)
	n, err = s.PendingRevocations(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
}
