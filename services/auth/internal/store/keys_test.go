package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

func setup(t *testing.T) (*Store, string, string) {
	t.Helper()
	s := &Store{Pool: dbtest.Migrated(t, "auth_store", Migrate)}
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

func TestKeyLifecycle(t *testing.T) {
	t.Parallel()
	s, org, user := setup(t)
	ctx := context.Background()
	other, otherUser, err := s.CreateOrg(ctx, "other", "auto", "owner", 0)
	require.NoError(t, err)

	k, err := newKey(t, s, org, user, "", nil)
	require.NoError(t, err)
	got, err := s.KeyByHash(ctx, k.Hash)
	require.NoError(t, err)
	require.Equal(t, k.ID, got.ID)
	require.Equal(t, org, got.OrgID)
	require.Nil(t, got.RevokedAt)

	_, err = s.KeyByHash(ctx, "no-such-hash")
	require.ErrorIs(t, err, ErrNotFound)
	_, err = s.KeyByID(ctx, k.ID, other)
	require.ErrorIs(t, err, ErrNotFound, "another organization's key is not found")
	_, _, err = s.RevokeKey(ctx, k.ID, other)
	require.ErrorIs(t, err, ErrNotFound, "another organization cannot revoke it")

	// A second key of another organization is not listed here.
	_, err = newKey(t, s, other, otherUser, "", nil)
	require.NoError(t, err)
	list, err := s.ListKeys(ctx, org)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, k.ID, list[0].ID)

	revoked, hashes, err := s.RevokeKey(ctx, k.ID, org)
	require.NoError(t, err)
	require.NotNil(t, revoked.RevokedAt)
	require.Equal(t, []string{k.Hash}, hashes)
	got, err = s.KeyByHash(ctx, k.Hash)
	require.NoError(t, err)
	require.NotNil(t, got.RevokedAt, "verification sees the revocation")

	// Revoking again keeps the first revocation time.
	again, _, err := s.RevokeKey(ctx, k.ID, org)
	require.NoError(t, err)
	require.True(t, again.RevokedAt.Equal(*revoked.RevokedAt))

	// Each revocation is queued for announcement; a failed publish stays
	// queued, a successful one leaves the queue.
	pending, err := s.PendingRevocations(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, pending)
	n, err := s.AnnounceRevocations(ctx, 10, func(string) error { return errors.New("redis down") })
	require.NoError(t, err)
	require.Zero(t, n)
	pending, err = s.PendingRevocations(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, pending)
	var published []string
	n, err = s.AnnounceRevocations(ctx, 10, func(h string) error { published = append(published, h); return nil })
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, []string{k.Hash, k.Hash}, published)
	pending, err = s.PendingRevocations(ctx)
	require.NoError(t, err)
	require.Zero(t, pending)
}

func TestActiveKeyLimitCountsOnlyLiveKeys(t *testing.T) {
	t.Parallel()
	s, org, user := setup(t)
	ctx := context.Background()
	create := func(expires *time.Time) (Key, error) {
		return s.CreateKey(ctx, Key{OrgID: org, UserID: user, Name: "k", Prefix: "vsk_x",
			Hash: fmt.Sprintf("h-%d", time.Now().UnixNano()), Scopes: []string{"read"}, ExpiresAt: expires}, 2)
	}
	a, err := create(nil)
	require.NoError(t, err)
	_, err = create(nil)
	require.NoError(t, err)
	_, err = create(nil)
	require.ErrorIs(t, err, ErrTooManyKeys)
	_, _, err = s.RevokeKey(ctx, a.ID, org)
	require.NoError(t, err)
	_, err = create(nil)
	require.NoError(t, err, "a revoked key frees its place")
	_, err = s.Pool.Exec(ctx, `UPDATE auth.api_keys SET expires_at = now() - interval '1 second' WHERE org_id = $1 AND revoked_at IS NULL`, org)
	require.NoError(t, err)
	_, err = create(at(time.Hour))
	require.NoError(t, err, "expired keys free their places")

	_, err = s.CreateKey(ctx, Key{OrgID: "00000000-0000-4000-8000-000000000009", UserID: user, Name: "k", Hash: "h-x", Scopes: []string{"read"}}, 2)
	require.ErrorIs(t, err, ErrNotFound)
}

