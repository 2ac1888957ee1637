package plane

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/server"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	scanv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/scan/v1"
)

// The generated packages whose services the allow-lists name.
var protoFiles = []protoreflect.FileDescriptor{
	authv1.File_vulnscan_auth_v1_auth_proto,
	estimationv1.File_vulnscan_estimation_v1_estimation_proto,
	scanv1.File_vulnscan_scan_v1_scan_proto,
	findingsv1.File_vulnscan_findings_v1_findings_proto,
	findingsv1.File_vulnscan_findings_v1_webhooks_proto,
}

// resolve finds the service a policy key names and, for a method key, the
// method; a key naming nothing would grant nothing, silently.
func resolve(t *testing.T, key string) (svc protoreflect.ServiceDescriptor, method string) {
	t.Helper()
	require.True(t, strings.HasPrefix(key, "/"), "%q does not start with /", key)
	name, method, ok := strings.Cut(key[1:], "/")
	require.True(t, ok, "%q is not /pkg.Service/[Method]", key)
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
	require.NoError(t, err, "%q names no service", key)
	svc, ok = d.(protoreflect.ServiceDescriptor)
	require.True(t, ok, "%q is not a service", key)
	if method != "" {
		require.NotNil(t, svc.Methods().ByName(protoreflect.Name(method)), "%q: %s has no method %s", key, name, method)
	}
	return svc, method
}

// Every key of every allow-list names a real service or method, and every
// caller is an identity pkg/mtls issues.
func TestPolicyKeysNameRealMethods(t *testing.T) {
	t.Parallel()
	for _, set := range []map[string]server.Policy{Policies, AdminPolicies} {
		for svc, policy := range set {
			require.Contains(t, mtls.Identities, svc)
			for key, callers := range policy {
				resolve(t, key)
				require.NotEmpty(t, callers, key)
				for _, c := range callers {
					require.Contains(t, mtls.Identities, c, "%s: unknown caller %q", key, c)
				}
				require.Len(t, callers, len(slicesCompact(callers)), "%s lists a caller twice", key)
			}
		}
	}
}

func slicesCompact(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}

// The service whose listener a key is on is the service that serves it:
// "/vulnscan.auth.v1..." only in the auth service's lists.
func TestPolicyKeysBelongToTheirService(t *testing.T) {
	t.Parallel()
	for _, set := range []map[string]server.Policy{Policies, AdminPolicies} {
		for svc, policy := range set {
			for key := range policy {
				require.True(t, strings.HasPrefix(key, "/vulnscan."+svc+".v1."), "%s is listed on %s's listener", key, svc)
			}
		}
	}
}

// Every RPC of every service is callable by exactly one listener's
// allow-list: none is dead (refused to everyone) and none is open on both
// the main and the admin listener.
func TestEveryMethodIsOnExactlyOneListener(t *testing.T) {
	t.Parallel()
	for _, f := range protoFiles {
		for i := 0; i < f.Services().Len(); i++ {
			s := f.Services().Get(i)
			owner := string(f.Package().Parent().Name()) // vulnscan.<owner>.v1
			for j := 0; j < s.Methods().Len(); j++ {
				full := "/" + string(s.FullName()) + "/" + string(s.Methods().Get(j).Name())
				onMain, onAdmin := open(Policies[owner], full), open(AdminPolicies[owner], full)
				require.True(t, onMain || onAdmin, "%s is refused to every identity", full)
				require.False(t, onMain && onAdmin, "%s is open on both the main and the admin listener", full)
			}
		}
	}
}

func open(p server.Policy, method string) bool {
	for _, id := range mtls.Identities {
		if p.Allows(id, method) {
			return true
		}
	}
	return false
}

