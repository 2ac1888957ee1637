package gateway

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/server"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
)

// creditsServer answers GetCredits with what the test sets and remembers
// the request ids it was called with.
type creditsServer struct {
	authv1.UnimplementedAuthServiceServer
	mu      sync.Mutex
	balance int32
	err     error
	ids     []string
}

func (s *creditsServer) GetCredits(ctx context.Context, _ *authv1.GetCreditsRequest) (*authv1.GetCreditsResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	md, _ := metadata.FromIncomingContext(ctx)
	s.ids = append(s.ids, strings.Join(md.Get(server.RequestIDKey), ","))
	if s.err != nil {
		return nil, s.err
	}
	return &authv1.GetCreditsResponse{Balance: s.balance}, nil
}

func (s *creditsServer) set(balance int32, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.balance, s.err, s.ids = balance, err, nil
}

func (s *creditsServer) requestIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ids...)
}

// creditsPaths is the generic grpc-gateway route and the direct handler for
// GET /v1/credits, both over one connection to srv.
func creditsPaths(t *testing.T, srv *creditsServer) (generic, direct http.Handler) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	gs := grpc.NewServer()
	authv1.RegisterAuthServiceServer(gs, srv)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	cc, err := grpc.NewClient("passthrough:///bufconn", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })

	g := &Gateway{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	marshaler := newFastJSON(gatewayJSON())
	mux := newRuntimeMux(marshaler, g.serviceError)
	require.NoError(t, authv1.RegisterAuthServiceHandlerClient(context.Background(), mux, authv1.NewAuthServiceClient(cc)))
	return mux, &creditsHandler{client: authv1.NewAuthServiceClient(cc), marshaler: marshaler, errors: g.serviceError}
}

// answer is what a client sees of a response.
type answer struct {
	code   int
	header http.Header
	body   string
}

func serve(h http.Handler, r *http.Request, requestID string) answer {
	w := httptest.NewRecorder()
	ctx := logging.WithRequestID(context.WithValue(r.Context(), requestMethodKey{}, r.Method), requestID)
	h.ServeHTTP(w, r.WithContext(ctx))
	return answer{code: w.Code, header: w.Header(), body: w.Body.String()}
}

// The direct handler answers every outcome of GetCredits exactly as the
// generic route does (status, headers and body bytes), and sends the
// service the same request id.
func TestCreditsHandlerAnswersAsTheGenericRoute(t *testing.T) {
	t.Parallel()
	srv := &creditsServer{}
	generic, direct := creditsPaths(t, srv)
	for _, tc := range []struct {
		name    string
		balance int32
		err     error
		code    int
	}{
		{"balance", 1000, nil, http.StatusOK},
		{"zero", 0, nil, http.StatusOK},
		{"negative", -5, nil, http.StatusOK},
		{"largest", 2147483647, nil, http.StatusOK},
		{"organization gone", 0, apierr.NotFound("organization not found").GRPCStatus().Err(), http.StatusNotFound},
		{"identity refused", 0, status.Error(codes.Unauthenticated, "invalid identity token"), http.StatusUnauthorized},
		{"caller not allowed", 0, status.Error(codes.PermissionDenied, `identity "x" may not call it`), http.StatusForbidden},
		{"database down", 0, status.Error(codes.Unavailable, "Service temporarily unavailable; retry later"), http.StatusServiceUnavailable},
		{"deadline", 0, status.Error(codes.DeadlineExceeded, "deadline exceeded"), http.StatusServiceUnavailable},
		{"internal", 0, status.Error(codes.Internal, "Internal server error"), http.StatusInternalServerError},
		{"unknown", 0, status.Error(codes.Unknown, "driver said something"), http.StatusInternalServerError},
		{"invalid without domain", 0, status.Error(codes.InvalidArgument, `proto: (line 1:2): unknown field "x"`), http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.set(tc.balance, tc.err)
			want := serve(generic, httptest.NewRequest(http.MethodGet, "/v1/credits", nil), "rid-generic")
			got := serve(direct, httptest.NewRequest(http.MethodGet, "/v1/credits", nil), "rid-direct")
			require.Equal(t, tc.code, want.code, want.body)
			require.Equal(t, want, got)
			require.Equal(t, []string{"rid-generic", "rid-direct"}, srv.requestIDs())
		})
	}
}

// Requests of any other shape than a plain GET of the path go to the
// generic route, which gives their headers, bodies and encodings the
// behaviour the runtime defines for them.
func TestCreditsHandlerServesOnlyThePlainRequest(t *testing.T) {
	t.Parallel()
	h := &creditsHandler{}
	req := func(method, target string, body io.Reader, header ...string) *http.Request {
		r := httptest.NewRequest(method, target, body)
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		return r
	}
	for _, tc := range []struct {
		name string
		r    *http.Request
		want bool
	}{
		{"plain", req(http.MethodGet, "/v1/credits", nil), true},
		{"query string", req(http.MethodGet, "/v1/credits?x=1", nil), true},
		{"with the key and a request id", req(http.MethodGet, "/v1/credits", nil, "X-Api-Key", "k", "X-Request-Id", "c"), true},
		{"head", req(http.MethodHead, "/v1/credits", nil), false},
		{"post", req(http.MethodPost, "/v1/credits", nil), false},
		{"trailing slash", req(http.MethodGet, "/v1/credits/", nil), false},
		{"escaped path", req(http.MethodGet, "/v1/%63redits", nil), false},
		{"other route", req(http.MethodGet, "/v1/repos", nil), false},
		{"body", req(http.MethodGet, "/v1/credits", strings.NewReader("{}")), false},
		{"grpc timeout", req(http.MethodGet, "/v1/credits", nil, "Grpc-Timeout", "1S"), false},
		{"trailers accepted", req(http.MethodGet, "/v1/credits", nil, "TE", "trailers"), false},
		{"authorization", req(http.MethodGet, "/v1/credits", nil, "Authorization", "Bearer x"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, h.serves(tc.r))
		})
	}

	chunked := req(http.MethodGet, "/v1/credits", nil)
	chunked.ContentLength = -1
	require.False(t, h.serves(chunked), "a body of unknown length")
}

// withDirectRoutes hands the plain request to the direct handler and the
// others to the generic route: a request the direct handler does not serve
// gets the generic answer (here an invalid Grpc-Timeout, refused by the
// runtime before any call).
func TestWithDirectRoutes(t *testing.T) {
	t.Parallel()
	srv := &creditsServer{}
	generic, direct := creditsPaths(t, srv)
	srv.set(7, nil)
	routed := withDirectRoutes(generic, direct.(*creditsHandler))

	got := serve(routed, httptest.NewRequest(http.MethodGet, "/v1/credits", nil), "r1")
	require.Equal(t, http.StatusOK, got.code)
	require.Equal(t, `{"balance":7}`, got.body)

	bad := httptest.NewRequest(http.MethodGet, "/v1/credits", nil)
	bad.Header.Set("Grpc-Timeout", "soon")
	want := serve(generic, bad, "r2")
	got = serve(routed, bad, "r3")
	require.Equal(t, http.StatusBadRequest, got.code)
	require.Equal(t, want, got)

	trailers := httptest.NewRequest(http.MethodGet, "/v1/credits", nil)
	trailers.Header.Set("TE", "trailers")
	got = serve(routed, trailers, "r4")
	require.Equal(t, "chunked", got.header.Get("Transfer-Encoding"), "the generic route's answer to TE: trailers")
	require.Equal(t, []string{"r1", "r4"}, srv.requestIDs())
}
