package db

import (
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable reports whether err means the database cannot be reached or
// is shutting down or starting (connection refused or reset, a failed
// connect, SQLSTATE class 08 or 57P0x), as opposed to a fault of the query.
// Callers answer such errors as "temporarily unavailable" (503), which is
// safe to retry, instead of an internal error.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return len(pe.Code) == 5 && (pe.Code[:2] == "08" || pe.Code[:4] == "57P0")
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	return pgconn.SafeToRetry(err)
}
