// Package apierr holds the domain errors that services return. Each carries
// the HTTP status the public API answers with and a message safe to show to
// callers. An *Error converts itself to a gRPC status (grpc-go calls
// GRPCStatus), and the gateway turns that status back into the spec's error
// body {statusCode, message, error} with HTTPStatus.
package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Domain names the error domain in gRPC ErrorInfo details.
const Domain = "vulnscan"

// Error is a failure with a public message and an HTTP status.
type Error struct {
	Status  int
	Message string
	cause   error
}

func (e *Error) Error() string {
	if e.cause != nil {
		return e.Message + ": " + e.cause.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.cause }

// GRPCStatus renders the error as a gRPC status whose ErrorInfo carries the
// HTTP status, so that statuses without a gRPC code (402) survive the hop.
func (e *Error) GRPCStatus() *status.Status {
	st := status.New(codeFor(e.Status), e.Message)
	if d, err := st.WithDetails(&errdetails.ErrorInfo{
		Reason:   reason(e.Status),
		Domain:   Domain,
		Metadata: map[string]string{"http_status": strconv.Itoa(e.Status)},
	}); err == nil {
		return d
	}
	return st
}

// New returns an error with the given HTTP status and message.
func New(httpStatus int, format string, args ...any) *Error {
	return &Error{Status: httpStatus, Message: fmt.Sprintf(format, args...)}
}

// Wrap attaches an internal cause that is logged but never shown.
func (e *Error) Wrap(cause error) *Error { c := *e; c.cause = cause; return &c }

// Constructors of the errors services return, one per HTTP status the
// public API answers with. They stay functions (not a table of closures) so
// that vet checks their format strings at every call.

func Invalid(format string, args ...any) *Error { return New(http.StatusBadRequest, format, args...) }

func NotFound(format string, args ...any) *Error { return New(http.StatusNotFound, format, args...) }

func Conflict(format string, args ...any) *Error { return New(http.StatusConflict, format, args...) }

func Forbidden(format string, args ...any) *Error { return New(http.StatusForbidden, format, args...) }

func Unauthenticated(format string, args ...any) *Error {
	return New(http.StatusUnauthorized, format, args...)
}

func PaymentRequired(format string, args ...any) *Error {
	return New(http.StatusPaymentRequired, format, args...)
}

func TooLarge(format string, args ...any) *Error {
	return New(http.StatusRequestEntityTooLarge, format, args...)
}

// Internal is the only message a caller sees for an unexpected failure.
var Internal = New(http.StatusInternalServerError, "Internal server error")

// Is reports whether err is an *Error with the given HTTP status.
func Is(err error, httpStatus int) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == httpStatus
}

// pairs are the HTTP statuses and the gRPC codes that carry them, one to
// one: codeFor reads them left to right, HTTPStatus right to left.
var pairs = map[int]codes.Code{
	http.StatusBadRequest:         codes.InvalidArgument,
	http.StatusUnauthorized:       codes.Unauthenticated,
	http.StatusForbidden:          codes.PermissionDenied,
	http.StatusNotFound:           codes.NotFound,
	http.StatusConflict:           codes.AlreadyExists,
	http.StatusTooManyRequests:    codes.ResourceExhausted,
	http.StatusServiceUnavailable: codes.Unavailable,
}

// pairStatuses is pairs read from the code to the status.
var pairStatuses = func() map[codes.Code]int {
	m := make(map[codes.Code]int, len(pairs))
	for httpStatus, c := range pairs {
		m[c] = httpStatus
	}
	return m
}()

// Statuses without a code of their own travel as a related code (their
// ErrorInfo restores them); codes other servers answer with that no status
// of ours maps to are read as the nearest status.
var (
	borrowedCodes = map[int]codes.Code{
		http.StatusRequestEntityTooLarge: codes.InvalidArgument,
		http.StatusPaymentRequired:       codes.FailedPrecondition,
	}
	foreignCodes = map[codes.Code]int{
		codes.OK:                 http.StatusOK,
		codes.OutOfRange:         http.StatusBadRequest,
		codes.FailedPrecondition: http.StatusBadRequest,
		codes.Aborted:            http.StatusConflict,
		codes.DeadlineExceeded:   http.StatusServiceUnavailable,
		codes.Canceled:           499,
	}
)

func codeFor(httpStatus int) codes.Code {
	if c, ok := pairs[httpStatus]; ok {
		return c
	}
	if c, ok := borrowedCodes[httpStatus]; ok {
		return c
	}
	return codes.Internal
}

func reason(httpStatus int) string {
	switch httpStatus {
	case http.StatusPaymentRequired:
		return "INSUFFICIENT_CREDITS"
	case http.StatusRequestEntityTooLarge:
		return "TOO_LARGE"
	default:
		return "HTTP_" + strconv.Itoa(httpStatus)
	}
}

// HTTPStatus returns the HTTP status for a gRPC status: the one carried in
// its ErrorInfo when a service set it, otherwise the usual mapping of codes.
func HTTPStatus(st *status.Status) int {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == Domain {
			if n, err := strconv.Atoi(info.GetMetadata()["http_status"]); err == nil && n >= 400 && n < 600 {
				return n
			}
		}
	}
	if httpStatus, ok := pairStatuses[st.Code()]; ok {
		return httpStatus
	}
	if httpStatus, ok := foreignCodes[st.Code()]; ok {
		return httpStatus
	}
	return http.StatusInternalServerError
}
