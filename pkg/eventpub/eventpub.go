// Package eventpub publishes a service's webhook events (a scan's or an
// estimation's end) to the findings service, which owns the organizations'
// webhooks. An event's id is derived from its subject and type, so a job
// that publishes again after a failure delivers the event once.
package eventpub

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// Timeout bounds one call to the findings service.
const Timeout = 30 * time.Second

// Publisher publishes one service's events.
type Publisher struct {
	Webhooks findingsv1.WebhookEventServiceClient
	// Namespace derives the service's event ids: the same subject and type
	// always give the same id.
	Namespace uuid.UUID
}

// ID is the id of the event of type typ about subjectID.
func (p *Publisher) ID(subjectID, typ string) string {
	return uuid.NewSHA1(p.Namespace, []byte(subjectID+"/"+typ)).String()
}

// Event is one webhook event about a subject (a scan, an estimation).
type Event struct {
	SubjectID, OrgID, Type string
	OccurredAt             time.Time
	// Key names the subject in the event's data ("scan", "estimation");
	// Subject is the subject in JSON-compatible values.
	Key     string
	Subject map[string]any
}

// Publish sends ev to the findings service under its derived id.
func (p *Publisher) Publish(ctx context.Context, ev Event) error {
	data, err := structpb.NewStruct(map[string]any{ev.Key: ev.Subject})
	if err != nil {
		return fmt.Errorf("encode %s event: %w", ev.Key, err)
	}
	cctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	_, err = p.Webhooks.PublishEvent(cctx, &findingsv1.PublishEventRequest{EventId: p.ID(ev.SubjectID, ev.Type), OrgId: ev.OrgID, Type: ev.Type,
		OccurredAt: timestamppb.New(ev.OccurredAt), Data: data})
	if err != nil {
		return fmt.Errorf("publish %s of %s %s: %w", ev.Type, ev.Key, ev.SubjectID, err)
	}
	return nil
}

// Time is t in the events' time format (RFC 3339 in UTC), or nil for nil.
func Time(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Format(time.RFC3339Nano)
}
