package gateway

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/vulnscan/vulnscan/gateway/internal/httperr"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
)

// MaxUploadBody bounds POST /v1/uploads bodies at 100 MiB, the upload size
// the README documents; a larger body answers 413.
const MaxUploadBody = 100 << 20

const uploadPath = "/v1/uploads"

// uploadRetryAfter is the Retry-After (seconds) of an upload refused
// because a concurrency cap is full.
const uploadRetryAfter = 5

// msgTooSlow answers a request whose body fell under the minimum rate.
const msgTooSlow = "Request body arrived too slowly"

// uploadChunk is the size of the messages an upload is streamed in; gRPC
// messages between services are bounded by server.MaxMessageSize.
const uploadChunk = 1 << 20

// uploadTypes maps accepted Content-Types to the archive formats.
var uploadTypes = map[string]string{
	"application/zip":              "application/zip",
	"application/x-zip-compressed": "application/zip",
	"application/gzip":             "application/gzip",
	"application/x-gzip":           "application/gzip",
	"application/x-tar+gzip":       "application/gzip",
}

// registerUploads serves POST /v1/uploads: the raw archive body is streamed
// to the estimation service's CreateUpload. It sits behind the same
// authentication, scope (write) and rate-limit middleware as the rest of /v1.
func (g *Gateway) registerUploads(mux *runtime.ServeMux) error {
	client := estimationv1.NewUploadServiceClient(g.conns["estimation"])
	observed := g.observeUpload(newUploadMetrics(g.Registry), func(w http.ResponseWriter, r *http.Request) { g.upload(client, w, r) })
	return mux.HandlePath(http.MethodPost, uploadPath, func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		observed(w, r)
	})
}

func (g *Gateway) upload(client estimationv1.UploadServiceClient, w http.ResponseWriter, r *http.Request) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	ct, ok := uploadTypes[mt]
	if !ok {
		httperr.Write(w, http.StatusBadRequest, "Content-Type must be application/zip or application/gzip")
		return
	}
	p, _ := principalFrom(r.Context())
	if !g.uploads.acquire(p.KeyID, p.OrgID) {
		g.uploadsFull.Inc()
		w.Header().Set("Retry-After", strconv.Itoa(uploadRetryAfter))
		httperr.Write(w, http.StatusTooManyRequests, "Too many uploads in progress; retry after the time in Retry-After")
		return
	}
	defer g.uploads.release(p.KeyID, p.OrgID)
	ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(r.Context(), outgoingMD(r)))
	// Canceling on every early return ends the stream, so the estimation
	// service drops a partial upload.
	defer cancel()
	stream, err := client.CreateUpload(ctx)
	if err != nil {
		g.serviceError(ctx, nil, nil, w, r, err)
		return
	}
	if err := stream.Send(&estimationv1.CreateUploadRequest{ContentType: ct}); err != nil && !errors.Is(err, io.EOF) {
		g.serviceError(ctx, nil, nil, w, r, err)
		return
	}
	buf := make([]byte, uploadChunk)
	for {
		n, rerr := io.ReadFull(r.Body, buf)
		if n > 0 {
			if err := stream.Send(&estimationv1.CreateUploadRequest{Data: buf[:n]}); err != nil {
				// io.EOF: the service ended the stream early; its answer
				// comes from CloseAndRecv below.
				break
			}
		}
		if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
			break
		}
		if rerr != nil {
			switch {
			case bodyLimitHit(r.Context()):
				httperr.Write(w, http.StatusRequestEntityTooLarge, "Request body too large")
			case bodyTooSlow(r.Context()):
				httperr.Write(w, http.StatusRequestTimeout, msgTooSlow)
			default:
				httperr.Write(w, http.StatusBadRequest, "Cannot read the request body")
			}
			return
		}
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		g.serviceError(ctx, nil, nil, w, r, err)
		return
	}
	body, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(resp.GetUpload())
	if err != nil {
		httperr.Write(w, http.StatusInternalServerError, "Internal server error")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(body)
}
