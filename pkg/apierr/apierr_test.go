package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
)

func TestConstructorsCarryStatusAndCode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    *Error
		status int
		code   codes.Code
		reason string
	}{
		{"Invalid", Invalid("name %s", "x"), http.StatusBadRequest, codes.InvalidArgument, "HTTP_400"},
		{"TooLarge", TooLarge("body over %d", 5), http.StatusRequestEntityTooLarge, codes.InvalidArgument, "TOO_LARGE"},
		{"Unauthenticated", Unauthenticated("no key"), http.StatusUnauthorized, codes.Unauthenticated, "HTTP_401"},
		{"PaymentRequired", PaymentRequired("no credits"), http.StatusPaymentRequired, codes.FailedPrecondition, "INSUFFICIENT_CREDITS"},
		{"Forbidden", Forbidden("scope %q", "write"), http.StatusForbidden, codes.PermissionDenied, "HTTP_403"},
		{"NotFound", NotFound("scan"), http.StatusNotFound, codes.NotFound, "HTTP_404"},
		{"Conflict", Conflict("dup"), http.StatusConflict, codes.AlreadyExists, "HTTP_409"},
		{"too many requests", New(http.StatusTooManyRequests, "slow down"), http.StatusTooManyRequests, codes.ResourceExhausted, "HTTP_429"},
		{"unavailable", New(http.StatusServiceUnavailable, "later"), http.StatusServiceUnavailable, codes.Unavailable, "HTTP_503"},
		{"Internal", Internal, http.StatusInternalServerError, codes.Internal, "HTTP_500"},
		{"a status without a code of its own", New(http.StatusTeapot, "tea"), http.StatusTeapot, codes.Internal, "HTTP_418"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check(t, tc.err.Status == tc.status, "status %d, want %d", tc.err.Status, tc.status)
			st := tc.err.GRPCStatus()
			check(t, st.Code() == tc.code, "code %v, want %v", st.Code(), tc.code)
			check(t, st.Message() == tc.err.Message, "gRPC message %q, want %q", st.Message(), tc.err.Message)
			info := errorInfo(t, st)
			check(t, info.GetReason() == tc.reason, "reason %q, want %q", info.GetReason(), tc.reason)
			check(t, info.GetDomain() == Domain, "domain %q", info.GetDomain())
			// The HTTP status survives the hop, whatever the code.
			check(t, HTTPStatus(st) == tc.status, "HTTPStatus %d, want %d", HTTPStatus(st), tc.status)
			// grpc-go finds the status through errors.As, so wrapping keeps it.
			back, ok := status.FromError(fmt.Errorf("handler: %w", tc.err))
			check(t, ok && back.Code() == tc.code, "status.FromError of a wrapped error: %v %v", ok, back.Code())
		})
	}
}

func TestMessagesAreFormatted(t *testing.T) {
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{Invalid("limit must be between 1 and %d", 100), "limit must be between 1 and 100"},
		{NotFound("no %s", "scan"), "no scan"},
		{Conflict("plain text with 100%% literal"), "plain text with 100% literal"},
		{New(http.StatusBadRequest, "%s: %q", "field", "v"), `field: "v"`},
	} {
		if tc.err.Message != tc.want || tc.err.Error() != tc.want {
			t.Errorf("message %q / Error() %q, want %q", tc.err.Message, tc.err.Error(), tc.want)
		}
	}
}

func TestWrapKeepsTheCauseOutOfTheMessage(t *testing.T) {
	cause := errors.New("pq: connection reset")
	w := Internal.Wrap(cause)
	check(t, w != Internal, "Wrap returns a copy")
	check(t, Internal.Unwrap() == nil, "the shared Internal error is left untouched")
	check(t, errors.Is(w, cause), "the cause is reachable with errors.Is")
	check(t, w.Error() == "Internal server error: pq: connection reset", "Error() %q", w.Error())
	check(t, w.Message == "Internal server error", "message %q", w.Message)
	check(t, w.GRPCStatus().Message() == "Internal server error", "the gRPC message shows no cause: %q", w.GRPCStatus().Message())
	check(t, w.Status == http.StatusInternalServerError, "status %d", w.Status)
}

