package eventpub

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

// webhooks records the events it is sent.
type webhooks struct {
	findingsv1.WebhookEventServiceClient
	got []*findingsv1.PublishEventRequest
}

func (w *webhooks) PublishEvent(_ context.Context, in *findingsv1.PublishEventRequest, _ ...grpc.CallOption) (*findingsv1.PublishEventResponse, error) {
	w.got = append(w.got, in)
	return &findingsv1.PublishEventResponse{}, nil
}

// TestPublish: an event's id depends only on the namespace, the subject and
// the type, so a retried job publishes the same id; the subject travels
// under its key.
func TestPublish(t *testing.T) {
	t.Parallel()
	w := &webhooks{}
	p := &Publisher{Webhooks: w, Namespace: uuid.MustParse("6f0e4c52-8a53-4d7e-9b0e-3f1c2a7d9e41")}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	ev := Event{SubjectID: "s1", OrgID: "o1", Type: "scan.completed", OccurredAt: at, Key: "scan",
		Subject: map[string]any{"id": "s1", "completed_at": Time(&at), "error": nil}}
	require.NoError(t, p.Publish(context.Background(), ev))
	require.NoError(t, p.Publish(context.Background(), ev))
	require.Len(t, w.got, 2)
	require.Equal(t, w.got[0].GetEventId(), w.got[1].GetEventId())
	require.NotEqual(t, p.ID("s1", "scan.failed"), w.got[0].GetEventId())
	other := &Publisher{Namespace: uuid.MustParse("0b8f7d0e-5a61-4c59-a4a4-5d2f8e1c7b3a")}
	require.NotEqual(t, other.ID("s1", "scan.completed"), w.got[0].GetEventId())
	require.Equal(t, "o1", w.got[0].GetOrgId())
	require.True(t, w.got[0].GetOccurredAt().AsTime().Equal(at))
	scan := w.got[0].GetData().AsMap()["scan"].(map[string]any)
	require.Equal(t, "2026-01-02T02:04:05Z", scan["completed_at"])
	require.Nil(t, scan["error"])
	require.Nil(t, Time(nil))
}
