package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/validate"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// BulkUpdateFindings applies the PATCH fields to the findings named by ids
// (1 to 1,000) or matched by filter (the list filters; more than 1,000
// matches is a 400), all or nothing: an id that is unknown, foreign or in
// verification is a 404 naming it and nothing changes. Each finding gets
// the audit records, thread entry and rules of a PATCH; the audit records
// share the response's batch_id; integrations get one event per scan for
// the batch instead of one per finding.
func (p *Public) BulkUpdateFindings(ctx context.Context, req *findingsv1.BulkUpdateFindingsRequest) (*findingsv1.BulkUpdateFindingsResponse, error) {
	caller, err := principal.From(ctx)
	if err != nil {
		return nil, err
	}
	ids, filt, err := bulkTargets(req)
	if err != nil {
		return nil, err
	}
	u, err := update(&findingsv1.UpdateFindingRequest{State: req.State, Severity: req.Severity, DuplicateOf: req.DuplicateOf,
		StateReason: req.StateReason, SeverityReason: req.SeverityReason, Reason: req.Reason, ExpiresAt: req.ExpiresAt})
	if err != nil {
		return nil, err
	}
	if filt != nil && filt.ScanID != "" {
		if err := p.checkScan(ctx, caller.OrgID, filt.ScanID); err != nil {
			return nil, err
		}
	}
	actor, err := p.actor(ctx, caller)
	if err != nil {
		return nil, err
	}
	res, err := p.Store.ApplyBulk(ctx, caller.OrgID, ids, filt, u, actor)
	var missing *store.MissingError
	if errors.As(err, &missing) {
		return nil, apierr.NotFound("Finding not found: %s", missing.ID)
	}
	if err != nil {
		return nil, translate(err)
	}
	return &findingsv1.BulkUpdateFindingsResponse{BatchId: res.BatchID, Matched: int32(res.Matched), Changed: int32(res.Changed),
		Unchanged: int32(res.Matched - res.Changed)}, nil
}

// bulkTargets validates the selection: exactly one of ids and filter.
func bulkTargets(req *findingsv1.BulkUpdateFindingsRequest) ([]string, *store.Filter, error) {
	switch {
	case len(req.GetIds()) > 0 && req.GetFilter() != nil:
		return nil, nil, apierr.Invalid("Give either ids or filter, not both")
	case req.GetFilter() != nil:
		f := req.GetFilter()
		out := &store.Filter{Severity: f.GetSeverity(), State: f.GetState(), ScanID: strings.ToLower(f.GetScanId())}
		if out.Severity != "" {
			if err := validate.OneOf("filter.severity", out.Severity, store.Severities...); err != nil {
				return nil, nil, err
			}
		}
		if out.State != "" {
			if err := validate.OneOf("filter.state", out.State, store.States...); err != nil {
				return nil, nil, err
			}
		}
		if out.ScanID != "" {
			if err := validate.UUID("filter.scan_id", out.ScanID); err != nil {
				return nil, nil, err
			}
		}
		if err := search(f, out, "filter."); err != nil {
			return nil, nil, err
		}
		return nil, out, nil
	case len(req.GetIds()) == 0:
		return nil, nil, apierr.Invalid("ids (1 to %d finding ids) or filter is required", store.MaxBulk)
	case len(req.GetIds()) > store.MaxBulk:
		return nil, nil, apierr.Invalid("ids must have at most %d entries", store.MaxBulk)
	}
	seen := make(map[string]int, len(req.GetIds()))
	ids := make([]string, len(req.GetIds()))
	for i, id := range req.GetIds() {
		name := fmt.Sprintf("ids[%d]", i)
		if err := validate.UUID(name, id); err != nil {
			return nil, nil, err
		}
		id = strings.ToLower(id)
		if j, dup := seen[id]; dup {
			return nil, nil, apierr.Invalid("%s repeats ids[%d]", name, j)
		}
		seen[id] = i
		ids[i] = id
	}
	return ids, nil, nil
}
