package check

import (
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func TestRenderBase(t *testing.T) {
	t.Parallel()
	r := render(t, "base")
	require.ElementsMatch(t, processes, sortedKeys(r.deployments))
}

// TestPodsAreHardened: no pod without requests, limits, probes and the
// restricted security context, in any overlay, stores included.
func TestPodsAreHardened(t *testing.T) {
	t.Parallel()
	everyOverlay(t, func(t *testing.T, r *rendered) {
		templates := r.podTemplates()
		require.NotEmpty(t, templates)
		for _, pt := range templates {
			where := pt.kind + "/" + pt.name
			spec := pt.spec
			require.False(t, spec.HostNetwork || spec.HostPID || spec.HostIPC, "%s: host namespaces", where)
			require.NotNil(t, spec.AutomountServiceAccountToken, "%s: automountServiceAccountToken", where)
			require.False(t, *spec.AutomountServiceAccountToken, "%s: mounts a service account token", where)
			require.NotEmpty(t, spec.ServiceAccountName, "%s: default service account", where)
			require.Contains(t, r.serviceAccounts, spec.ServiceAccountName, "%s: service account missing", where)

			psc := spec.SecurityContext
			require.NotNil(t, psc, "%s: pod securityContext", where)
			require.True(t, psc.RunAsNonRoot != nil && *psc.RunAsNonRoot, "%s: pod runAsNonRoot", where)
			require.True(t, psc.RunAsUser != nil && *psc.RunAsUser != 0, "%s: pod runAsUser must be non-zero", where)
			require.True(t, psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault,
				"%s: seccompProfile RuntimeDefault", where)

			for _, v := range spec.Volumes {
				require.Nil(t, v.HostPath, "%s: hostPath volume %s", where, v.Name)
			}

			containers := append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
			require.NotEmpty(t, spec.Containers, where)
			for _, c := range containers {
				cw := where + "/" + c.Name
				for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
					req, ok := c.Resources.Requests[res]
					require.True(t, ok && !req.IsZero(), "%s: requests.%s", cw, res)
					lim, ok := c.Resources.Limits[res]
					require.True(t, ok && !lim.IsZero(), "%s: limits.%s", cw, res)
					require.LessOrEqual(t, req.Cmp(lim), 0, "%s: %s request above limit", cw, res)
				}
				if pt.kind != "Job" { // a Job's container runs to completion and serves nothing
					require.NotNil(t, c.LivenessProbe, "%s: livenessProbe", cw)
					require.NotNil(t, c.ReadinessProbe, "%s: readinessProbe", cw)
				}

				sc := c.SecurityContext
				require.NotNil(t, sc, "%s: securityContext", cw)
				require.True(t, sc.RunAsNonRoot != nil && *sc.RunAsNonRoot, "%s: runAsNonRoot", cw)
				require.True(t, sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem, "%s: readOnlyRootFilesystem", cw)
				require.True(t, sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation, "%s: allowPrivilegeEscalation", cw)
				require.True(t, sc.Privileged == nil || !*sc.Privileged, "%s: privileged", cw)
				require.True(t, sc.RunAsUser == nil || *sc.RunAsUser != 0, "%s: runAsUser 0", cw)
				require.NotNil(t, sc.Capabilities, "%s: capabilities", cw)
				require.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop, "%s: capabilities.drop", cw)
				require.Empty(t, sc.Capabilities.Add, "%s: capabilities.add", cw)

				require.NotEmpty(t, c.Image, cw)
				require.Regexp(t, `:[A-Za-z0-9_.-]+$|@sha256:[0-9a-f]{64}$`, c.Image, "%s: image needs a tag or digest", cw)
				require.NotRegexp(t, `:latest$`, c.Image, "%s: image tag latest", cw)
			}
		}
	})
}

