package service

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/validate"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"

	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// Limits of the finding lists and triage texts.
const (
	DefaultLimit = 15
	MaxLimit     = 100
	MaxReason    = 2000
	MaxComment   = 4000
)

// listQuery is what both lists accept.
type listQuery struct {
	page, limit               *int32
	severity, state           string
	sortBy, sortOrder, scanID string
	search                    searcher // nil: no search filters
}

// filter validates q into a store filter for org; page and limit are returned for the echo.
func filter(orgID string, q listQuery) (store.Filter, int32, int32, error) {
	page, limit := int32(1), int32(DefaultLimit)
	if q.page != nil {
		if page = *q.page; page < 1 {
			return store.Filter{}, 0, 0, apierr.Invalid("page must be at least 1")
		}
	}
	if q.limit != nil {
		if limit = *q.limit; limit < 1 || limit > MaxLimit {
			return store.Filter{}, 0, 0, apierr.Invalid("limit must be between 1 and %d", MaxLimit)
		}
	}
	f := store.Filter{OrgID: orgID, Severity: q.severity, State: q.state, SortBy: "found_at", Desc: true,
		Limit: int(limit), Offset: int(int64(page-1) * int64(limit))}
	if f.Offset < 0 || int64(page-1)*int64(limit) > 1<<31 {
		return f, 0, 0, apierr.Invalid("page is too large")
	}
	if q.severity != "" {
		if err := validate.OneOf("severity", q.severity, store.Severities...); err != nil {
			return f, 0, 0, err
		}
	}
	if q.state != "" {
		if err := validate.OneOf("state", q.state, store.States...); err != nil {
			return f, 0, 0, err
		}
	}
	if q.sortBy != "" {
		if err := validate.OneOf("sort_by", q.sortBy, "found_at", "updated_at", "severity"); err != nil {
			return f, 0, 0, err
		}
		f.SortBy = q.sortBy
	}
	switch strings.ToUpper(q.sortOrder) {
	case "", "DESC":
	case "ASC":
		f.Desc = false
	default:
		return f, 0, 0, apierr.Invalid("sort_order must be one of: ASC, DESC")
	}
	if q.search != nil {
		if err := search(q.search, &f, ""); err != nil {
			return f, 0, 0, err
		}
	}
	return f, page, limit, nil
}

func (p *Public) list(ctx context.Context, q listQuery) (*findingsv1.ListFindingsResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	f, page, limit, err := filter(caller.OrgID, q)
	if err != nil {
		return nil, err
	}
	if q.scanID != "" {
		if err := p.checkScan(ctx, caller.OrgID, q.scanID); err != nil {
			return nil, err
		}
		f.ScanID = q.scanID
	}
	list, total, err := p.Store.List(ctx, f)
	if err != nil {
		return nil, err
	}
	out := &findingsv1.ListFindingsResponse{Data: make([]*findingsv1.Finding, 0, len(list)), Total: int32(total), Page: page, Limit: limit}
	for _, fd := range list {
		out.Data = append(out.Data, findingProto(fd))
	}
	return out, nil
}

// checkScan answers 404 unless the scan is registered to the organization.
func (p *Public) checkScan(ctx context.Context, orgID, scanID string) error {
	if _, err := p.Store.OrgScan(ctx, orgID, scanID); err != nil {
		return translate(err)
	}
	return nil
}

func (p *Public) ListFindings(ctx context.Context, req *findingsv1.ListFindingsRequest) (*findingsv1.ListFindingsResponse, error) {
	if req.GetScanId() != "" {
		if err := validate.UUID("scan_id", req.GetScanId()); err != nil {
			return nil, err
		}
	}
	return p.list(ctx, listQuery{page: req.Page, limit: req.Limit, severity: req.GetSeverity(), state: req.GetState(),
		sortBy: req.GetSortBy(), sortOrder: req.GetSortOrder(), scanID: req.GetScanId(), search: req})
}

func (p *Public) ListScanFindings(ctx context.Context, req *findingsv1.ListScanFindingsRequest) (*findingsv1.ListScanFindingsResponse, error) {
	if err := validate.UUID("id", req.GetId()); err != nil {
		return nil, err
	}
	r, err := p.list(ctx, listQuery{page: req.Page, limit: req.Limit, severity: req.GetSeverity(), state: req.GetState(),
		sortBy: req.GetSortBy(), sortOrder: req.GetSortOrder(), scanID: req.GetId(), search: req})
	if err != nil {
		return nil, err
	}
	return &findingsv1.ListScanFindingsResponse{Data: r.Data, Total: r.Total, Page: r.Page, Limit: r.Limit}, nil
}

