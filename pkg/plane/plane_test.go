package plane

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/server"
	"github.com/vulnscan/vulnscan/pkg/topology"
)

// policyEdges turns allow-lists into the process edges they grant, as
// "from>to:port", the port being the service's main or admin listener.
func policyEdges(t *testing.T, policies map[string]server.Policy, admin bool) []topology.Edge {
	t.Helper()
	var out []topology.Edge
	for svc, policy := range policies {
		to, ok := topology.ServiceProcess[svc]
		require.True(t, ok, "service %s is not in the topology", svc)
		port := topology.Listen[to].GRPC
		if admin {
			port = topology.Listen[to].Admin
		}
		require.NotZero(t, port, "%s has no listener for admin=%v", to, admin)
		for _, callers := range policy {
			for _, id := range callers {
				froms := topology.Identities[id]
				require.NotEmpty(t, froms, "identity %s is not in the topology", id)
				for _, from := range froms {
					out = append(out, topology.Edge{From: from, To: to, Port: port})
				}
			}
		}
	}
	return out
}

// TestPolicyEdgesMatchTopology: the identities the services let in are
// exactly the topology's gRPC edges, so neither can gain or lose an edge
// without the other (and so without the network policies, which deploy/check
// holds to the same table).
func TestPolicyEdgesMatchTopology(t *testing.T) {
	t.Parallel()
	got := append(policyEdges(t, Policies, false), policyEdges(t, AdminPolicies, true)...)
	require.Equal(t, topology.Strings(topology.GRPCEdges()), topology.Strings(got))
}

// TestPolicyEdgesDetectDrift: the comparison above notices a removed and an
// added edge.
func TestPolicyEdgesDetectDrift(t *testing.T) {
	t.Parallel()
	want := topology.Strings(topology.GRPCEdges())
	require.Contains(t, want, "findings>auth:9101")

	removed := map[string]server.Policy{}
	for svc, p := range Policies {
		removed[svc] = p
	}
	auth := server.Policy{}
	for m, ids := range Policies["auth"] {
		if m != "/vulnscan.auth.v1.AuthInternalService/GetOrganization" && m != "/vulnscan.auth.v1.AuthInternalService/GetUser" {
			auth[m] = ids
		}
	}
	removed["auth"] = auth
	got := topology.Strings(append(policyEdges(t, removed, false), policyEdges(t, AdminPolicies, true)...))
	require.NotContains(t, got, "findings>auth:9101")
	require.NotEqual(t, want, got)

	added := map[string]server.Policy{"findings": {"/x/Y": {"auth"}}}
	got = topology.Strings(append(policyEdges(t, Policies, false), policyEdges(t, added, false)...))
	require.NotEqual(t, want, got, fmt.Sprint(got))
}