// TestDeploymentsHaveCompanions: every Deployment comes with its Service,
// ServiceAccount, HorizontalPodAutoscaler and PodDisruptionBudget, and the
// ports, probes and addresses agree with each other.
func TestDeploymentsHaveCompanions(t *testing.T) {
	t.Parallel()
	everyOverlay(t, func(t *testing.T, r *rendered) {
		require.ElementsMatch(t, processes, sortedKeys(r.deployments), "one Deployment per process")
		for _, name := range sortedKeys(r.deployments) {
			d := r.deployments[name]
			podLabels := labels.Set(d.Spec.Template.Labels)
			require.Equal(t, name, podLabels["app.kubernetes.io/name"], "%s: pod label", name)
			sel := labels.SelectorFromSet(d.Spec.Selector.MatchLabels)
			require.True(t, sel.Matches(podLabels), "%s: selector does not match its pods", name)
			require.Len(t, d.Spec.Template.Spec.Containers, 1, name)
			c := d.Spec.Template.Spec.Containers[0]
			containerPorts := map[string]int32{}
			for _, p := range c.Ports {
				containerPorts[p.Name] = p.ContainerPort
			}

			// Service selecting exactly this Deployment's pods, on named container ports.
			svc, ok := r.services[name]
			require.True(t, ok, "%s: no Service", name)
			require.True(t, labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels), "%s: Service does not select the pods", name)
			for other, od := range r.deployments {
				if other != name {
					require.False(t, labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(od.Spec.Template.Labels)),
						"Service %s also selects %s", name, other)
				}
			}
			require.NotEmpty(t, svc.Spec.Ports, "%s: Service without ports", name)
			for _, sp := range svc.Spec.Ports {
				require.Contains(t, containerPorts, sp.TargetPort.String(), "%s: Service port %s targets no container port", name, sp.Name)
			}

			// ServiceAccount of its own.
			require.Equal(t, name, d.Spec.Template.Spec.ServiceAccountName, "%s: own ServiceAccount", name)
			require.Contains(t, r.serviceAccounts, name)

			// Autoscaler targeting it.
			hpa, ok := r.hpas[name]
			require.True(t, ok, "%s: no HorizontalPodAutoscaler", name)
			require.Equal(t, "Deployment", hpa.Spec.ScaleTargetRef.Kind)
			require.Equal(t, name, hpa.Spec.ScaleTargetRef.Name)
			require.NotNil(t, hpa.Spec.MinReplicas)
			require.GreaterOrEqual(t, *hpa.Spec.MinReplicas, int32(1))
			require.GreaterOrEqual(t, hpa.Spec.MaxReplicas, *hpa.Spec.MinReplicas)
			require.NotEmpty(t, hpa.Spec.Metrics, "%s: HPA without metrics", name)

			// Disruption budget selecting its pods.
			pdb, ok := r.pdbs[name]
			require.True(t, ok, "%s: no PodDisruptionBudget", name)
			pdbSel, err := metaSelector(pdb.Spec.Selector)
			require.NoError(t, err)
			require.True(t, pdbSel.Matches(podLabels), "%s: PDB does not select the pods", name)
			require.NotNil(t, pdb.Spec.MaxUnavailable, "%s: PDB uses maxUnavailable so single replicas can drain", name)

			// Probes on the health endpoints, on the port the process listens on.
			env := resolveEnv(t, r, &c)
			if name == "gateway" {
				require.Equal(t, "0.0.0.0:8080", env["VULNSCAN_HTTP_ADDR"])
				require.Equal(t, int32(8080), containerPorts["http"])
				require.NotNil(t, c.LivenessProbe.HTTPGet)
				require.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path)
				require.NotNil(t, c.ReadinessProbe.HTTPGet)
				require.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
				require.Equal(t, "http", c.LivenessProbe.HTTPGet.Port.String())
				require.Equal(t, "http", c.ReadinessProbe.HTTPGet.Port.String())
			} else {
				port := addrPort(t, env["GRPC_LISTEN_ADDR"])
				require.Equal(t, port, containerPorts["grpc"], "%s: GRPC_LISTEN_ADDR and container port", name)
				// The gRPC port requires a client certificate: probes ask the
				// plain-HTTP health endpoints beside /metrics instead.
				for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
					require.NotNil(t, p, "%s: probe", name)
					require.NotNil(t, p.HTTPGet, "%s: HTTP health probe", name)
					require.Equal(t, "metrics", p.HTTPGet.Port.String(), "%s: probe port", name)
				}
				require.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path, name)
				require.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path, name)
			}
			require.Equal(t, addrPort(t, env["METRICS_ADDR"]), containerPorts["metrics"], "%s: METRICS_ADDR and container port", name)
			require.Equal(t, strconv.Itoa(int(containerPorts["metrics"])), d.Spec.Template.Annotations["prometheus.io/port"], "%s: scrape port", name)
		}
	})
}

