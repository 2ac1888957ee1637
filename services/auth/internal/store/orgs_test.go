package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

const nobody = "00000000-0000-4000-8000-000000000009"

func TestCreateOrgOpensAccountWithOwnerAndBalance(t *testing.T) {
	t.Parallel()
	s, _, _ := setup(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		mode      string
		credits   int32
		wantKinds []string
	}{
		{"with opening credits", "auto", 25, []string{"grant"}},
		{"without credits writes no ledger row", "manual", 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			org, owner, err := s.CreateOrg(ctx, tc.name, tc.mode, "alice", tc.credits)
			require.NoError(t, err)

			o, err := s.GetOrg(ctx, org)
			require.NoError(t, err)
			require.Equal(t, Org{ID: org, Name: tc.name, VerificationMode: tc.mode}, o)

			u, err := s.GetUser(ctx, owner)
			require.NoError(t, err)
			require.Equal(t, User{ID: owner, OrgID: org, Username: "alice"}, u)
			got, err := s.OwnerOf(ctx, org)
			require.NoError(t, err)
			require.Equal(t, owner, got)

			bal, err := s.Balance(ctx, org)
			require.NoError(t, err)
			require.Equal(t, tc.credits, bal)
			kinds, sum := ledgerKinds(t, s, org)
			require.Equal(t, tc.wantKinds, kinds)
			require.Equal(t, tc.credits, sum)
		})
	}
}

