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

func codeFor(httpStatus int) codes.Code {
	switch httpStatus {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return codes.InvalidArgument
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusPaymentRequired:
		return codes.FailedPrecondition
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound:
		return codes.NotFound
	case http.StatusConflict:
		return codes.AlreadyExists
	case http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case http.StatusServiceUnavailable:
		return codes.Unavailable
	default:
		return codes.Internal
	}
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
	switch st.Code() {
	case codes.OK:
		return http.StatusOK
	case codes.InvalidArgument, codes.OutOfRange, codes.FailedPrecondition:
		return http.StatusBadRequest
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.NotFound:
		return http.StatusNotFound
	case codes.AlreadyExists, codes.Aborted:
		return http.StatusConflict
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.Unavailable, codes.DeadlineExceeded:
		return http.StatusServiceUnavailable
	case codes.Canceled:
		return 499
	default:
		return http.StatusInternalServerError
	}
}