// TestProcessConfiguration: each process gets the variables it needs, client
// addresses name real Service ports, and stores come from Secrets.
func TestProcessConfiguration(t *testing.T) {
	t.Parallel()
	const secret = "secret:"
	need := map[string]map[string]string{
		"gateway": {
			"AUTH_GRPC_ADDR": "auth:9101", "ESTIMATION_GRPC_ADDR": "estimation:9102",
			"SCAN_GRPC_ADDR": "scan-api:9103", "FINDINGS_GRPC_ADDR": "findings:9104",
			"REDIS_URL": secret, "VULNSCAN_RATE_LIMIT": "",
		},
		"auth": {
			"GRPC_LISTEN_ADDR": "0.0.0.0:9101", "METRICS_ADDR": "0.0.0.0:9201", "ADMIN_LISTEN_ADDR": "0.0.0.0:9301",
			"AUTH_DATABASE_URL": "secret:vulnscan-database-auth/url", "REDIS_URL": secret, "VULNSCAN_SECRET_KEY": secret,
		},
		"estimation": {
			"GRPC_LISTEN_ADDR": "0.0.0.0:9102", "METRICS_ADDR": "0.0.0.0:9202",
			"ESTIMATION_DATABASE_URL": "secret:vulnscan-database-estimation/url", "VULNSCAN_SECRET_KEY": secret, "AUTH_GRPC_ADDR": "auth:9101",
			"FINDINGS_GRPC_ADDR": "findings:9104", "VULNSCAN_DATA_DIR": "/data", "VULNSCAN_ALLOWED_PRIVATE_CIDRS": "",
		},
		"scan-api": {
			"SCAN_MODE": "api", "GRPC_LISTEN_ADDR": "0.0.0.0:9103", "METRICS_ADDR": "0.0.0.0:9203",
			"SCAN_DATABASE_URL": "secret:vulnscan-database-scan/url", "VULNSCAN_SECRET_KEY": secret, "AUTH_GRPC_ADDR": "auth:9101",
			"ESTIMATION_GRPC_ADDR": "estimation:9102", "FINDINGS_GRPC_ADDR": "findings:9104",
			"VULNSCAN_DATA_DIR": "/data",
		},
		"scan-worker": {
			"SCAN_MODE": "worker", "GRPC_LISTEN_ADDR": "0.0.0.0:9103", "METRICS_ADDR": "0.0.0.0:9203",
			"SCAN_DATABASE_URL": "secret:vulnscan-database-scan/url", "VULNSCAN_SECRET_KEY": secret, "AUTH_GRPC_ADDR": "auth:9101",
			"ESTIMATION_GRPC_ADDR": "estimation:9102", "FINDINGS_GRPC_ADDR": "findings:9104",
			"VULNSCAN_DATA_DIR": "/data", "VULNSCAN_ALLOWED_PRIVATE_CIDRS": "",
		},
		"findings": {
			"GRPC_LISTEN_ADDR": "0.0.0.0:9104", "METRICS_ADDR": "0.0.0.0:9204", "ADMIN_LISTEN_ADDR": "0.0.0.0:9304",
			"FINDINGS_DATABASE_URL": "secret:vulnscan-database-findings/url", "VULNSCAN_ALLOWED_PRIVATE_CIDRS": "", "AUTH_GRPC_ADDR": "auth:9101",
			// Every replica opens what another sealed: one key from a Secret.
			"VULNSCAN_SECRET_KEY": secret,
		},
	}
	tls := map[string]string{
		"VULNSCAN_TLS_CA": "/etc/vulnscan/tls/ca.crt", "VULNSCAN_TLS_CERT": "/etc/vulnscan/tls/tls.crt",
		"VULNSCAN_TLS_KEY": "/etc/vulnscan/tls/tls.key", "VULNSCAN_IDENTITY_VERIFY_KEYS": "/etc/vulnscan/identity/identity.pub",
	}
	for _, vars := range need {
		for k, v := range tls {
			vars[k] = v
		}
	}
	need["gateway"]["VULNSCAN_IDENTITY_SIGNING_KEY"] = "/etc/vulnscan/identity/identity.key"
	everyOverlay(t, func(t *testing.T, r *rendered) {
		for name, vars := range need {
			d := r.deployments[name]
			require.NotNil(t, d, name)
			env := resolveEnv(t, r, &d.Spec.Template.Spec.Containers[0])
			for k, want := range vars {
				got, ok := env[k]
				require.True(t, ok, "%s: %s not set", name, k)
				switch want {
				case secret:
					require.True(t, strings.HasPrefix(got, secret), "%s: %s must come from a Secret, got %q", name, k, got)
				case "":
					if k == "VULNSCAN_ALLOWED_PRIVATE_CIDRS" {
						require.Empty(t, got, "%s: %s must be empty", name, k)
					}
				default:
					require.Equal(t, want, got, "%s: %s", name, k)
				}
			}
			// The database comes only from the service's own URL: no shared
			// DATABASE_URL to fall back on.
			_, shared := env["DATABASE_URL"]
			require.False(t, shared, "%s: DATABASE_URL is set; services use <SERVICE>_DATABASE_URL from their own Secret", name)
			// Every client address names a Service port that exists.
			for k, v := range env {
				if !strings.HasSuffix(k, "_GRPC_ADDR") {
					continue
				}
				host, port, err := net.SplitHostPort(v)
				require.NoError(t, err, "%s: %s=%q", name, k, v)
				svc, ok := r.services[host]
				require.True(t, ok, "%s: %s names no Service", name, k)
				found := false
				for _, sp := range svc.Spec.Ports {
					found = found || strconv.Itoa(int(sp.Port)) == port && strings.HasPrefix(sp.Name, "grpc")
				}
				require.True(t, found, "%s: %s: Service %s has no grpc port %s", name, k, host, port)
			}
		}
	})
}