func TestKeyRecordsWhatItWasCreatedWith(t *testing.T) {
	t.Parallel()
	s, org, user := setup(t)
	ctx := context.Background()
	exp := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	k, err := s.CreateKey(ctx, Key{OrgID: org, UserID: user, Name: "deploy", Prefix: "vsk_ab12", Hash: "h-deploy",
		Scopes: []string{"read", "write"}, ExpiresAt: &exp}, 10)
	require.NoError(t, err)
	require.NotEmpty(t, k.ID)
	require.False(t, k.CreatedAt.IsZero())

	for name, lookup := range map[string]func() (Key, error){
		"by hash": func() (Key, error) { return s.KeyByHash(ctx, "h-deploy") },
		"by id":   func() (Key, error) { return s.KeyByID(ctx, k.ID, org) },
	} {
		t.Run(name, func(t *testing.T) {
			got, err := lookup()
			require.NoError(t, err)
			require.Equal(t, k.ID, got.ID)
			require.Equal(t, org, got.OrgID)
			require.Equal(t, user, got.UserID)
			require.Equal(t, "deploy", got.Name)
			require.Equal(t, "vsk_ab12", got.Prefix)
			require.Equal(t, "h-deploy", got.Hash)
			require.Equal(t, []string{"read", "write"}, got.Scopes)
			require.NotNil(t, got.ExpiresAt)
			require.True(t, got.ExpiresAt.Equal(exp))
			require.Nil(t, got.RevokedAt)
			require.True(t, got.CreatedAt.Equal(k.CreatedAt))
		})
	}

	_, err = s.CreateKey(ctx, Key{OrgID: org, UserID: user, Name: "copy", Prefix: "vsk_ab12", Hash: "h-deploy", Scopes: []string{"read"}}, 10)
	require.Error(t, err, "a hash names one key")
	list, err := s.ListKeys(ctx, org)
	require.NoError(t, err)
	require.Len(t, list, 1)
}

func TestListKeysNewestFirst(t *testing.T) {
	t.Parallel()
	s, org, user := setup(t)
	ctx := context.Background()
	var ids []string
	for range 3 {
		k, err := newKey(t, s, org, user, "", nil)
		require.NoError(t, err)
		ids = append(ids, k.ID)
	}
	// Creation times are spread so that the order does not rest on ids.
	for i, id := range ids {
		_, err := s.Pool.Exec(ctx, `UPDATE auth.api_keys SET created_at = now() - make_interval(mins => $2) WHERE id = $1`, id, 10-i)
		require.NoError(t, err)
	}
	list, err := s.ListKeys(ctx, org)
	require.NoError(t, err)
	got := make([]string, len(list))
	for i, k := range list {
		got[i] = k.ID
	}
	require.Equal(t, []string{ids[2], ids[1], ids[0]}, got)
}

