package check

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// adminDatabaseSecret holds the administrator URL; only the dbroles Job may
// reference it (and the development PostgreSQL, which it initialises).
const adminDatabaseSecret = "vulnscan-database"

// databaseService is the schema (and role) each process uses.
var databaseService = map[string]string{
	"auth": "auth", "estimation": "estimation", "scan-api": "scan", "scan-worker": "scan", "findings": "findings",
}

// secretRefs lists every Secret a pod template references, by any route:
// env, envFrom, volumes (projected included).
func secretRefs(spec *corev1.PodSpec) []string {
	var out []string
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				out = append(out, e.ValueFrom.SecretKeyRef.Name)
			}
		}
		for _, ef := range c.EnvFrom {
			if ef.SecretRef != nil {
				out = append(out, ef.SecretRef.Name)
			}
		}
	}
	for _, v := range spec.Volumes {
		if v.Secret != nil {
			out = append(out, v.Secret.SecretName)
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.Secret != nil {
					out = append(out, src.Secret.Name)
				}
			}
		}
	}
	return out
}

// TestDatabaseRoles: every service connects as its own role from its own
// Secret, no service pod can reach the administrator URL, and the dbroles
// Job — the only holder of that URL — exists in every overlay, runs as its
// own ServiceAccount without API access, sets the passwords from the
// per-service Secrets, retries, and is ordered before the services.
func TestDatabaseRoles(t *testing.T) {
	t.Parallel()
	everyOverlay(t, func(t *testing.T, r *rendered) {
		for name, d := range r.deployments {
			spec := &d.Spec.Template.Spec
			require.NotContains(t, secretRefs(spec), adminDatabaseSecret, "%s: a service pod references the administrator database Secret", name)
			svc, ok := databaseService[name]
			if !ok {
				for _, s := range secretRefs(spec) {
					require.False(t, strings.HasPrefix(s, adminDatabaseSecret), "%s uses no database but references %s", name, s)
				}
				continue
			}
			env := resolveEnv(t, r, &spec.Containers[0])
			key := strings.ToUpper(svc) + "_DATABASE_URL"
			require.Equal(t, "secret:"+adminDatabaseSecret+"-"+svc+"/url", env[key], "%s: %s from its own Secret", name, key)
			for _, s := range secretRefs(spec) {
				if strings.HasPrefix(s, adminDatabaseSecret+"-") {
					require.Equal(t, adminDatabaseSecret+"-"+svc, s, "%s: references another service's database Secret", name)
				}
			}
			require.NotEqual(t, "dbroles", spec.ServiceAccountName, name)
		}
		for name, s := range r.statefulSets {
			if name != "postgres" {
				require.NotContains(t, secretRefs(&s.Spec.Template.Spec), adminDatabaseSecret, "StatefulSet %s", name)
			}
		}

		job, ok := r.jobs["dbroles"]
		require.True(t, ok, "no dbroles Job")
		require.Len(t, r.jobs, 1, "one Job")
		spec := &job.Spec.Template.Spec
		require.Equal(t, "dbroles", spec.ServiceAccountName, "the Job runs as its own ServiceAccount")
		sa, ok := r.serviceAccounts["dbroles"]
		require.True(t, ok, "no dbroles ServiceAccount")
		require.True(t, sa.AutomountServiceAccountToken != nil && !*sa.AutomountServiceAccountToken, "dbroles ServiceAccount mounts a token")
		require.Empty(t, spec.Volumes, "the Job mounts nothing")
		require.Len(t, spec.Containers, 1)
		require.Empty(t, spec.InitContainers)
		c := spec.Containers[0]
		require.Equal(t, []string{"-from-urls"}, c.Args, "the Job sets the passwords the operator generated")
		require.Empty(t, c.Command, "the image's entrypoint is vulnscan-dbroles")
		env := resolveEnv(t, r, &c)
		want := map[string]string{"DATABASE_URL": "secret:" + adminDatabaseSecret + "/url"}
		for _, svc := range []string{"auth", "estimation", "scan", "findings"} {
			want[strings.ToUpper(svc)+"_DATABASE_URL"] = "secret:" + adminDatabaseSecret + "-" + svc + "/url"
		}
		for k, v := range want {
			require.Equal(t, v, env[k], "Job: %s", k)
		}
		require.Empty(t, c.EnvFrom, "Job: only the database Secrets, key by key")
		var secrets []string
		for _, s := range secretRefs(spec) {
			require.True(t, s == adminDatabaseSecret || strings.HasPrefix(s, adminDatabaseSecret+"-"), "Job references Secret %s", s)
			secrets = append(secrets, s)
		}
		require.Len(t, secrets, 5)

		// Retries while PostgreSQL starts, bounded, and goes away so the next
		// apply runs it again.
		require.Equal(t, corev1.RestartPolicyNever, spec.RestartPolicy)
		require.True(t, job.Spec.BackoffLimit != nil && *job.Spec.BackoffLimit >= 3, "Job retries")
		require.NotNil(t, job.Spec.ActiveDeadlineSeconds, "Job is bounded")
		require.NotNil(t, job.Spec.TTLSecondsAfterFinished, "a finished Job is removed so the next apply re-runs it")
		// Ordered before the services by tools that order (Argo CD sync
		// waves); with plain kubectl the services retry until their role
		// exists (startup probe, restart back-off).
		wave, err := strconv.Atoi(job.Annotations["argocd.argoproj.io/sync-wave"])
		require.NoError(t, err, "Job sync wave")
		for name, d := range r.deployments {
			dw := 0
			if s, ok := d.Annotations["argocd.argoproj.io/sync-wave"]; ok {
				dw, err = strconv.Atoi(s)
				require.NoError(t, err, name)
			}
			require.Less(t, wave, dw, "the Job runs before %s", name)
			if _, ok := databaseService[name]; ok {
				c := d.Spec.Template.Spec.Containers[0]
				require.NotNil(t, c.StartupProbe, "%s: startup probe while its role is provisioned", name)
			}
		}
	})
}
