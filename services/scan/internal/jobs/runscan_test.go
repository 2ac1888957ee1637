package jobs

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine"
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

func TestConfidencePresentation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		f        engine.Finding
		tags     []string
		describe string
	}{
		{"no confidence", engine.Finding{Description: "SQL injection.", Tags: []string{"CWE-89"}}, []string{"CWE-89"}, "SQL injection."},
		{"high with reasons", engine.Finding{Description: "SQL injection.\n", Tags: []string{"CWE-89"}, Confidence: "high",
			Reasons: []string{"Untrusted request data reaches the sink.", "The sink is identified\nby its type."}},
			[]string{"CWE-89", "confidence:high"},
			"SQL injection.\n\nWhy we report this (confidence: high):\n- Untrusted request data reaches the sink.\n- The sink is identified by its type."},
		{"a stale confidence tag is replaced", engine.Finding{Tags: []string{"confidence:low", "x"}, Confidence: "medium", Reasons: []string{"Pattern only."}},
			[]string{"x", "confidence:medium"}, "Why we report this (confidence: medium):\n- Pattern only."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.tags, Tags(tc.f))
			require.Equal(t, tc.describe, Describe(tc.f))
		})
	}
}
