package db

import (
	"context"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Migrations is the Migrate function of a service's store: it applies the
// numbered SQL files of files (embedded by the store) to the service's
// schema, as Migrate does.
func Migrations(schema string, files fs.FS) func(context.Context, *pgxpool.Pool) error {
	return func(ctx context.Context, pool *pgxpool.Pool) error { return Migrate(ctx, pool, schema, files) }
}
