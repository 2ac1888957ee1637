package jobs

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDecide is the refund rule: a scan that used its whole attempt on the
// tenant's input is failed after that one attempt and keeps its credits;
// refusals before any analysis are refunded; only infrastructure failures
// are retried.
func TestDecide(t *testing.T) {
	t.Parallel()
	transient := errors.New("findings service unavailable")
	tests := []struct {
		name     string
		err      error
		ctxErr   error
		attempt  int
		want     action
		wantText string
	}{
		{"shutdown hands back", context.Canceled, context.Canceled, 1, handBack, ""},
		{"timeout on the first attempt fails for good, credits kept", fmt.Errorf("engine: %w", context.DeadlineExceeded), context.DeadlineExceeded, 1, failKeep, "not refunded"},
		{"timeout while probing targets", transient, context.DeadlineExceeded, 1, failKeep, "time limit"},
		{"archive refused: refunded at once", permanent{"The uploaded archive could not be unpacked safely"}, nil, 1, failRefund, "unpacked safely"},
		{"permanent wins over a passed deadline", permanent{"Repository x exceeds the size limit"}, context.DeadlineExceeded, 1, failRefund, "size limit"},
		{"transient failure is retried", transient, nil, 1, retry, ""},
		{"transient failure on the last attempt is refunded", transient, nil, 3, failRefund, "could not be completed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := decide(tt.err, tt.ctxErr, tt.attempt, 3)
			require.Equal(t, tt.want, o.action)
			require.Contains(t, o.msg, tt.wantText)
		})
	}
}
