package topology_test

import (
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/topology"
)

func port(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	var n int
	_, err = fmt.Sscan(p, &n)
	require.NoError(t, err)
	return n
}

// The loopback defaults processes dial each other on are the ports the
// table says they listen on.
func TestConfigDefaultsMatchListeners(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr string
		got  func() int
	}{
		{config.DefaultHTTPAddr, func() int { return topology.Listen[topology.Gateway].HTTP }},
		{config.DefaultAuthAddr, func() int { return topology.Listen[topology.Auth].GRPC }},
		{config.DefaultEstimationAddr, func() int { return topology.Listen[topology.Estimation].GRPC }},
		{config.DefaultScanAddr, func() int { return topology.Listen[topology.ScanAPI].GRPC }},
		{config.DefaultFindingsAddr, func() int { return topology.Listen[topology.Findings].GRPC }},
		{config.DefaultAuthAdminAddr, func() int { return topology.Listen[topology.Auth].Admin }},
		{config.DefaultFindingsAdminAddr, func() int { return topology.Listen[topology.Findings].Admin }},
	} {
		require.Equal(t, tc.got(), port(t, tc.addr), tc.addr)
	}
	require.Contains(t, config.DefaultDatabaseURL, fmt.Sprintf(":%d/", topology.StorePorts[topology.Postgres]))
	require.Contains(t, config.DefaultRedisURL, fmt.Sprintf(":%d/", topology.StorePorts[topology.Redis]))
}

// The table's certificate identities are exactly the ones pkg/mtls issues,
// every gRPC service is one of them, and every process holds one.
func TestIdentitiesMatchCertificates(t *testing.T) {
	t.Parallel()
	var ids []string
	for id := range topology.Identities {
		ids = append(ids, id)
	}
	require.ElementsMatch(t, mtls.Identities, ids)
	for svc, proc := range topology.ServiceProcess {
		require.Contains(t, mtls.Identities, svc)
		require.Contains(t, topology.Identities[svc], proc, "%s is served by a process holding another identity", svc)
		require.NotZero(t, topology.Listen[proc].GRPC, "%s serves %s without a gRPC port", proc, svc)
	}
	held := map[string]int{}
	for _, procs := range topology.Identities {
		for _, p := range procs {
			held[p]++
		}
	}
	for _, p := range append(slices.Clone(topology.Processes), topology.Vulnscanctl) {
		require.Equal(t, 1, held[p], "%s holds %d identities", p, held[p])
	}
}

// Listeners: ports are unique across processes except where two processes
// are one service's replicas (the scan API and workers share the image's
// ports); every process has a metrics port.
func TestListenPortsAreDistinct(t *testing.T) {
	t.Parallel()
	owner := map[int]string{}
	for _, p := range topology.Processes {
		ports := topology.Listen[p]
		require.NotZero(t, ports.Metrics, p)
		for _, n := range []int{ports.HTTP, ports.GRPC, ports.Admin, ports.Metrics} {
			if n == 0 {
				continue
			}
			if o, ok := owner[n]; ok {
				pair := []string{o, p}
				sort.Strings(pair)
				require.Equal(t, []string{topology.ScanAPI, topology.ScanWorker}, pair, "port %d shared by %s and %s", n, o, p)
				continue
			}
			owner[n] = p
		}
	}
	require.Len(t, topology.Listen, len(topology.Processes))
}

// Edges: admin edges go only from the operator CLI to an admin port; the
// scan worker, which serves no one, is never a gRPC destination; GRPCEdges
// is exactly the process-to-process subset; Allows agrees with the edges.
func TestEdgeProperties(t *testing.T) {
	t.Parallel()
	for _, e := range topology.Edges {
		require.Equal(t, e.Admin, e.From == topology.Vulnscanctl, "%s: only the operator CLI calls admin listeners", e)
		require.NotEqual(t, topology.ScanWorker, e.To, "%s: the scan worker has no callers", e)
		require.NotEqual(t, topology.Gateway, e.To, "%s: the gateway is reached only from outside", e)
		if e.Admin {
			require.Equal(t, topology.Listen[e.To].Admin, e.Port, e.String())
		}
	}
	var grpc []string
	for _, e := range topology.GRPCEdges() {
		require.True(t, topology.IsProcess(e.From) && topology.IsProcess(e.To), e.String())
		grpc = append(grpc, e.String())
	}
	for _, e := range topology.Edges {
		if topology.IsProcess(e.From) && topology.IsProcess(e.To) {
			require.Contains(t, grpc, e.String())
		}
	}
	for id, procs := range topology.Identities {
		for svc, to := range topology.ServiceProcess {
			want := false
			for _, e := range topology.Edges {
				if slices.Contains(procs, e.From) && e.To == to {
					want = true
				}
			}
			require.Equal(t, want, topology.Allows(id, svc), "%s -> %s", id, svc)
		}
	}
}

func TestInboundAndRendering(t *testing.T) {
	t.Parallel()
	in := topology.Inbound()
	require.Equal(t, topology.Edge{From: topology.Clients, To: topology.Gateway, Port: 8080, Why: "HTTPS /v1"}, in[0])
	require.Len(t, in, 1+len(topology.Processes))
	for i, p := range topology.Processes {
		require.Equal(t, topology.Edge{From: topology.Monitoring, To: p, Port: topology.Listen[p].Metrics, Why: "scrape /metrics"}, in[i+1])
	}

	require.Equal(t, "scan-worker>internet:*", topology.Edge{From: topology.ScanWorker, To: topology.Internet}.String())
	require.Equal(t, []string{"a>b:1", "a>c:*"}, topology.Strings([]topology.Edge{
		{From: "a", To: "c"}, {From: "a", To: "b", Port: 1}, {From: "a", To: "b", Port: 1, Why: "dup"},
	}))

	mermaid, table := topology.Mermaid(), topology.Table()
	for _, e := range topology.Edges {
		row := fmt.Sprintf("| %s | %s | ", e.From, e.To)
		require.Contains(t, table, row, "table row for %s", e)
		if e.To == topology.DNS || e.To == topology.Telemetry {
			continue
		}
		from, to := strings.ReplaceAll(e.From, "-", "_"), strings.ReplaceAll(e.To, "-", "_")
		require.Regexp(t, "(?m)^    "+from+`(\[\[[^\]]*\]\]|\S*) -(-|\.-)>\|"[^"]*"\| `+to+`\b`, mermaid, "diagram arrow for %s", e)
	}
	require.Contains(t, mermaid, `vulnscanctl([vulnscanctl<br/>operator]) -.->|"admin :9301"| auth`)
	require.Equal(t, strings.Count(table, "\n"), 2+len(topology.Edges)+len(in))
}
