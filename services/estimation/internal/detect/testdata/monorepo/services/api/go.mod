module github.com/acme/mono/api

go 1.22

require github.com/go-chi/chi/v5 v5.0.10
require github.com/jackc/pgx/v5 v5.5.0
