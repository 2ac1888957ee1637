// Package plane is the internal plane's authorization: which identity may
// call which method of which service, on which listener, enforced by
// pkg/server's guard. Nothing is allowed unless listed here. The process
// edges these lists grant must be exactly pkg/topology's gRPC edges (the
// table the network policies and the architecture diagram come from), which
// TestPolicyEdgesMatchTopology checks.
package plane

import (
	"fmt"

	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/server"
)

const (
	authPublic       = "/vulnscan.auth.v1.AuthService/"
	authInternal     = "/vulnscan.auth.v1.AuthInternalService/"
	authAdmin        = "/vulnscan.auth.v1.AuthAdminService/"
	estPublic        = "/vulnscan.estimation.v1.EstimationService/"
	estUpload        = "/vulnscan.estimation.v1.UploadService/"
	estInternal      = "/vulnscan.estimation.v1.EstimationInternalService/"
	scanPublic       = "/vulnscan.scan.v1.ScanService/"
	findingsPublic   = "/vulnscan.findings.v1.FindingsService/"
	findingsIntake   = "/vulnscan.findings.v1.FindingsIntakeService/"
	findingsAdminSvc = "/vulnscan.findings.v1.FindingsAdminService/"
	webhookPublic    = "/vulnscan.findings.v1.WebhookService/"
	webhookEvents    = "/vulnscan.findings.v1.WebhookEventService/"
	webhookAdmin     = "/vulnscan.findings.v1.WebhookAdminService/"
	findingsInbound  = "/vulnscan.findings.v1.FindingsInboundService/"
)

// Policies are the allow-lists of each service's main listener. The gateway
// reaches only the public, per-tenant services (plus VerifyAPIKey); every
// internal method is open to the one service that needs it.
var Policies = map[string]server.Policy{
	mtls.Auth: {
		authPublic:                        {mtls.Gateway},
		authInternal + "VerifyAPIKey":     {mtls.Gateway},
		authInternal + "DebitCredits":     {mtls.Scan},
		authInternal + "RefundCredits":    {mtls.Scan},
		authInternal + "GetConnectedRepo": {mtls.Estimation},
		authInternal + "GetOrganization":  {mtls.Findings},
		authInternal + "GetUser":          {mtls.Findings},
	},
	mtls.Estimation: {
		estPublic:   {mtls.Gateway},
		estUpload:   {mtls.Gateway},
		estInternal: {mtls.Scan},
	},
	mtls.Scan: {
		scanPublic: {mtls.Gateway},
	},
	mtls.Findings: {
		findingsPublic:                      {mtls.Gateway},
		findingsIntake + "RegisterScan":     {mtls.Scan},
		findingsIntake + "ReportFindings":   {mtls.Scan},
		findingsIntake + "GetScanSummaries": {mtls.Scan},
		webhookPublic:                       {mtls.Gateway},
		webhookEvents + "PublishEvent":      {mtls.Scan, mtls.Estimation},
		findingsIntake + "CompleteScan":     {mtls.Scan},
		// Integrations' signed inbound events, forwarded by the gateway
		// without a tenant identity (the signature authenticates them).
		findingsInbound + "HandleEvent": {mtls.Gateway},
	},
}

// AdminPolicies are the allow-lists of the admin listeners: the operator
// identity (vulnscanctl) only. Operator methods that read across
// organizations (findings by scan id, approvals) are here too.
var AdminPolicies = map[string]server.Policy{
	mtls.Auth: {
		authAdmin: {mtls.Operator},
	},
	mtls.Findings: {
		findingsAdminSvc:                           {mtls.Operator},
		findingsIntake + "ApproveFinding":          {mtls.Operator},
		findingsIntake + "RejectFinding":           {mtls.Operator},
		findingsIntake + "ListFindingsForOperator": {mtls.Operator},
		webhookAdmin:                               {mtls.Operator},
	},
}

// Security loads the identity of the service called name and returns its
// listeners' security: its certificate, the gateway's verification keys and
// its policies.
func Security(env *config.Env, name string, c config.Common) (server.Security, *mtls.Identity, error) {
	id, err := mtls.LoadFromEnv(env, name)
	if err != nil {
		return server.Security{}, nil, fmt.Errorf("%s identity: %w", name, err)
	}
	v, err := principal.VerifierFromEnv(env)
	if err != nil {
		return server.Security{}, nil, err
	}
	sec := server.Security{Identity: id, Verifier: v, Policy: Policies[name]}
	if ap, ok := AdminPolicies[name]; ok {
		sec.AdminAddr, sec.AdminPolicy = c.AdminListen, ap
	}
	return sec, id, nil
}