// TestSecretsOnlyByReference: no Secret objects are rendered, and anything
// secret-looking is read through secretKeyRef, never written inline.
func TestSecretsOnlyByReference(t *testing.T) {
	t.Parallel()
	sensitive := regexp.MustCompile(`(?i)(DATABASE_URL|REDIS_URL|SECRET|PASSWORD|TOKEN|PRIVATE_KEY|API_KEY|CREDENTIAL)`)
	credsInURL := regexp.MustCompile(`://[^/@\s]+:[^/@\s]+@`)
	everyOverlay(t, func(t *testing.T, r *rendered) {
		require.Empty(t, r.secrets, "Secrets are created out of band, never rendered")
		for name, cm := range r.configMaps {
			for k, v := range cm.Data {
				require.False(t, sensitive.MatchString(k), "ConfigMap %s holds secret-looking key %s", name, k)
				require.False(t, credsInURL.MatchString(v), "ConfigMap %s: %s carries credentials", name, k)
			}
			require.Empty(t, cm.BinaryData, name)
		}
		for _, pt := range r.podTemplates() {
			for _, c := range append(append([]corev1.Container{}, pt.spec.InitContainers...), pt.spec.Containers...) {
				for _, e := range c.Env {
					where := pt.name + "/" + c.Name + " " + e.Name
					require.False(t, credsInURL.MatchString(e.Value), "%s carries credentials", where)
					if !sensitive.MatchString(e.Name) {
						continue
					}
					require.Empty(t, e.Value, "%s is set inline", where)
					require.True(t, e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil, "%s must use secretKeyRef", where)
				}
				for _, ef := range c.EnvFrom {
					require.Nil(t, ef.SecretRef, "%s/%s: envFrom a whole Secret; reference single keys", pt.name, c.Name)
				}
			}
		}
	})
}

// TestGracefulShutdown: every process gets time to drain; workers, which hand
// their job back to the queue, get more; preStop hooks fit in the period.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	everyOverlay(t, func(t *testing.T, r *rendered) {
		for name, d := range r.deployments {
			spec := d.Spec.Template.Spec
			require.NotNil(t, spec.TerminationGracePeriodSeconds, name)
			grace := *spec.TerminationGracePeriodSeconds
			require.GreaterOrEqual(t, grace, int64(30), "%s: grace period", name)
			if name != "scan-worker" {
				require.Greater(t, *r.deployments["scan-worker"].Spec.Template.Spec.TerminationGracePeriodSeconds, grace,
					"scan-worker needs a longer grace period than %s", name)
				c := spec.Containers[0]
				require.True(t, c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil,
					"%s: preStop sleep so endpoints are removed before SIGTERM", name)
				require.Less(t, c.Lifecycle.PreStop.Sleep.Seconds*3, grace, "%s: preStop leaves too little of the grace period", name)
			}
			// The process's own drain budget (SHUTDOWN_GRACE) plus the preStop
			// sleep must end before the kubelet sends SIGKILL.
			c := spec.Containers[0]
			env := resolveEnv(t, r, &c)
			drain, err := time.ParseDuration(env["SHUTDOWN_GRACE"])
			require.NoError(t, err, "%s: SHUTDOWN_GRACE", name)
			var preStop time.Duration
			if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
				preStop = time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
			}
			require.Less(t, drain+preStop, time.Duration(grace)*time.Second,
				"%s: SHUTDOWN_GRACE %s + preStop %s must fit in the %ds grace period", name, drain, preStop, grace)
			require.NotNil(t, d.Spec.Strategy.RollingUpdate, name)
			require.Equal(t, "0", d.Spec.Strategy.RollingUpdate.MaxUnavailable.String(), "%s: rolling updates keep capacity", name)
		}
	})
}

