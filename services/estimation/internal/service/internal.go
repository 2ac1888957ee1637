package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/validate"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	"github.com/vulnscan/vulnscan/services/estimation/internal/store"
)

func checkIDs(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := validate.UUID(pairs[i], pairs[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// estimation reads one of an organization's estimations for a call of the
// scan service.
func (s *Internal) estimation(ctx context.Context, orgID, id string) (store.Estimation, error) {
	if err := checkIDs("org_id", orgID, "id", id); err != nil {
		return store.Estimation{}, err
	}
	e, err := s.Store.GetEstimation(ctx, orgID, id)
	if errors.Is(err, store.ErrNotFound) {
		return e, apierr.NotFound("Cost estimation not found")
	}
	return e, err
}

func (s *Internal) GetEstimation(ctx context.Context, req *estimationv1.GetEstimationRequest) (*estimationv1.GetEstimationResponse, error) {
	e, err := s.estimation(ctx, req.GetOrgId(), req.GetId())
	if err != nil {
		return nil, err
	}
	return &estimationv1.GetEstimationResponse{Estimation: estimationProto(e), ClaimedByScanId: e.ClaimedByScanID}, nil
}

func (s *Internal) ClaimEstimation(ctx context.Context, req *estimationv1.ClaimEstimationRequest) (*estimationv1.ClaimEstimationResponse, error) {
	if err := checkIDs("org_id", req.GetOrgId(), "id", req.GetId(), "scan_id", req.GetScanId()); err != nil {
		return nil, err
	}
	fresh, err := s.Store.Claim(ctx, req.GetOrgId(), req.GetId(), req.GetScanId())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, apierr.NotFound("Cost estimation not found")
	case errors.Is(err, store.ErrClaimedByOther):
		return nil, apierr.Invalid("Cost estimation has already been claimed by a scan")
	case errors.Is(err, store.ErrNotReady):
		return nil, apierr.Invalid("Cost estimation is not ready")
	case errors.Is(err, store.ErrNoCredits):
		return nil, apierr.Invalid("Cost estimation has no credits")
	case err != nil:
		return nil, err
	}
	e, err := s.Store.GetEstimation(ctx, req.GetOrgId(), req.GetId())
	if err != nil {
		return nil, err
	}
	return &estimationv1.ClaimEstimationResponse{Estimation: estimationProto(e), NewlyClaimed: fresh}, nil
}

func (s *Internal) ReleaseEstimation(ctx context.Context, req *estimationv1.ReleaseEstimationRequest) (*estimationv1.ReleaseEstimationResponse, error) {
	if err := checkIDs("org_id", req.GetOrgId(), "id", req.GetId(), "scan_id", req.GetScanId()); err != nil {
		return nil, err
	}
	ok, err := s.Store.Release(ctx, req.GetOrgId(), req.GetId(), req.GetScanId())
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound("Cost estimation not found")
	}
	if err != nil {
		return nil, err
	}
	return &estimationv1.ReleaseEstimationResponse{Released: ok}, nil
}

func (s *Internal) GetRepoSources(ctx context.Context, req *estimationv1.GetRepoSourcesRequest) (*estimationv1.GetRepoSourcesResponse, error) {
	e, err := s.estimation(ctx, req.GetOrgId(), req.GetId())
	if err != nil {
		return nil, err
	}
	out := &estimationv1.GetRepoSourcesResponse{}
	for _, r := range e.Repos {
		src := &estimationv1.RepoSource{Source: r.Source, RepoUrl: r.RepoURL, Branch: r.Branch, CommitSha: r.CommitSHA, Status: string(r.Status),
			BaseBranch: r.BaseBranch, BaseCommit: r.BaseCommit, PullRequest: int32(r.PullRequest)}
		switch r.Source {
		case string(vocab.SourcePublic):
			src.CloneUrl = r.RepoURL
		case string(vocab.SourceConnected):
			c, err := s.Auth.GetConnectedRepo(ctx, &authv1.GetConnectedRepoRequest{OrgId: e.OrgID, Url: r.RepoURL})
			if err != nil {
				return nil, fmt.Errorf("look up connected repository: %w", err)
			}
			src.CloneUrl = c.GetCloneUrl()
			if src.CloneUrl == "" {
				src.CloneUrl = c.GetUrl()
			}
			if c.GetToken() != "" {
				src.Username, src.Password = "x-access-token", c.GetToken()
			}
		case string(vocab.SourceUpload):
			id := strings.TrimPrefix(r.RepoURL, "upload://")
			u, err := s.Store.GetUpload(ctx, nil, e.OrgID, id)
			if err != nil {
				return nil, err
			}
			src.UploadId, src.ArchiveContentType, src.ArchiveSha256 = u.ID, u.ContentType, u.SHA256
		}
		out.Sources = append(out.Sources, src)
	}
	return out, nil
}

// DownloadUpload streams an upload's archive in chunks of 1 MiB.
func (s *Internal) DownloadUpload(req *estimationv1.DownloadUploadRequest, stream grpc.ServerStreamingServer[estimationv1.DownloadUploadResponse]) error {
	ctx := stream.Context()
	if err := checkIDs("org_id", req.GetOrgId(), "upload_id", req.GetUploadId()); err != nil {
		return err
	}
	u, err := s.Store.GetUpload(ctx, nil, req.GetOrgId(), req.GetUploadId())
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound("Upload not found")
	}
	if err != nil {
		return err
	}
	r, err := s.Bucket.NewReader(ctx, u.BlobKey, nil)
	if err != nil {
		return fmt.Errorf("open upload blob: %w", err)
	}
	defer func() { _ = r.Close() }()
	buf := make([]byte, 1<<20)
	for {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			if serr := stream.Send(&estimationv1.DownloadUploadResponse{Data: buf[:n]}); serr != nil {
				return serr
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read upload blob: %w", err)
		}
	}
}
