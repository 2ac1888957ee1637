package gateway

import (
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/metadata"

	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
)

// creditsPath is the route the credits handler serves directly.
const creditsPath = "/v1/credits"

// creditsHandler answers GET /v1/credits, the most frequent call, without
// grpc-gateway's generic runtime (pattern matching, header-to-metadata
// annotation, server metadata capture, forward-response machinery): one
// GetCredits call with the request id, and the same marshaler and error
// handler as every route, so the answer is byte for byte the generic one.
//
// Only the plain shape of the request is served here: a GET of exactly the
// path, with no body and none of the headers the generic runtime turns into
// behaviour (Grpc-Timeout, TE, Authorization). Anything else goes to the
// generic handler, which stays registered for the route. The services are
// not sent the x-forwarded-host and x-forwarded-for metadata the runtime
// derives from the request, since none of them reads it.
type creditsHandler struct {
	client    authv1.AuthServiceClient
	marshaler runtime.Marshaler
	errors    runtime.ErrorHandlerFunc
}

// serves reports whether r is a request the direct handler answers.
func (h *creditsHandler) serves(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Path == creditsPath && r.URL.RawPath == "" && r.ContentLength == 0 &&
		r.Header.Get("Grpc-Timeout") == "" && r.Header.Get("Te") == "" && r.Header.Get("Authorization") == ""
}

func (h *creditsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := metadata.NewOutgoingContext(r.Context(), outgoingMD(r))
	resp, err := h.client.GetCredits(ctx, &authv1.GetCreditsRequest{})
	if err != nil {
		h.errors(ctx, nil, h.marshaler, w, r, err)
		return
	}
	buf, err := h.marshaler.Marshal(resp)
	if err != nil {
		h.errors(ctx, nil, h.marshaler, w, r, err)
		return
	}
	w.Header().Set("Content-Type", h.marshaler.ContentType(resp))
	_, _ = w.Write(buf)
}

// withDirectRoutes sends the requests a direct handler serves to it and
// every other request to the generic runtime.
func withDirectRoutes(generic http.Handler, credits *creditsHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if credits.serves(r) {
			credits.ServeHTTP(w, r)
			return
		}
		generic.ServeHTTP(w, r)
	})
}