// resolveEnv returns a container's environment: literal values, ConfigMap
// values (envFrom and configMapKeyRef), and "secret:<name>/<key>" for Secret
// references. Referenced ConfigMaps must exist in the rendered output.
func resolveEnv(t *testing.T, r *rendered, c *corev1.Container) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, ef := range c.EnvFrom {
		require.NotNil(t, ef.ConfigMapRef, "%s: envFrom", c.Name)
		cm, ok := r.configMaps[ef.ConfigMapRef.Name]
		require.True(t, ok, "%s: ConfigMap %s is not rendered", c.Name, ef.ConfigMapRef.Name)
		for k, v := range cm.Data {
			env[ef.Prefix+k] = v
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = "secret:" + e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		case e.ValueFrom.ConfigMapKeyRef != nil:
			cm, ok := r.configMaps[e.ValueFrom.ConfigMapKeyRef.Name]
			require.True(t, ok, "%s: ConfigMap %s is not rendered", c.Name, e.ValueFrom.ConfigMapKeyRef.Name)
			env[e.Name] = cm.Data[e.ValueFrom.ConfigMapKeyRef.Key]
		default:
			env[e.Name] = "field:"
		}
	}
	return env
}

func addrPort(t *testing.T, addr string) int32 {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err, "address %q", addr)
	n, err := strconv.Atoi(port)
	require.NoError(t, err)
	return int32(n)
}

// TestPlaneIdentities: each process mounts its own certificate Secret and
// the identity key Secret; only the gateway gets the signing key.
func TestPlaneIdentities(t *testing.T) {
	t.Parallel()
	identity := map[string]string{"gateway": "gateway", "auth": "auth", "estimation": "estimation",
		"scan-api": "scan", "scan-worker": "scan", "findings": "findings"}
	everyOverlay(t, func(t *testing.T, r *rendered) {
		for name, id := range identity {
			d := r.deployments[name]
			require.NotNil(t, d, name)
			spec := d.Spec.Template.Spec
			vols := map[string]corev1.Volume{}
			for _, v := range spec.Volumes {
				vols[v.Name] = v
			}
			tls, ok := vols["tls"]
			require.True(t, ok && tls.Secret != nil, "%s: no tls Secret volume", name)
			require.Equal(t, "vulnscan-tls-"+id, tls.Secret.SecretName, "%s: certificate of another identity", name)
			ident, ok := vols["identity"]
			require.True(t, ok && ident.Secret != nil, "%s: no identity Secret volume", name)
			require.Equal(t, "vulnscan-identity", ident.Secret.SecretName, name)
			var keys []string
			for _, it := range ident.Secret.Items {
				keys = append(keys, it.Key)
			}
			if name == "gateway" {
				require.Equal(t, []string{"identity.key"}, keys, "%s: the gateway signs", name)
			} else {
				require.Equal(t, []string{"identity.pub"}, keys, "%s: a service only verifies, never signs", name)
			}
			mounts := map[string]string{}
			for _, m := range spec.Containers[0].VolumeMounts {
				require.True(t, m.ReadOnly || (m.Name != "tls" && m.Name != "identity"), "%s: %s mounted writable", name, m.Name)
				mounts[m.Name] = m.MountPath
			}
			require.Equal(t, "/etc/vulnscan/tls", mounts["tls"], name)
			require.Equal(t, "/etc/vulnscan/identity", mounts["identity"], name)
		}
	})
}
