package check

import (
	"fmt"
	"net/netip"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/vulnscan/vulnscan/pkg/topology"
)

func metaSelector(s *metav1.LabelSelector) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(s)
}

// storePort is where each store listens, from the topology table.
var storePort = topology.StorePorts

// realEdges are the connections the system makes, as "from>to:port" ("*" for
// any port): pkg/topology's table. Pseudo-nodes: internet (public addresses
// only), dns, telemetry (OpenTelemetry collector), vulnscan (every process),
// * (every pod).
func realEdges() []string { return topology.Strings(topology.Edges) }

// privateRanges must be excluded wherever the internet is allowed.
var privateRanges = []string{
	"10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16",
	"fc00::/7", "fe80::/10",
}

// TestNetworkPolicies: deny-all, then exactly one allow rule per real edge,
// allowed on both ends when both ends are in the cluster.
func TestNetworkPolicies(t *testing.T) {
	t.Parallel()
	everyOverlay(t, func(t *testing.T, r *rendered) {
		deny, ok := r.policies["deny-all"]
		require.True(t, ok, "no deny-all NetworkPolicy")
		require.Empty(t, deny.Spec.PodSelector.MatchLabels)
		require.Empty(t, deny.Spec.PodSelector.MatchExpressions)
		require.ElementsMatch(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}, deny.Spec.PolicyTypes)
		require.Empty(t, deny.Spec.Ingress)
		require.Empty(t, deny.Spec.Egress)

		inCluster := map[string]bool{}
		for _, p := range processes {
			inCluster[p] = true
		}
		for s := range storePort {
			if _, ok := r.statefulSets[s]; ok {
				inCluster[s] = true
			}
		}

		var egress, ingress []string
		for _, name := range sortedKeys(r.policies) {
			np := r.policies[name]
			subject := policySubject(t, np)
			types := map[networkingv1.PolicyType]bool{}
			for _, pt := range np.Spec.PolicyTypes {
				types[pt] = true
			}
			require.True(t, len(np.Spec.Egress) == 0 || types[networkingv1.PolicyTypeEgress], "%s: egress rules without policyType Egress", name)
			require.True(t, len(np.Spec.Ingress) == 0 || types[networkingv1.PolicyTypeIngress], "%s: ingress rules without policyType Ingress", name)
			for _, rule := range np.Spec.Egress {
				require.NotEmpty(t, rule.To, "%s: egress to everywhere", name)
				for _, peer := range rule.To {
					to := egressPeer(t, name, peer, rule.Ports)
					for _, port := range rulePorts(rule.Ports) {
						egress = append(egress, fmt.Sprintf("%s>%s:%s", subject, to, port))
					}
				}
			}
			for _, rule := range np.Spec.Ingress {
				froms := []string{"any"}
				if len(rule.From) > 0 {
					froms = nil
					for _, peer := range rule.From {
						froms = append(froms, ingressPeer(t, name, peer))
					}
				}
				for _, from := range froms {
					for _, port := range rulePorts(rule.Ports) {
						ingress = append(ingress, fmt.Sprintf("%s>%s:%s", from, subject, port))
					}
				}
			}
		}

		want := realEdges()
		require.Equal(t, want, dedupe(egress), "egress rules must be exactly the real edges")

		wantIn := topology.Strings(topology.Inbound())
		for _, e := range want {
			var from, to, port string
			_, err := fmt.Sscanf(replaceSeparators(e), "%s %s %s", &from, &to, &port)
			require.NoError(t, err)
			if inCluster[to] {
				wantIn = append(wantIn, e)
			}
		}
		sort.Strings(wantIn)
		require.Equal(t, wantIn, dedupe(ingress), "ingress rules must be exactly the real edges into the cluster")
	})
}

func replaceSeparators(e string) string {
	b := []byte(e)
	for i, c := range b {
		if c == '>' || c == ':' {
			b[i] = ' '
		}
	}
	return string(b)
}

