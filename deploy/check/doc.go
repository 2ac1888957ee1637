// Package check renders every kustomize overlay of the deployment and verifies
// the invariants the manifests promise: hardened pods, probes, resources,
// per-process Services, ServiceAccounts, autoscalers and disruption budgets,
// a deny-all network policy with one allow rule per real edge, secrets only by
// reference, one database role per service provisioned by a Job that alone
// sees the administrator URL, and multi-stage distroless Dockerfiles.
package check
