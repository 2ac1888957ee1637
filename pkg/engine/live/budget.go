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

// PhaseEnd is when the live phase starting now under ctx must end.
func PhaseEnd(ctx context.Context, total time.Duration) time.Time {
	dl, ok := ctx.Deadline()
	return time.Now().Add(PhaseBudget(time.Until(dl), ok, total))
}
