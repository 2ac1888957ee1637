// Package topology is the process graph of a vulnscan deployment, written
// once: which process listens on which port, and every connection one
// process opens to another process, a store or the outside world.
//
// Everything that describes the graph is derived from or checked against
// this table: deploy/check requires the Kubernetes network policies to allow
// exactly these edges, pkg/plane's method allow-lists must grant exactly its
// gRPC edges (TestPolicyEdgesMatchTopology), pkg/server's Dial refuses to
// open a connection the table does not list (so every service's configured
// peers are checked whenever it starts), and the architecture diagram in
// deploy/README.md is generated from it (TestDiagramIsGenerated).
//
// The package has no dependencies so that the deploy checks, which live in
// their own module, can import it.
package topology

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The processes of a deployment (one Kubernetes workload each).
const (
	Gateway     = "gateway"
	Auth        = "auth"
	Estimation  = "estimation"
	ScanAPI     = "scan-api"
	ScanWorker  = "scan-worker"
	Findings    = "findings"
	Vulnscanctl = "vulnscanctl" // the operator CLI, run as a one-off pod
	DBRoles     = "dbroles"     // the Job that provisions the database roles
)

// Pseudo-nodes: what the processes reach that is not one of them.
const (
	Postgres   = "postgres"
	Redis      = "redis"
	Internet   = "internet"   // public addresses only, never cluster-private ranges
	DNS        = "dns"        // the cluster resolver
	Telemetry  = "telemetry"  // the OpenTelemetry collector
	Clients    = "any"        // API clients, from anywhere
	Monitoring = "monitoring" // Prometheus, from its own namespace
	AllPods    = "*"          // every pod of the namespace
	AllProcs   = "vulnscan"   // every vulnscan process
)

// AnyPort is an Edge's Port when the peer may be reached on any port.
const AnyPort = 0

// Processes are the long-running processes, one Deployment each.
var Processes = []string{Gateway, Auth, Estimation, ScanAPI, ScanWorker, Findings}

// Ports are where each process listens. Admin is the operator-only listener.
type Ports struct {
	HTTP, GRPC, Admin, Metrics int
}

// Listen is every process's listeners (the defaults of the local run and the
// ports the manifests use).
var Listen = map[string]Ports{
	Gateway:    {HTTP: 8080, Metrics: 9090},
	Auth:       {GRPC: 9101, Admin: 9301, Metrics: 9201},
	Estimation: {GRPC: 9102, Metrics: 9202},
	ScanAPI:    {GRPC: 9103, Metrics: 9203},
	ScanWorker: {GRPC: 9103, Metrics: 9203}, // gRPC health only: no caller
	Findings:   {GRPC: 9104, Admin: 9304, Metrics: 9204},
}

// StorePorts are the stores' ports.
var StorePorts = map[string]int{Postgres: 5432, Redis: 6379}

// Identities maps each certificate identity (pkg/mtls) to the processes that
// hold it: the scan API and workers share the scan identity, the operator's
// is vulnscanctl's.
var Identities = map[string][]string{
	"gateway":    {Gateway},
	"auth":       {Auth},
	"estimation": {Estimation},
	"scan":       {ScanAPI, ScanWorker},
	"findings":   {Findings},
	"operator":   {Vulnscanctl},
}

// ServiceProcess is the process serving each gRPC service.
var ServiceProcess = map[string]string{"auth": Auth, "estimation": Estimation, "scan": ScanAPI, "findings": Findings}

// Edge is one connection: From opens it to To on Port (AnyPort: any).
type Edge struct {
	From, To string
	Port     int
	// Admin marks a call to an operator-only admin listener.
	Admin bool
	// Why is what the connection is for (the diagram's label).
	Why string
}

func (e Edge) String() string {
	p := "*"
	if e.Port != AnyPort {
		p = fmt.Sprint(e.Port)
	}
	return fmt.Sprintf("%s>%s:%s", e.From, e.To, p)
}

// Edges are every connection the system opens, apart from the monitoring
// scrapes of the metrics ports and the clients' calls to the gateway (see
// Inbound).
var Edges = []Edge{
	{From: Gateway, To: Auth, Port: 9101, Why: "keys, organizations, credits"},
	{From: Gateway, To: Estimation, Port: 9102, Why: "estimations, uploads"},
	{From: Gateway, To: ScanAPI, Port: 9103, Why: "scans"},
	{From: Gateway, To: Findings, Port: 9104, Why: "findings, triage"},
	{From: Gateway, To: Redis, Port: 6379, Why: "rate limits, key cache"},

	{From: Auth, To: Postgres, Port: 5432},
	{From: Auth, To: Redis, Port: 6379, Why: "key revocations"},

	{From: Estimation, To: Postgres, Port: 5432},
	{From: Estimation, To: Auth, Port: 9101, Why: "connected repositories"},
	{From: Estimation, To: Findings, Port: 9104, Why: "webhook events"},
	{From: Estimation, To: Internet, Port: 443, Why: "git clones"},

	{From: ScanAPI, To: Postgres, Port: 5432},
	{From: ScanAPI, To: Auth, Port: 9101, Why: "debit, refund"},
	{From: ScanAPI, To: Estimation, Port: 9102, Why: "claim estimation"},
	{From: ScanAPI, To: Findings, Port: 9104, Why: "register scan, summaries"},

	{From: ScanWorker, To: Postgres, Port: 5432},
	{From: ScanWorker, To: Auth, Port: 9101, Why: "refund"},
	{From: ScanWorker, To: Estimation, Port: 9102, Why: "uploads"},
	{From: ScanWorker, To: Findings, Port: 9104, Why: "report findings, webhook events"},
	{From: ScanWorker, To: Internet, Port: AnyPort, Why: "clones, scan targets"},

	{From: Findings, To: Postgres, Port: 5432},
	{From: Findings, To: Auth, Port: 9101, Why: "organizations, users"},
	{From: Findings, To: Internet, Port: 443, Why: "webhooks"},

	{From: Vulnscanctl, To: Auth, Port: 9301, Admin: true, Why: "admin"},
	{From: Vulnscanctl, To: Findings, Port: 9304, Admin: true, Why: "admin"},

	{From: DBRoles, To: Postgres, Port: 5432, Why: "provision roles"},

	{From: AllPods, To: DNS, Port: 53},
	{From: AllProcs, To: Telemetry, Port: 4317, Why: "OTLP gRPC"},
	{From: AllProcs, To: Telemetry, Port: 4318, Why: "OTLP HTTP"},
}