func TestCreateOrgRefusals(t *testing.T) {
	t.Parallel()
	s, org, _ := setup(t)
	ctx := context.Background()

	_, _, err := s.CreateOrg(ctx, "org", "auto", "someone", 5)
	require.ErrorIs(t, err, ErrDuplicate, "names are unique")

	// Whatever fails, nothing of the organization is left behind.
	for _, tc := range []struct {
		name, mode string
		credits    int32
	}{
		{"unknown verification mode", "sometimes", 0},
		{"negative opening balance", "auto", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := s.CreateOrg(ctx, tc.name, tc.mode, "owner", tc.credits)
			require.Error(t, err)
			require.NotErrorIs(t, err, ErrDuplicate)
		})
	}
	orgs, err := s.ListOrgs(ctx)
	require.NoError(t, err)
	require.Len(t, orgs, 1)
	require.Equal(t, org, orgs[0].ID)
	var users int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM auth.users`).Scan(&users))
	require.Equal(t, 1, users)
}

func TestLookupsOfUnknownRows(t *testing.T) {
	t.Parallel()
	s, _, _ := setup(t)
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"GetOrg":    func() error { _, err := s.GetOrg(ctx, nobody); return err },
		"GetUser":   func() error { _, err := s.GetUser(ctx, nobody); return err },
		"OwnerOf":   func() error { _, err := s.OwnerOf(ctx, nobody); return err },
		"KeyByHash": func() error { _, err := s.KeyByHash(ctx, "nothing"); return err },
		"KeyByID":   func() error { _, err := s.KeyByID(ctx, nobody, nobody); return err },
		"RevokeKey": func() error { _, _, err := s.RevokeKey(ctx, nobody, ""); return err },
		"RepoByURL": func() error { _, err := s.RepoByURL(ctx, nobody, "https://example.com/a/b"); return err },
		"Balance":   func() error { _, err := s.Balance(ctx, nobody); return err },
	} {
		t.Run(name, func(t *testing.T) {
			require.ErrorIs(t, call(), ErrNotFound)
		})
	}
	keys, err := s.ListKeys(ctx, nobody)
	require.NoError(t, err)
	require.Empty(t, keys)
	repos, err := s.ListRepos(ctx, nobody)
	require.NoError(t, err)
	require.Empty(t, repos)
}

func TestUsers(t *testing.T) {
	t.Parallel()
	s, org, owner := setup(t)
	ctx := context.Background()
	other, _, err := s.CreateOrg(ctx, "other", "auto", "owner", 0)
	require.NoError(t, err)

	bob, err := s.CreateUser(ctx, org, "bob")
	require.NoError(t, err)
	u, err := s.GetUser(ctx, bob)
	require.NoError(t, err)
	require.Equal(t, User{ID: bob, OrgID: org, Username: "bob"}, u)

	_, err = s.CreateUser(ctx, org, "bob")
	require.ErrorIs(t, err, ErrDuplicate, "usernames are unique within an organization")
	_, err = s.CreateUser(ctx, org, "owner")
	require.ErrorIs(t, err, ErrDuplicate, "the owner's name is taken too")
	otherBob, err := s.CreateUser(ctx, other, "bob")
	require.NoError(t, err, "another organization may have its own bob")
	require.NotEqual(t, bob, otherBob)

	_, err = s.CreateUser(ctx, nobody, "carol")
	require.Error(t, err, "a user needs an existing organization")

	got, err := s.OwnerOf(ctx, org)
	require.NoError(t, err)
	require.Equal(t, owner, got, "members do not become owners")
}

func TestListOrgsWithBalances(t *testing.T) {
	t.Parallel()
	s, first, _ := setup(t)
	ctx := context.Background()
	second, _, err := s.CreateOrg(ctx, "second", "manual", "owner", 7)
	require.NoError(t, err)
	_, err = s.Grant(ctx, first, 3)
	require.NoError(t, err)

	orgs, err := s.ListOrgs(ctx)
	require.NoError(t, err)
	require.Len(t, orgs, 2)
	for i, want := range []OrgSummary{
		{ID: first, Name: "org", VerificationMode: "auto", Balance: 3},
		{ID: second, Name: "second", VerificationMode: "manual", Balance: 7},
	} {
		got := orgs[i]
		require.False(t, got.CreatedAt.IsZero())
		got.CreatedAt = want.CreatedAt
		require.Equal(t, want, got, "row %d, oldest first", i)
	}
}

func TestConnectedRepos(t *testing.T) {
	t.Parallel()
	s, org, _ := setup(t)
	ctx := context.Background()
	other, _, err := s.CreateOrg(ctx, "other", "auto", "owner", 0)
	require.NoError(t, err)
	const key = "https://github.com/acme/app"

	first, err := s.ConnectRepo(ctx, Repo{OrgID: org, URL: "https://github.com/acme/app.git", CloneURL: "https://github.com/acme/app.git",
		DefaultBranch: "main", TokenEnc: []byte("sealed-1")}, key)
	require.NoError(t, err)
	require.NotEmpty(t, first.ID)
	require.False(t, first.CreatedAt.IsZero())

	got, err := s.RepoByURL(ctx, org, key)
	require.NoError(t, err)
	require.Equal(t, first, got)

	// Connecting the same repository again updates the row in place.
	second, err := s.ConnectRepo(ctx, Repo{OrgID: org, URL: "https://GitHub.com/acme/app", CloneURL: "https://mirror.example/acme/app",
		DefaultBranch: "trunk"}, key)
	require.NoError(t, err)
	require.Equal(t, first.ID, second.ID, "one row per organization and URL key")
	require.True(t, first.CreatedAt.Equal(second.CreatedAt))
	got, err = s.RepoByURL(ctx, org, key)
	require.NoError(t, err)
	require.Equal(t, "https://GitHub.com/acme/app", got.URL)
	require.Equal(t, "https://mirror.example/acme/app", got.CloneURL)
	require.Equal(t, "trunk", got.DefaultBranch)
	require.Nil(t, got.TokenEnc, "a reconnect without a token drops the old one")

	// Organizations do not see each other's repositories.
	_, err = s.RepoByURL(ctx, other, key)
	require.ErrorIs(t, err, ErrNotFound)
	theirs, err := s.ConnectRepo(ctx, Repo{OrgID: other, URL: key, CloneURL: key}, key)
	require.NoError(t, err)
	require.NotEqual(t, first.ID, theirs.ID)

	lib, err := s.ConnectRepo(ctx, Repo{OrgID: org, URL: "https://github.com/acme/lib", CloneURL: "https://github.com/acme/lib"}, "https://github.com/acme/lib")
	require.NoError(t, err)
	list, err := s.ListRepos(ctx, org)
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.ElementsMatch(t, []string{first.ID, lib.ID}, []string{list[0].ID, list[1].ID})
	require.False(t, list[0].CreatedAt.Before(list[1].CreatedAt), "newest first")
}

func TestRepoTokenADNamesTheRow(t *testing.T) {
	t.Parallel()
	ad := RepoTokenAD("0A1B2C3D-0000-4000-8000-00000000000F", "https://example.com/a/b")
	require.Equal(t, "auth.connected_repos", ad.Table)
	require.Equal(t, "token_enc", ad.Column)
	require.Equal(t, "0a1b2c3d-0000-4000-8000-00000000000f/https://example.com/a/b", ad.Row,
		"the row is named as PostgreSQL prints the uuid, so re-sealing on start finds the same value")
	require.Len(t, SealedColumns, 1)
	require.Equal(t, ad.Table, SealedColumns[0].Table)
	require.Equal(t, ad.Column, SealedColumns[0].Column)
}
