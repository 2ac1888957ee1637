package check

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// planeSource is the internal plane's one topology table: which identity may
// call which service, on the main or the admin listener. The network
// policies must allow exactly those edges, so a call edge added to the code
// without its network rule (or the reverse) fails here.
const planeSource = "../../pkg/plane/plane.go"

// adminPort is where the services with an admin API serve it.
var adminPort = map[string]int{"auth": 9301, "findings": 9304}

// identityPods are the pods that hold each identity's certificate.
var identityPods = map[string][]string{
	"gateway": {"gateway"}, "auth": {"auth"}, "estimation": {"estimation"}, "findings": {"findings"},
	"scan": {"scan-api", "scan-worker"}, "operator": {"vulnscanctl"},
}

// servicePod is the pod serving a service's gRPC API.
var servicePod = map[string]string{"auth": "auth", "estimation": "estimation", "scan": "scan-api", "findings": "findings"}

// planeEdges reads pkg/plane's Policies and AdminPolicies as "from>to:port".
func planeEdges(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), planeSource, nil, 0)
	require.NoError(t, err)
	var out []string
	found := 0
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if len(vs.Names) != 1 || (vs.Names[0].Name != "Policies" && vs.Names[0].Name != "AdminPolicies") {
				continue
			}
			found++
			admin := vs.Names[0].Name == "AdminPolicies"
			lit, ok := vs.Values[0].(*ast.CompositeLit)
			require.True(t, ok, "%s is not a map literal", vs.Names[0].Name)
			for _, e := range lit.Elts {
				kv := e.(*ast.KeyValueExpr)
				svc := identName(t, kv.Key)
				port := grpcPort[servicePod[svc]]
				if admin {
					port = adminPort[svc]
				}
				require.NotZero(t, port, "no port known for service %s (admin %v)", svc, admin)
				for _, m := range kv.Value.(*ast.CompositeLit).Elts {
					for _, c := range m.(*ast.KeyValueExpr).Value.(*ast.CompositeLit).Elts {
						caller := identName(t, c)
						pods := identityPods[caller]
						require.NotEmpty(t, pods, "unknown identity %s", caller)
						for _, p := range pods {
							out = append(out, fmt.Sprintf("%s>%s:%d", p, servicePod[svc], port))
						}
					}
				}
			}
		}
	}
	require.Equal(t, 2, found, "%s: Policies and AdminPolicies not found", planeSource)
	return dedupe(out)
}

// identName turns mtls.Gateway into "gateway".
func identName(t *testing.T, e ast.Expr) string {
	t.Helper()
	sel, ok := e.(*ast.SelectorExpr)
	require.True(t, ok, "identities in %s must be mtls constants", planeSource)
	return strings.ToLower(sel.Sel.Name)
}

func TestPlaneEdgesAreRead(t *testing.T) {
	t.Parallel()
	edges := planeEdges(t)
	sort.Strings(edges)
	// The edges the report found missing or too wide.
	require.Contains(t, edges, "findings>auth:9101")
	require.Contains(t, edges, "estimation>findings:9104") // webhook events
	require.Contains(t, edges, "vulnscanctl>auth:9301")
	require.NotContains(t, edges, "gateway>auth:9301")
	require.NotContains(t, edges, "scan-worker>findings:9304")
}