func TestParentMustBeALiveKeyOfTheOrganization(t *testing.T) {
	t.Parallel()
	s, org, user := setup(t)
	ctx := context.Background()
	other, otherUser, err := s.CreateOrg(ctx, "other", "auto", "owner", 0)
	require.NoError(t, err)
	theirs, err := newKey(t, s, other, otherUser, "", nil)
	require.NoError(t, err)
	expired, err := newKey(t, s, org, user, "", at(time.Hour))
	require.NoError(t, err)
	_, err = s.Pool.Exec(ctx, `UPDATE auth.api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, expired.ID)
	require.NoError(t, err)

	for name, parent := range map[string]string{
		"another organization's key": theirs.ID,
		"an expired key":             expired.ID,
		"a key that does not exist":  nobody,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := newKey(t, s, org, user, parent, at(time.Minute))
			require.ErrorIs(t, err, ErrParentInactive)
		})
	}
	list, err := s.ListKeys(ctx, org)
	require.NoError(t, err)
	require.Len(t, list, 1, "only the expired key exists")
}

func TestConcurrentKeyCreationsRespectTheLimit(t *testing.T) {
	t.Parallel()
	s, org, user := setup(t)
	ctx := context.Background()
	const limit, tries = 3, 10
	var wg sync.WaitGroup
	results := make(chan error, tries)
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.CreateKey(ctx, Key{OrgID: org, UserID: user, Name: "k", Prefix: "vsk_x",
				Hash: fmt.Sprintf("race-%d", i), Scopes: []string{"read"}}, limit)
			results <- err
		}()
	}
	wg.Wait()
	close(results)
	created := 0
	for err := range results {
		if err == nil {
			created++
			continue
		}
		require.ErrorIs(t, err, ErrTooManyKeys)
	}
	require.Equal(t, limit, created)
	list, err := s.ListKeys(ctx, org)
	require.NoError(t, err)
	require.Len(t, list, limit)
}

func TestAnnounceRevocationsInBatchesAndStopsAtAFailure(t *testing.T) {
	t.Parallel()
	s, org, user := setup(t)
	ctx := context.Background()
	var hashes []string
	for range 5 {
		k, err := newKey(t, s, org, user, "", nil)
		require.NoError(t, err)
		_, h, err := s.RevokeKey(ctx, k.ID, org)
		require.NoError(t, err)
		hashes = append(hashes, h...)
	}

	// At most n per call, oldest first.
	var published []string
	record := func(h string) error { published = append(published, h); return nil }
	n, err := s.AnnounceRevocations(ctx, 2, record)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, hashes[:2], published)

	// A failure ends the round: what came before it is gone, the failed
	// one and the rest stay queued, the failure is recorded.
	calls := 0
	n, err = s.AnnounceRevocations(ctx, 10, func(h string) error {
		calls++
		if calls == 2 {
			return errors.New("redis: connection refused")
		}
		published = append(published, h)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, 2, calls, "nothing is tried after a failure")
	var attempts int
	var lastErr string
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT attempts, last_error FROM auth.revocation_outbox WHERE key_hash = $1`, hashes[3]).
		Scan(&attempts, &lastErr))
	require.Equal(t, 1, attempts)
	require.Equal(t, "redis: connection refused", lastErr)
	pending, err := s.PendingRevocations(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, pending)

	n, err = s.AnnounceRevocations(ctx, 10, record)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, hashes, published, "each hash published once, in order")
}

func TestAnnounceRecordsLongFailuresCut(t *testing.T) {
	t.Parallel()
	s, org, user := setup(t)
	ctx := context.Background()
	k, err := newKey(t, s, org, user, "", nil)
	require.NoError(t, err)
	_, _, err = s.RevokeKey(ctx, k.ID, org)
	require.NoError(t, err)

	for _, tc := range []struct {
		name, msg, want string
	}{
		{"ascii", strings.Repeat("x", 600), strings.Repeat("x", 500)},
		// A cut inside a multi-byte character would be text PostgreSQL
		// refuses to store; the cut falls before the character instead.
		{"cut inside a character", strings.Repeat("x", 499) + strings.Repeat("é", 10), strings.Repeat("x", 499)},
		{"short", "redis: i/o timeout", "redis: i/o timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := s.AnnounceRevocations(ctx, 10, func(string) error { return errors.New(tc.msg) })
			require.NoError(t, err)
			require.Zero(t, n)
			var got string
			require.NoError(t, s.Pool.QueryRow(ctx, `SELECT last_error FROM auth.revocation_outbox WHERE key_hash = $1`, k.Hash).Scan(&got))
			require.Equal(t, tc.want, got)
		})
	}
}
