package check

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// TestNamespaceIsRestricted: overlays create their namespace with the
// restricted Pod Security Standard enforced.
func TestNamespaceIsRestricted(t *testing.T) {
	t.Parallel()
	everyOverlay(t, func(t *testing.T, r *rendered) {
		require.Len(t, r.namespaces, 1)
		for name, ns := range r.namespaces {
			require.Equal(t, "restricted", ns.Labels["pod-security.kubernetes.io/enforce"], name)
		}
	})
}

// TestDevOverlay: one replica of everything, PostgreSQL and Redis in the
// cluster, blobs on a shared volume.
func TestDevOverlay(t *testing.T) {
	t.Parallel()
	r := render(t, "overlays/dev")
	for name, d := range r.deployments {
		require.True(t, d.Spec.Replicas != nil && *d.Spec.Replicas == 1, "%s: one replica", name)
		hpa := r.hpas[name]
		require.Equal(t, int32(1), *hpa.Spec.MinReplicas, name)
		require.Equal(t, int32(1), hpa.Spec.MaxReplicas, name)
	}
	for _, store := range []string{"postgres", "redis"} {
		sts, ok := r.statefulSets[store]
		require.True(t, ok, "in-cluster %s", store)
		require.Equal(t, int32(1), *sts.Spec.Replicas, store)
		svc, ok := r.services[store]
		require.True(t, ok, "%s Service", store)
		require.Equal(t, int32(storePort[store]), svc.Spec.Ports[0].Port)
	}
	require.Contains(t, r.pvcs, "vulnscan-data")
	for _, name := range []string{"estimation", "scan-api", "scan-worker"} {
		d := r.deployments[name]
		env := resolveEnv(t, r, &d.Spec.Template.Spec.Containers[0])
		require.NotContains(t, env, "VULNSCAN_BLOB_URL", "%s: dev keeps blobs in VULNSCAN_DATA_DIR", name)
		require.Equal(t, "vulnscan-data", dataVolume(t, d.Spec.Template.Spec).PersistentVolumeClaim.ClaimName, name)
	}
}

// TestProdOverlay: managed stores outside the cluster, blobs in object
// storage, several replicas, scan workers scaled on their own.
func TestProdOverlay(t *testing.T) {
	t.Parallel()
	r := render(t, "overlays/prod")
	require.Empty(t, r.statefulSets, "prod runs no stores in the cluster")
	require.NotContains(t, r.services, "postgres")
	require.NotContains(t, r.services, "redis")
	require.Empty(t, r.pvcs)

	for name, d := range r.deployments {
		hpa := r.hpas[name]
		require.GreaterOrEqual(t, *hpa.Spec.MinReplicas, int32(2), "%s: prod runs at least two replicas", name)
		require.Greater(t, hpa.Spec.MaxReplicas, *hpa.Spec.MinReplicas, name)
		spec := d.Spec.Template.Spec
		require.NotEmpty(t, spec.TopologySpreadConstraints, "%s: spread over nodes", name)
		img := spec.Containers[0].Image
		require.Contains(t, img, "/vulnscan/", "%s: image from the registry", name)
		require.NotRegexp(t, `:(dev|latest)$`, img, name)
		env := resolveEnv(t, r, &spec.Containers[0])
		require.NotEmpty(t, env["OTEL_EXPORTER_OTLP_ENDPOINT"], "%s: tracing on", name)
		require.Empty(t, env["VULNSCAN_ALLOWED_PRIVATE_CIDRS"], name)
		if name == "estimation" || strings.HasPrefix(name, "scan-") {
			require.NotEmpty(t, env["VULNSCAN_BLOB_URL"], "%s: blobs in object storage", name)
			require.NotNil(t, dataVolume(t, spec).EmptyDir, "%s: /data is scratch space", name)
		}
	}

	// The worker scales independently of the scan API.
	api, worker := r.hpas["scan-api"], r.hpas["scan-worker"]
	require.Equal(t, "scan-worker", worker.Spec.ScaleTargetRef.Name)
	require.NotEqual(t, api.Spec.MaxReplicas, worker.Spec.MaxReplicas)
	require.Greater(t, worker.Spec.MaxReplicas, api.Spec.MaxReplicas)
	require.NotNil(t, worker.Spec.Behavior, "worker scale-down is slowed, in-flight jobs restart")
	require.NotNil(t, worker.Spec.Behavior.ScaleDown)
	require.NotNil(t, worker.Spec.Behavior.ScaleDown.StabilizationWindowSeconds)

	// Store egress points at the real networks, not the component's placeholders.
	for name, np := range r.policies {
		for _, rule := range np.Spec.Egress {
			for _, peer := range rule.To {
				if peer.IPBlock != nil {
					require.False(t, strings.HasPrefix(peer.IPBlock.CIDR, "192.0.2."), "%s: placeholder network left in prod", name)
				}
			}
		}
	}
}

func dataVolume(t *testing.T, spec corev1.PodSpec) corev1.Volume {
	t.Helper()
	for _, v := range spec.Volumes {
		if v.Name == "data" {
			return v
		}
	}
	t.Fatalf("no data volume")
	return corev1.Volume{}
}