func (p *Public) GetFinding(ctx context.Context, req *findingsv1.GetFindingRequest) (*findingsv1.GetFindingResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.UUID("id", req.GetId()); err != nil {
		return nil, err
	}
	d, err := p.Store.Get(ctx, caller.OrgID, req.GetId())
	if err != nil {
		return nil, translate(err)
	}
	return detailProto(d), nil
}

// update validates a PATCH body into a store update.
func update(req *findingsv1.UpdateFindingRequest) (store.Update, error) {
	var u store.Update
	if req.State == nil && req.Severity == nil && req.DuplicateOf == nil {
		return u, apierr.Invalid("At least one of state, severity, duplicate_of must be given")
	}
	if req.State != nil {
		if err := validate.OneOf("state", req.GetState(), store.States...); err != nil {
			return u, err
		}
		u.State = req.State
	}
	if req.Severity != nil {
		if err := validate.OneOf("severity", req.GetSeverity(), store.Severities...); err != nil {
			return u, err
		}
		u.Severity = req.Severity
	}
	if d := req.DuplicateOf; d != nil {
		u.DuplicateSet = true
		switch k := d.GetKind().(type) {
		case *structpb.Value_NullValue:
		case *structpb.Value_StringValue:
			if err := validate.UUID("duplicate_of", k.StringValue); err != nil {
				return u, apierr.Invalid("duplicate_of must be a UUID or null")
			}
			v := strings.ToLower(k.StringValue)
			u.DuplicateOf = &v
			if u.State != nil && *u.State != string(vocab.Resolved) {
				return u, apierr.Invalid("state must be resolved (or omitted) when duplicate_of is set")
			}
		default:
			return u, apierr.Invalid("duplicate_of must be a UUID or null")
		}
	}
	for _, r := range []struct {
		name string
		v    *string
	}{{"state_reason", req.StateReason}, {"severity_reason", req.SeverityReason}, {"reason", req.Reason}} {
		if r.v != nil {
			if err := validate.MaxLen(r.name, *r.v, MaxReason); err != nil {
				return u, err
			}
		}
	}
	if req.ExpiresAt != nil {
		if u.State == nil || *u.State != string(vocab.AcceptedRisk) {
			return u, apierr.Invalid("expires_at requires state accepted_risk")
		}
		at, err := time.Parse(time.RFC3339Nano, req.GetExpiresAt())
		if err != nil {
			return u, apierr.Invalid("expires_at must be an RFC 3339 time, for example 2030-01-31T00:00:00Z")
		}
		if !at.After(time.Now()) {
			return u, apierr.Invalid("expires_at must be in the future")
		}
		u.ExpiresAt = &at
	}
	u.StateReason, u.SeverityReason = req.GetReason(), req.GetReason()
	if req.StateReason != nil {
		u.StateReason = req.GetStateReason()
	}
	if req.SeverityReason != nil {
		u.SeverityReason = req.GetSeverityReason()
	}
	return u, nil
}

func (p *Public) UpdateFinding(ctx context.Context, req *findingsv1.UpdateFindingRequest) (*findingsv1.UpdateFindingResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.UUID("id", req.GetId()); err != nil {
		return nil, err
	}
	u, err := update(req)
	if err != nil {
		return nil, err
	}
	actor, err := p.actor(ctx, caller)
	if err != nil {
		return nil, err
	}
	r, err := p.Store.Apply(ctx, caller.OrgID, req.GetId(), u, actor)
	if err != nil {
		return nil, translate(err)
	}
	return &findingsv1.UpdateFindingResponse{Id: r.ID, State: r.State, Severity: r.Severity, DuplicateOf: str(r.DuplicateOf)}, nil
}

func (p *Public) actor(ctx context.Context, caller principal.Principal) (store.Actor, error) {
	name, err := p.username(ctx, caller.UserID)
	if err != nil {
		return store.Actor{}, err
	}
	return store.Actor{UserID: caller.UserID, Username: name, KeyID: caller.KeyID, Source: "api"}, nil
}

func (p *Public) AddComment(ctx context.Context, req *findingsv1.AddCommentRequest) (*findingsv1.AddCommentResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	if err := validate.UUID("id", req.GetId()); err != nil {
		return nil, err
	}
	c := req.GetComment()
	if strings.TrimSpace(c) == "" {
		return nil, apierr.Invalid("comment must be 1 to %d characters", MaxComment)
	}
	if utf8.RuneCountInString(c) > MaxComment {
		return nil, apierr.Invalid("comment must be at most %d characters", MaxComment)
	}
	actor, err := p.actor(ctx, caller)
	if err != nil {
		return nil, err
	}
	id, err := p.Store.AddComment(ctx, caller.OrgID, req.GetId(), c, actor)
	if err != nil {
		return nil, translate(err)
	}
	return &findingsv1.AddCommentResponse{CommentId: id}, nil
}