// Inbound are the connections from outside the namespace: API clients to the
// gateway, and Prometheus to every process's metrics port.
func Inbound() []Edge {
	out := []Edge{{From: Clients, To: Gateway, Port: Listen[Gateway].HTTP, Why: "HTTPS /v1"}}
	for _, p := range Processes {
		out = append(out, Edge{From: Monitoring, To: p, Port: Listen[p].Metrics, Why: "scrape /metrics"})
	}
	return out
}

// IsProcess reports whether name is a vulnscan process or job (not a store or
// pseudo-node).
func IsProcess(name string) bool {
	return slices.Contains(Processes, name) || name == Vulnscanctl || name == DBRoles
}

// GRPCEdges are the edges between processes (gRPC calls).
func GRPCEdges() []Edge {
	var out []Edge
	for _, e := range Edges {
		if IsProcess(e.From) && IsProcess(e.To) {
			out = append(out, e)
		}
	}
	return out
}

// Allows reports whether a process holding the certificate identity may call
// the gRPC service called service (on its main or admin listener): whether
// the table lists an edge from one of the identity's processes to the
// process serving service.
func Allows(identity, service string) bool {
	to, ok := ServiceProcess[service]
	if !ok {
		return false
	}
	for _, from := range Identities[identity] {
		for _, e := range Edges {
			if e.From == from && e.To == to {
				return true
			}
		}
	}
	return false
}

// Strings renders edges as sorted, de-duplicated "from>to:port".
func Strings(edges []Edge) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range edges {
		if s := e.String(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// Mermaid renders the graph as a Mermaid flowchart: every edge with its port
// and purpose, processes as boxes, stores as cylinders. Telemetry, DNS and
// the metrics scrapes, which every process has, are summarised in one line
// each instead of one arrow per process.
func Mermaid() string {
	label := map[string]string{
		Clients: "([API clients])", Gateway: "[gateway]", Auth: "[auth]", Estimation: "[estimation]",
		ScanAPI: "[scan-api]", ScanWorker: "[scan-worker]", Findings: "[findings]",
		Vulnscanctl: "([vulnscanctl<br/>operator])", DBRoles: "[[dbroles Job]]",
		Postgres: "[(PostgreSQL)]", Redis: "[(Redis)]", Internet: "((public internet))",
	}
	id := func(n string) string { return strings.ReplaceAll(n, "-", "_") }
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	declared := map[string]bool{}
	node := func(n string) string {
		if declared[n] {
			return id(n)
		}
		declared[n] = true
		return id(n) + label[n]
	}
	write := func(e Edge) {
		arrow := "-->"
		if e.Admin {
			arrow = "-.->"
		}
		port := "any port"
		if e.Port != AnyPort {
			port = fmt.Sprintf(":%d", e.Port)
		}
		text := port
		if e.Why != "" {
			text = e.Why + " " + port
		}
		fmt.Fprintf(&b, "    %s %s|%q| %s\n", node(e.From), arrow, text, node(e.To))
	}
	for _, e := range Inbound() {
		if e.From == Clients {
			write(e)
		}
	}
	for _, e := range Edges {
		if e.To == DNS || e.To == Telemetry {
			continue
		}
		write(e)
	}
	b.WriteString("    %% Every process also resolves names (DNS :53), exports traces to the\n")
	b.WriteString("    %% OpenTelemetry collector (:4317, :4318) and is scraped by Prometheus on\n")
	b.WriteString("    %% its metrics port from the monitoring namespace.\n")
	return b.String()
}

// Table renders the edges between vulnscan processes, stores and the outside
// as a Markdown table, one row per edge.
func Table() string {
	var b strings.Builder
	b.WriteString("| from | to | port | for |\n|---|---|---|---|\n")
	port := func(p int) string {
		if p == AnyPort {
			return "any"
		}
		return fmt.Sprint(p)
	}
	for _, e := range append(Inbound(), Edges...) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", e.From, e.To, port(e.Port), e.Why)
	}
	return b.String()
}