func TestIs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		want   bool
	}{
		{"same status", NotFound("x"), http.StatusNotFound, true},
		{"other status", NotFound("x"), http.StatusConflict, false},
		{"wrapped", fmt.Errorf("ctx: %w", PaymentRequired("x")), http.StatusPaymentRequired, true},
		{"wrapping a cause", Internal.Wrap(errors.New("boom")), http.StatusInternalServerError, true},
		{"a plain error", errors.New("x"), http.StatusInternalServerError, false},
		{"nil", nil, http.StatusNotFound, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check(t, Is(tc.err, tc.status) == tc.want, "Is = %v, want %v", !tc.want, tc.want)
		})
	}
}

func TestHTTPStatusOfForeignStatuses(t *testing.T) {
	withInfo := func(code codes.Code, domain, httpStatus string) *status.Status {
		st, err := status.New(code, "m").WithDetails(&errdetails.ErrorInfo{Domain: domain, Metadata: map[string]string{"http_status": httpStatus}})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	for _, tc := range []struct {
		name string
		st   *status.Status
		want int
	}{
		{"ok", status.New(codes.OK, ""), http.StatusOK},
		{"invalid argument", status.New(codes.InvalidArgument, ""), http.StatusBadRequest},
		{"out of range", status.New(codes.OutOfRange, ""), http.StatusBadRequest},
		{"failed precondition without details", status.New(codes.FailedPrecondition, ""), http.StatusBadRequest},
		{"unauthenticated", status.New(codes.Unauthenticated, ""), http.StatusUnauthorized},
		{"permission denied", status.New(codes.PermissionDenied, ""), http.StatusForbidden},
		{"not found", status.New(codes.NotFound, ""), http.StatusNotFound},
		{"already exists", status.New(codes.AlreadyExists, ""), http.StatusConflict},
		{"aborted", status.New(codes.Aborted, ""), http.StatusConflict},
		{"resource exhausted", status.New(codes.ResourceExhausted, ""), http.StatusTooManyRequests},
		{"unavailable", status.New(codes.Unavailable, ""), http.StatusServiceUnavailable},
		{"deadline exceeded", status.New(codes.DeadlineExceeded, ""), http.StatusServiceUnavailable},
		{"canceled", status.New(codes.Canceled, ""), 499},
		{"unknown", status.New(codes.Unknown, ""), http.StatusInternalServerError},
		{"data loss", status.New(codes.DataLoss, ""), http.StatusInternalServerError},
		{"our detail wins over the code", withInfo(codes.FailedPrecondition, Domain, "402"), http.StatusPaymentRequired},
		{"another domain's detail is ignored", withInfo(codes.NotFound, "example.com", "402"), http.StatusNotFound},
		{"a detail that is not a number", withInfo(codes.NotFound, Domain, "four"), http.StatusNotFound},
		{"a detail below the error range", withInfo(codes.NotFound, Domain, "200"), http.StatusNotFound},
		{"a detail above the error range", withInfo(codes.NotFound, Domain, "600"), http.StatusNotFound},
		{"a detail of another type", func() *status.Status {
			st, err := status.New(codes.Aborted, "m").WithDetails(protoadapt.MessageV1Of(&errdetails.RetryInfo{}))
			if err != nil {
				t.Fatal(err)
			}
			return st
		}(), http.StatusConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := HTTPStatus(tc.st)
			check(t, got == tc.want, "HTTPStatus = %d, want %d", got, tc.want)
		})
	}
}

func errorInfo(t *testing.T, st *status.Status) *errdetails.ErrorInfo {
	t.Helper()
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	t.Fatalf("status %v carries no ErrorInfo", st)
	return nil
}

func check(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, args...)
	}
}

// TestPairsAreOneToOne: HTTPStatus reads pairs backwards, which is only
// sound while no two statuses share a code.
func TestPairsAreOneToOne(t *testing.T) {
	check(t, len(pairStatuses) == len(pairs), "%d codes for %d statuses", len(pairStatuses), len(pairs))
	for httpStatus, c := range pairs {
		check(t, pairStatuses[c] == httpStatus, "%v reads back as %d, not %d", c, pairStatuses[c], httpStatus)
		_, borrowed := borrowedCodes[httpStatus]
		_, foreign := foreignCodes[c]
		check(t, !borrowed && !foreign, "%d/%v is also listed as borrowed or foreign", httpStatus, c)
	}
}