// policySubject names the pods a policy applies to.
func policySubject(t *testing.T, np *networkingv1.NetworkPolicy) string {
	t.Helper()
	sel := np.Spec.PodSelector
	require.Empty(t, sel.MatchExpressions, "%s: use matchLabels", np.Name)
	switch {
	case len(sel.MatchLabels) == 0:
		return "*"
	case len(sel.MatchLabels) == 1 && sel.MatchLabels["app.kubernetes.io/name"] != "":
		return sel.MatchLabels["app.kubernetes.io/name"]
	case len(sel.MatchLabels) == 1 && sel.MatchLabels["app.kubernetes.io/part-of"] == "vulnscan":
		return "vulnscan"
	}
	t.Fatalf("%s: unrecognised podSelector %v", np.Name, sel.MatchLabels)
	return ""
}

func egressPeer(t *testing.T, policy string, peer networkingv1.NetworkPolicyPeer, ports []networkingv1.NetworkPolicyPort) string {
	t.Helper()
	switch {
	case peer.IPBlock != nil:
		prefix, err := netip.ParsePrefix(peer.IPBlock.CIDR)
		require.NoError(t, err, "%s: cidr", policy)
		if prefix.Bits() == 0 {
			require.ElementsMatch(t, privateFor(prefix), peer.IPBlock.Except,
				"%s: internet egress must exclude every private range", policy)
			return "internet"
		}
		require.Empty(t, peer.IPBlock.Except, policy)
		require.True(t, prefix.Addr().IsPrivate(), "%s: store network %s should be private", policy, prefix)
		require.Len(t, ports, 1, "%s: store egress on one port", policy)
		for store, port := range storePort {
			if ports[0].Port.IntValue() == port {
				return store
			}
		}
		t.Fatalf("%s: ipBlock %s on an unknown port", policy, prefix)
	case peer.NamespaceSelector != nil:
		ns := peer.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"]
		switch {
		case ns == "kube-system" && peer.PodSelector != nil && peer.PodSelector.MatchLabels["k8s-app"] == "kube-dns":
			return "dns"
		case ns == "observability" && peer.PodSelector == nil:
			return "telemetry"
		}
		t.Fatalf("%s: unrecognised egress namespace peer %v", policy, peer)
	case peer.PodSelector != nil:
		return podPeer(t, policy, peer)
	}
	t.Fatalf("%s: empty egress peer", policy)
	return ""
}

func ingressPeer(t *testing.T, policy string, peer networkingv1.NetworkPolicyPeer) string {
	t.Helper()
	require.Nil(t, peer.IPBlock, "%s: ingress from an ipBlock", policy)
	if peer.NamespaceSelector != nil {
		require.Nil(t, peer.PodSelector, policy)
		require.Equal(t, "monitoring", peer.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"],
			"%s: only the monitoring namespace reaches in", policy)
		return "monitoring"
	}
	return podPeer(t, policy, peer)
}

func podPeer(t *testing.T, policy string, peer networkingv1.NetworkPolicyPeer) string {
	t.Helper()
	sel := peer.PodSelector
	require.Empty(t, sel.MatchExpressions, policy)
	require.Len(t, sel.MatchLabels, 1, "%s: peer %v", policy, sel.MatchLabels)
	name := sel.MatchLabels["app.kubernetes.io/name"]
	require.NotEmpty(t, name, "%s: peer %v", policy, sel.MatchLabels)
	return name
}

func privateFor(p netip.Prefix) []string {
	var out []string
	for _, r := range privateRanges {
		if netip.MustParsePrefix(r).Addr().Is4() == p.Addr().Is4() {
			out = append(out, r)
		}
	}
	return out
}

func rulePorts(ports []networkingv1.NetworkPolicyPort) []string {
	if len(ports) == 0 {
		return []string{"*"}
	}
	var out []string
	for _, p := range ports {
		if p.Port == nil {
			out = append(out, "*")
			continue
		}
		out = append(out, p.Port.String())
	}
	return out
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
