package db_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
)

// TestTextArray checks that arrays render as literals the server reads
// back as the same items: uuids as they are, anything else quoted, and
// NULLs and numbers through ArrayLiteral.
func TestTextArray(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	for _, tc := range []struct {
		name  string
		items []string
		want  string
	}{
		{"none", []string{}, "{}"},
		{"uuids", []string{"0f8fad5b-d9cb-469f-a165-70867728950e", "7C9E6679-7425-40DE-944B-E07FC1F90AE7"},
			"{0f8fad5b-d9cb-469f-a165-70867728950e,7C9E6679-7425-40DE-944B-E07FC1F90AE7}"},
		{"others quoted", []string{"a,b", `q"uote`, `back\slash`, "", "NULL", "{x}", " padded ", "0f8fad5b"},
			`{"a,b","q\"uote","back\\slash","","NULL","{x}"," padded ",0f8fad5b}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lit := db.TextArray(tc.items)
			require.Equal(t, tc.want, lit)
			var back []string
			require.NoError(t, pool.QueryRow(ctx, `SELECT $1::text::text[]`, lit).Scan(&back))
			require.Equal(t, tc.items, back)
		})
	}
	var ids []string
	require.NoError(t, pool.QueryRow(ctx, `SELECT $1::uuid[]::text[]`, db.TextArray([]string{"0f8fad5b-d9cb-469f-a165-70867728950e"})).Scan(&ids))
	require.Equal(t, []string{"0f8fad5b-d9cb-469f-a165-70867728950e"}, ids, "an array as a uuid[] parameter")

	a := db.NewArrayLiteral(0)
	x := `x"y`
	a.Str("a,b")
	a.Opt(nil)
	a.Opt(&x)
	a.Int(-42)
	var mixed []*string
	require.NoError(t, pool.QueryRow(ctx, `SELECT $1::text::text[]`, a.String()).Scan(&mixed))
	require.Len(t, mixed, 4)
	require.Equal(t, "a,b", *mixed[0])
	require.Nil(t, mixed[1], "Opt(nil) is NULL")
	require.Equal(t, x, *mixed[2])
	require.Equal(t, "-42", *mixed[3])
}

// TestUUIDArray checks that uuids go to the server in binary and come back
// as the same uuids, in order, and that an item that is not a uuid sends the
// text literal, which the server refuses as it refuses any malformed uuid.
func TestUUIDArray(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	for _, tc := range []struct {
		name  string
		items []string
	}{
		{"none", []string{}},
		{"uuids", []string{"0f8fad5b-d9cb-469f-a165-70867728950e", "7c9e6679-7425-40de-944b-e07fc1f90ae7", "0f8fad5b-d9cb-469f-a165-70867728950e"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arg := db.UUIDArray(tc.items)
			require.IsType(t, []pgtype.UUID{}, arg, "sent in binary")
			var back []string
			require.NoError(t, pool.QueryRow(ctx, `SELECT $1::uuid[]::text[]`, arg).Scan(&back))
			require.Equal(t, tc.items, back)
			var n int
			require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM unnest($1::uuid[]) k(key) WHERE k.key IN (SELECT unnest($1::uuid[]))`, arg).Scan(&n))
			require.Equal(t, len(tc.items), n)
		})
	}
	arg := db.UUIDArray([]string{"0f8fad5b-d9cb-469f-a165-70867728950e", "not-a-uuid"})
	require.Equal(t, `{0f8fad5b-d9cb-469f-a165-70867728950e,"not-a-uuid"}`, arg, "a malformed item sends the literal")
	var back []string
	require.ErrorContains(t, pool.QueryRow(ctx, `SELECT $1::uuid[]::text[]`, arg).Scan(&back), "invalid input syntax for type uuid")
}
