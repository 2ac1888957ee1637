package gateway

import (
	"errors"
	"io"
	"log/slog"
	"net/http"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/vulnscan/vulnscan/gateway/internal/httperr"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// inboundPath is an integration's public event endpoint: provider is github
// (the git host's webhooks) or slack (the chat's slash commands and
// interactive actions). It takes no API key: the findings service verifies
// the request's signature with the integration's inbound secret.
const inboundPath = "/v1/integrations/{integration_id}/events/{provider}"

// inboundPattern is inboundPath for the root mux.
const inboundPattern = "POST /v1/integrations/{integration_id}/events/{provider}"

// MaxInboundBody bounds an inbound event's body: the git host's comment and
// reaction payloads and the chat's forms are a few KiB.
const MaxInboundBody = 1 << 20

// inboundHandler serves inboundPath outside the API key middleware, with
// its own body cap and a rate limit per integration (shared through Redis,
// in process when Redis does not answer) and per client address, so that
// neither a noisy integration nor a client guessing ids reaches the
// findings service at will.
func (g *Gateway) inboundHandler(perIntegration *leases, perIntegrationLocal, perAddr *buckets, log *slog.Logger, limited prometheus.Counter) http.Handler {
	client := findingsv1.NewFindingsInboundServiceClient(g.conns["findings"])
	shared := &sharedLimit{shared: perIntegration, local: perIntegrationLocal, log: log, warning: "rate limiter unavailable; limiting inbound events in process"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, provider := r.PathValue("integration_id"), r.PathValue("provider")
		if provider != "github" && provider != "slack" {
			httperr.Write(w, http.StatusNotFound, "Not found: the provider must be github or slack")
			return
		}
		if uuid.Validate(id) != nil || len(id) != 36 {
			httperr.Write(w, http.StatusBadRequest, "integration_id must be a UUID")
			return
		}
		if ok, _, wait := perAddr.take(clientAddr(r)); !ok {
			tooManyRequests(w, wait, limited)
			return
		}
		if allowed, _, wait, _ := shared.take(r, "vulnscan:ratelimit:tokens:inbound:"+id, id); !allowed {
			tooManyRequests(w, wait, limited)
			return
		}
		if r.ContentLength > MaxInboundBody {
			httperr.Write(w, http.StatusRequestEntityTooLarge, "Request body too large")
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxInboundBody))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				httperr.Write(w, http.StatusRequestEntityTooLarge, "Request body too large")
				return
			}
			httperr.Write(w, http.StatusBadRequest, "Cannot read the request body")
			return
		}
		req := &findingsv1.HandleEventRequest{IntegrationId: id, Provider: provider, ContentType: r.Header.Get("Content-Type"), Body: body}
		if provider == "github" {
			req.Signature, req.Event, req.Delivery = r.Header.Get("X-Hub-Signature-256"), r.Header.Get("X-GitHub-Event"), r.Header.Get("X-GitHub-Delivery")
		} else {
			req.Signature, req.Timestamp = r.Header.Get("X-Slack-Signature"), r.Header.Get("X-Slack-Request-Timestamp")
		}
		cctx := metadata.NewOutgoingContext(r.Context(), outgoingMD(r))
		resp, err := client.HandleEvent(cctx, req)
		if err != nil {
			g.serviceError(cctx, nil, nil, w, r, err)
			return
		}
		out, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(resp)
		if err != nil {
			httperr.Write(w, http.StatusInternalServerError, "Internal server error")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(out)
	})
}
