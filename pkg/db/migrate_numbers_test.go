package db

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

// TestMigrateRefusesDuplicateNumbers: two migrations with one number are a
// build mistake caught before any statement runs (no database is needed).
func TestMigrateRefusesDuplicateNumbers(t *testing.T) {
	t.Parallel()
	files := fstest.MapFS{
		"0001_init.up.sql":  {Data: []byte("SELECT 1")},
		"0002_a.up.sql":     {Data: []byte("SELECT 1")},
		"0002_b.up.sql":     {Data: []byte("SELECT 1")},
		"0003_later.up.sql": {Data: []byte("SELECT 1")},
	}
	err := Migrate(context.Background(), nil, "svc", files)
	require.ErrorContains(t, err, "share the number 2")
}
