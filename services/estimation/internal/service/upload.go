package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/uuid"
	"gocloud.dev/blob"
	"google.golang.org/grpc"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/archive"
	"github.com/vulnscan/vulnscan/pkg/principal"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	"github.com/vulnscan/vulnscan/services/estimation/internal/store"
)

// CreateUpload receives an archive, checks it and stores it.
func (s *Uploads) CreateUpload(stream grpc.ClientStreamingServer[estimationv1.CreateUploadRequest, estimationv1.CreateUploadResponse]) error {
	ctx := stream.Context()
	resp, err := s.createUpload(ctx, stream)
	if err != nil {
		return err
	}
	return stream.SendAndClose(resp)
}

func (s *Uploads) createUpload(ctx context.Context, stream grpc.ClientStreamingServer[estimationv1.CreateUploadRequest, estimationv1.CreateUploadResponse]) (*estimationv1.CreateUploadResponse, error) {
	p, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(s.TempDir, "upload-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close(); _ = os.Remove(f.Name()) }()
	h := sha256.New()
	var size int64
	contentType := ""
	first := true
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if first {
			// Refuse at once when the organization is already at its quota
			// (checked again, under a lock, when the upload is recorded).
			if err := s.Store.CheckUploadQuota(ctx, p.OrgID, 0, s.UploadQuota); err != nil {
				if errors.Is(err, store.ErrQuota) {
					return nil, quotaError(err)
				}
				return nil, err
			}
			contentType, first = msg.GetContentType(), false
			if contentType != archive.TypeZip && contentType != archive.TypeTarGz {
				return nil, apierr.Invalid("Content-Type must be application/zip or application/gzip")
			}
		}
		size += int64(len(msg.GetData()))
		if size > MaxUploadBytes {
			return nil, apierr.TooLarge("Upload larger than %d MiB", MaxUploadBytes>>20)
		}
		if _, err := f.Write(msg.GetData()); err != nil {
			return nil, err
		}
		h.Write(msg.GetData())
	}
	if first {
		return nil, apierr.Invalid("Content-Type must be application/zip or application/gzip")
	}
	if size == 0 {
		return nil, apierr.Invalid("Upload body is empty")
	}
	sum, err := archive.Extract(f, size, contentType, "", s.ArchiveLimits)
	if errors.Is(err, archive.ErrUnsafe) {
		return nil, apierr.Invalid("%s", err.Error())
	}
	if err != nil {
		return nil, err
	}
	u := store.Upload{ID: uuid.NewString(), OrgID: p.OrgID, UserID: p.UserID, ContentType: contentType, SizeBytes: size,
		SHA256: hex.EncodeToString(h.Sum(nil)), ContentHash: sum.ContentHash}
	u.BlobKey = "uploads/" + p.OrgID + "/" + u.ID
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	w, err := s.Bucket.NewWriter(ctx, u.BlobKey, &blob.WriterOptions{ContentType: contentType})
	if err != nil {
		return nil, fmt.Errorf("open blob writer: %w", err)
	}
	if _, err := io.Copy(w, f); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("write blob: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("write blob: %w", err)
	}
	u, err = s.Store.CreateUpload(ctx, u, s.UploadQuota)
	if err != nil {
		if derr := s.Bucket.Delete(context.WithoutCancel(ctx), u.BlobKey); derr != nil {
			s.Log.ErrorContext(ctx, "blob of a refused upload could not be deleted", "upload_id", u.ID, "error", derr.Error())
		}
		if errors.Is(err, store.ErrQuota) {
			return nil, quotaError(err)
		}
		return nil, err
	}
	return &estimationv1.CreateUploadResponse{Upload: &estimationv1.Upload{
		Id: u.ID, RepoUrl: "upload://" + u.ID, SizeBytes: int32(u.SizeBytes), Sha256: u.SHA256, CreatedAt: ts(u.CreatedAt),
	}}, nil
}

// quotaError is the caller's error for a quota: 409, as for the active-key
// limit, since the conflict is with what the organization already keeps.
func quotaError(err error) error {
	return apierr.Conflict("Upload refused: %s", strings.TrimPrefix(err.Error(), store.ErrQuota.Error()+": "))
}
