package live

import (
	"context"
	"time"
)

// The live phase of a scan probes tenant-chosen targets, which may answer
// as slowly as they like. Its time is bounded twice over, so that it always
// ends well inside the scan's attempt (SCAN_JOB_TIMEOUT) and a slow target
// never turns into a timed-out, retried scan:
//   - the whole phase gets at most its budget (SCAN_LIVE_BUDGET) and at most
//     half the time the attempt has left when it starts, leaving the other
//     half for verification and reporting;
//   - each target gets the phase's remaining time shared equally among the
//     targets still to probe, and at most its own Limits.Timeout, so one slow
//     target cannot take the others' time.

// PhaseBudget is the time the live phase may take when the attempt has
// left time remaining (hasDeadline false: unbounded attempt) and the
// configured budget is total.
func PhaseBudget(left time.Duration, hasDeadline bool, total time.Duration) time.Duration {
	if hasDeadline && left/2 < total {
		return max(left/2, 0)
	}
	return total
}

// TargetBudget is the time the next target may take with phaseLeft of the
// phase remaining and targetsLeft targets (this one included) to probe.
func TargetBudget(phaseLeft time.Duration, targetsLeft int, perTarget time.Duration) time.Duration {
	if targetsLeft < 1 {
		targetsLeft = 1
	}
	return max(min(phaseLeft/time.Duration(targetsLeft), perTarget), 0)
}

// PhaseContext returns the context of a live phase under ctx, bounded by
// PhaseBudget.
func PhaseContext(ctx context.Context, total time.Duration) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	return context.WithTimeout(ctx, PhaseBudget(time.Until(dl), ok, total))
}

// TargetContext returns the context of the next target's probe under the
// phase context, bounded by TargetBudget.
func TargetContext(phase context.Context, targetsLeft int, perTarget time.Duration) (context.Context, context.CancelFunc) {
	left := perTarget * time.Duration(max(targetsLeft, 1))
	if dl, ok := phase.Deadline(); ok {
		left = time.Until(dl)
	}
	return context.WithTimeout(phase, TargetBudget(left, targetsLeft, perTarget))
}
