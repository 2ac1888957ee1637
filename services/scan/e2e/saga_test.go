package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/netguard"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/pkg/systest"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	scanv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/scan/v1"
	"github.com/vulnscan/vulnscan/services/scan/internal/jobs"
	"github.com/vulnscan/vulnscan/services/scan/internal/service"
	"github.com/vulnscan/vulnscan/services/scan/internal/store"
)

// starter builds a start saga against the running system's real auth,
// estimation and findings services and its scan database, so that the
// system's own scan worker runs the recovery jobs this saga inserts.
func starter(t *testing.T) (*service.Starter, estimationv1.EstimationInternalServiceClient) {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, sys.DatabaseURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Schema: store.Schema})
	require.NoError(t, err)
	dial := func(name string) *grpcConn {
		cc, err := sys.Dial(name, mtls.Scan, false)
		require.NoError(t, err)
		t.Cleanup(func() { _ = cc.Close() })
		return cc
	}
	guard, err := netguard.New([]string{"127.0.0.0/8"})
	require.NoError(t, err)
	box, err := secretbox.Load(secretbox.Keys{Service: "scan", DataDir: t.TempDir()})
	require.NoError(t, err)
	est := estimationv1.NewEstimationInternalServiceClient(dial("estimation"))
	return &service.Starter{
		// The system's worker recovers crashed starts after a second.
		Pool: pool, Store: &store.Store{Pool: pool}, Queue: &jobs.Queue{River: rc}, RecoveryDelay: time.Second, Estimation: est,
		Auth: authv1.NewAuthInternalServiceClient(dial("auth")), Findings: findingsv1.NewFindingsIntakeServiceClient(dial("findings")),
		Guard: guard, Box: box, Log: quietLog(),
	}, est
}

func TestStartSagaFaults(t *testing.T) {
	t.Parallel()
	steps := []string{"recorded", "claimed", "debited", "queued"}
	for _, mode := range []string{"failure", "crash"} {
		for _, step := range steps {
			t.Run(mode+" after "+step, func(t *testing.T) {
				t.Parallel()
				st, estc := starter(t)
				org := newOrg(t, 50, "auto")
				estID, repoURL, credits := sys.Estimated(t, org.WriteKey, systest.FlaskFiles)
				caller := principal.Principal{OrgID: org.ID, UserID: org.UserID, Scopes: []string{"read", "write"}}
				req := &scanv1.CreateScanRequest{CostEstimationId: estID, Repos: []*scanv1.ScanRepo{{Url: repoURL, Source: "upload"}}}
				ctx := context.Background()

				injected := errors.New("injected failure")
				st.Failpoint = func(s string) error {
					if s != step {
						return nil
					}
					if mode == "crash" {
						return service.ErrSimulatedCrash
					}
					return injected
				}
				in, err := st.Validate(ctx, caller, req)
				require.NoError(t, err)
				sc, err := st.Start(ctx, in)
				require.Error(t, err)

				// After the in-request undo, or after recovery for a crash:
				// no lost credits, no stuck claim, no half-created scan.
				require.Eventually(t, func() bool {
					row, err := st.Store.ByID(ctx, sc.ID)
					return err == nil && row.StartState == store.Aborted
				}, 30*time.Second, 100*time.Millisecond, "the start must be undone")
				require.Equal(t, 50, sys.Balance(t, org.WriteKey))
				g, err := estc.GetEstimation(ctx, &estimationv1.GetEstimationRequest{OrgId: org.ID, Id: estID})
				require.NoError(t, err)
				require.Empty(t, g.GetClaimedByScanId())
				_, err = st.Store.Get(ctx, org.ID, sc.ID)
				require.ErrorIs(t, err, store.ErrNotFound)
				r, err := sys.Do("GET", "/scans/"+sc.ID, org.ReadKey, nil)
				require.NoError(t, err)
				require.Equal(t, 404, r.Status)

				// The estimation is claimable again and the balance suffices.
				ok := post(t, org.WriteKey, scanBody(estID, repoURL, nil))
				require.Equal(t, 201, ok.Status, string(ok.Body))
				require.Equal(t, 50-credits, sys.Balance(t, org.WriteKey))
			})
		}
	}

	t.Run("recovery wins over a slow request", func(t *testing.T) {
		t.Parallel()
		st, _ := starter(t)
		org := newOrg(t, 50, "auto")
		estID, repoURL, _ := sys.Estimated(t, org.WriteKey, systest.FlaskFiles)
		ctx := context.Background()
		caller := principal.Principal{OrgID: org.ID, UserID: org.UserID, Scopes: []string{"read", "write"}}
		in, err := st.Validate(ctx, caller, &scanv1.CreateScanRequest{CostEstimationId: estID, Repos: []*scanv1.ScanRepo{{Url: repoURL, Source: "upload"}}})
		require.NoError(t, err)
		var scanID string
		st.Failpoint = func(s string) error {
			if s == "debited" {
				// Recovery runs while the request is still between steps.
				row, err := latestStarting(ctx, st.Pool, org.ID)
				require.NoError(t, err)
				scanID = row
				return st.Abort(ctx, row)
			}
			return nil
		}
		_, err = st.Start(ctx, in)
		require.Error(t, err, "a start that recovery undid must not report success")
		row, err := st.Store.ByID(ctx, scanID)
		require.NoError(t, err)
		require.Equal(t, store.Aborted, row.StartState)
		require.Equal(t, 50, sys.Balance(t, org.WriteKey))
	})
}

func latestStarting(ctx context.Context, pool *pgxpool.Pool, orgID string) (string, error) {
	var id string
	err := pool.QueryRow(ctx, `SELECT id::text FROM scan.scans WHERE org_id = $1 AND start_state = 'starting' ORDER BY created_at DESC LIMIT 1`, orgID).Scan(&id)
	return id, err
}