// The operator reaches only admin listeners, and admin listeners let in only
// the operator; the gateway never reaches an internal method other than key
// verification and inbound events.
func TestListenerSeparation(t *testing.T) {
	t.Parallel()
	for svc, policy := range AdminPolicies {
		for key, callers := range policy {
			require.Equal(t, []string{mtls.Operator}, callers, "%s on %s's admin listener", key, svc)
		}
	}
	for svc, policy := range Policies {
		for key, callers := range policy {
			require.NotContains(t, callers, mtls.Operator, "%s on %s's main listener", key, svc)
			if slices.Contains(callers, mtls.Gateway) && strings.Contains(key, "Internal") {
				require.Equal(t, "/vulnscan.auth.v1.AuthInternalService/VerifyAPIKey", key)
			}
		}
	}
	for _, tc := range []struct {
		caller, method string
		want           bool
	}{
		{mtls.Gateway, "/vulnscan.auth.v1.AuthInternalService/VerifyAPIKey", true},
		{mtls.Gateway, "/vulnscan.auth.v1.AuthInternalService/DebitCredits", false},
		{mtls.Scan, "/vulnscan.auth.v1.AuthInternalService/DebitCredits", true},
		{mtls.Estimation, "/vulnscan.auth.v1.AuthInternalService/DebitCredits", false},
		{mtls.Gateway, "/vulnscan.scan.v1.ScanService/CreateScan", true},
		{mtls.Findings, "/vulnscan.auth.v1.AuthInternalService/GetUser", true},
		{mtls.Gateway, "/vulnscan.auth.v1.AuthAdminService/GrantCredits", false},
		{mtls.Gateway, "/vulnscan.findings.v1.FindingsIntakeService/ApproveFinding", false},
		{mtls.Scan, "/vulnscan.findings.v1.FindingsIntakeService/ReportFindings", true},
		{mtls.Gateway, "/vulnscan.findings.v1.FindingsIntakeService/ReportFindings", false},
		{mtls.Operator, "/vulnscan.findings.v1.FindingsIntakeService/ReportFindings", false},
	} {
		svc := strings.Split(strings.TrimPrefix(tc.method, "/vulnscan."), ".")[0]
		require.Equal(t, tc.want, Policies[svc].Allows(tc.caller, tc.method), "%s -> %s", tc.caller, tc.method)
	}
	require.True(t, AdminPolicies[mtls.Findings].Allows(mtls.Operator, "/vulnscan.findings.v1.FindingsIntakeService/ApproveFinding"))
	require.True(t, AdminPolicies[mtls.Auth].Allows(mtls.Operator, "/vulnscan.auth.v1.AuthAdminService/GrantCredits"))
}

// Security gives a service its identity, the gateway's verification keys,
// its main allow-list and, for services with an admin listener, the admin
// address and allow-list; a missing identity or key file is an error.
func TestSecurity(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, mtls.Generate(dir, mtls.Auth, mtls.Scan))
	t.Setenv("VULNSCAN_PKI_DIR", dir)
	for _, k := range []string{"VULNSCAN_TLS_CA", "VULNSCAN_TLS_CERT", "VULNSCAN_TLS_KEY", "VULNSCAN_IDENTITY_VERIFY_KEYS"} {
		t.Setenv(k, "")
	}
	common := config.Common{AdminListen: "127.0.0.1:9301"}

	_, _, err := Security(config.FromOS(), mtls.Auth, common)
	require.ErrorContains(t, err, "identity verification keys", "no verification keys yet")
	require.NoError(t, principal.GenerateKeys(dir))

	for _, tc := range []struct {
		name      string
		adminAddr string
	}{
		{mtls.Auth, "127.0.0.1:9301"},
		{mtls.Scan, ""},
	} {
		sec, id, err := Security(config.FromOS(), tc.name, common)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.name, id.Name)
		require.Same(t, id, sec.Identity)
		require.NotNil(t, sec.Verifier)
		require.Equal(t, Policies[tc.name], sec.Policy)
		require.Equal(t, tc.adminAddr, sec.AdminAddr, tc.name)
		require.Equal(t, AdminPolicies[tc.name], sec.AdminPolicy, tc.name)
	}
	_, _, err = Security(config.FromOS(), mtls.Findings, common)
	require.ErrorContains(t, err, "findings identity")
}
