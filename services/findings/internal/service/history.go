package service

import (
	"context"
	"strconv"

	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/validate"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// keyPrefixLen is how much of an API key's id the history shows: enough to
// tell the organization's keys apart in GET /v1/api-keys.
const keyPrefixLen = 8

// GetFindingHistory returns a page of the finding's audit trail, oldest
// first, with page and limit as the finding lists (default 15, max 100).
// A missing, unapproved or foreign finding is 404 like GET /findings/{id}.
func (p *Public) GetFindingHistory(ctx context.Context, req *findingsv1.GetFindingHistoryRequest) (*findingsv1.GetFindingHistoryResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.UUID("id", req.GetId()); err != nil {
		return nil, err
	}
	page, limit, err := vocab.Page(req.Page, req.Limit, vocab.DefaultPageLimit)
	if err != nil {
		return nil, err
	}
	entries, total, err := p.Store.History(ctx, caller.OrgID, req.GetId(), int(limit), int(page-1)*int(limit))
	if err != nil {
		return nil, translate(err)
	}
	out := &findingsv1.GetFindingHistoryResponse{Data: make([]*findingsv1.HistoryEntry, 0, len(entries)), Total: int32(total), Page: page, Limit: limit}
	for _, e := range entries {
		h := &findingsv1.HistoryEntry{Id: strconv.FormatInt(e.ID, 10), Field: e.Field, From: str(e.From), To: str(e.To), Reason: str(e.Reason),
			Source: e.Source, BatchId: str(e.BatchID), CreatedAt: timestamppb.New(e.CreatedAt), Actor: &findingsv1.HistoryActor{}}
		a := h.Actor
		switch {
		case e.Source == "agent":
			a.Type = "agent"
		case e.Source == "github" || e.Source == "slack":
			a.Type, a.Integration = "integration", wrapperspb.String(e.Source)
		case e.ActorKeyID != nil:
			a.Type = "api_key"
			k := *e.ActorKeyID
			a.ApiKeyIdPrefix = wrapperspb.String(k[:min(len(k), keyPrefixLen)])
		default:
			a.Type = "user"
		}
		if a.Type == "agent" {
			a.Username = wrapperspb.String(store.AgentUsername)
		} else if e.ActorUserID != nil {
			a.UserId = wrapperspb.String(*e.ActorUserID)
			if name, err := p.username(ctx, *e.ActorUserID); err == nil {
				a.Username = wrapperspb.String(name)
			} else {
				return nil, err
			}
		}
		out.Data = append(out.Data, h)
	}
	return out, nil
}
