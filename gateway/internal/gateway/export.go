package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/metadata"

	"github.com/vulnscan/vulnscan/pkg/logging"
	"github.com/vulnscan/vulnscan/pkg/server"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

const exportPath = "/v1/scans/{id}/findings/export"

// registerExport serves GET /v1/scans/{id}/findings/export itself rather
// than through the generated streaming handler, which would drop the
// Content-Type and Content-Disposition the findings service chooses, add a
// newline after every chunk and render errors outside the spec's body. The
// export is copied chunk by chunk as it is read from the database, never
// held in memory. Registered after the generated handlers, it takes
// precedence over theirs for this route.
func (g *Gateway) registerExport(mux *runtime.ServeMux) error {
	client := findingsv1.NewFindingsServiceClient(g.conns["findings"])
	return mux.HandlePath(http.MethodGet, exportPath, func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		q := r.URL.Query()
		req := &findingsv1.ExportScanFindingsRequest{Id: params["id"], Format: q.Get("format"), Severity: q.Get("severity"), State: q.Get("state"),
			FoundSince: q.Get("found_since"), FoundUntil: q.Get("found_until"), RepoUrl: q.Get("repo_url"), Category: q.Get("category"),
			Tag: q.Get("tag"), AffectedFile: q.Get("affected_file"), Q: q.Get("q")}
		ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(r.Context(), outgoingMD(r)))
		defer cancel()
		stream, err := client.ExportScanFindings(ctx, req)
		if err != nil {
			g.serviceError(ctx, mux, nil, w, r, err)
			return
		}
		first, err := stream.Recv()
		if err != nil && !errors.Is(err, io.EOF) {
			g.serviceError(ctx, mux, nil, w, r, err)
			return
		}
		hdr, _ := stream.Header()
		if v := hdr.Get("content-disposition"); len(v) == 1 {
			w.Header().Set("Content-Disposition", v[0])
		}
		if first != nil && first.GetContentType() != "" {
			w.Header().Set("Content-Type", first.GetContentType())
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		flusher, _ := w.(http.Flusher)
		for chunk := first; chunk != nil; {
			if _, err := w.Write(chunk.GetData()); err != nil {
				return // client went away
			}
			if flusher != nil {
				flusher.Flush()
			}
			chunk, err = stream.Recv()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				// Headers are sent: all that is left is to cut the response
				// short, so the client sees an incomplete download, never a
				// silently truncated one.
				g.log.ErrorContext(ctx, "export failed mid-stream", "error", err.Error())
				panic(http.ErrAbortHandler)
			}
		}
	})
}

// outgoingMD is the metadata every call to a service carries: the request
// id. The authenticated caller travels as a signed token that signIdentity
// adds to each call.
func outgoingMD(r *http.Request) metadata.MD {
	return metadata.Pairs(server.RequestIDKey, logging.RequestID(r.Context()))
}
