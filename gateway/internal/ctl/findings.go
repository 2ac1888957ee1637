package ctl

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/redact"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
)

func findingsIntake(e *Env) findingsv1.FindingsIntakeServiceClient {
	return findingsv1.NewFindingsIntakeServiceClient(e.conn("findings"))
}

func findingsAdmin(e *Env) findingsv1.FindingsAdminServiceClient {
	return findingsv1.NewFindingsAdminServiceClient(e.conn("findings"))
}

// integrationJSON prints an integration without its credentials. The
// service already answers with display URLs; the redaction is repeated here
// so that an older service cannot make the tool print a webhook.
func integrationJSON(i *findingsv1.Integration) map[string]any {
	shown := redact.URL(i.GetUrl())
	if i.GetKind() == "slack" && !strings.HasSuffix(i.GetUrl(), "/"+redact.Mark) {
		shown = redact.Secret(i.GetUrl())
	}
	return map[string]any{"id": i.GetId(), "org_id": i.GetOrgId(), "kind": i.GetKind(), "name": i.GetName(), "url": shown,
		"project": i.GetProject(), "has_token": i.GetHasToken(), "has_secret": i.GetHasSecret(), "created_at": tsOrNil(i.GetCreatedAt()),
		"has_inbound_secret": i.GetHasInboundSecret()}
}

// secretFromEnv reads a secret from the named variable ("" when name is "").
func secretFromEnv(flagName, name string) (string, error) {
	if name == "" {
		return "", nil
	}
	v, ok := lookupEnv(name)
	if !ok || v == "" {
		return "", fmt.Errorf("--%s: variable %s is not set", flagName, name)
	}
	return v, nil
}

// settled is a finding's answer to a verdict.
type settled interface {
	GetId() string
	GetVerificationStatus() string
}

// verdict is the command that settles a finding held in verification
// with decide ("finding approve", "finding reject").
func verdict(verb string, decide func(context.Context, findingsv1.FindingsIntakeServiceClient, string) (settled, error)) Command {
	return Command{Group: "finding", Verb: verb, Usage: "--id ID",
		Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
			id := fs.String("id", "", "finding id")
			if err := Parse(fs, args, "id"); err != nil {
				return nil, err
			}
			r, err := decide(ctx, findingsIntake(e), *id)
			if err != nil {
				return nil, err
			}
			return map[string]any{"id": r.GetId(), "verification_status": r.GetVerificationStatus()}, nil
		}}
}

func init() {
	Register(
		Command{Group: "finding", Verb: "list", Usage: "--scan SCAN | --org ORG [--pending | --include-unverified]",
			Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
				scan := fs.String("scan", "", "scan id: the findings that occurred in this scan")
				org := fs.String("org", "", "organization id: all the organization's findings")
				all := fs.Bool("include-unverified", false, "also list findings in verification and rejected ones")
				pending := fs.Bool("pending", false, "list only findings held in verification, with their confidence and reasons")
				if err := Parse(fs, args); err != nil {
					return nil, err
				}
				if (*scan == "") == (*org == "") {
					return nil, fmt.Errorf("give exactly one of --scan and --org")
				}
				req := &findingsv1.ListFindingsForOperatorRequest{ScanId: *scan, OrgId: *org, IncludeUnverified: *all}
				if *pending {
					req.VerificationStatus = "pending"
				}
				r, err := findingsIntake(e).ListFindingsForOperator(ctx, req)
				if err != nil {
					return nil, err
				}
				data := make([]map[string]any, 0, len(r.GetData()))
				for _, f := range r.GetData() {
					reasons := f.GetReasons()
					if reasons == nil {
						reasons = []string{}
					}
					data = append(data, map[string]any{"id": f.GetId(), "title": f.GetTitle(), "verification_status": f.GetVerificationStatus(),
						"severity": f.GetSeverity(), "state": f.GetState(), "category": f.GetCategory(), "fingerprint": f.GetFingerprint(),
						"affected_file": f.GetAffectedFile(), "start_line": f.GetStartLine(), "found_at": tsOrNil(f.GetFoundAt()),
						"confidence": f.GetConfidence(), "reasons": reasons})
				}
				return map[string]any{"data": data}, nil
			}},
		verdict("approve", func(ctx context.Context, c findingsv1.FindingsIntakeServiceClient, id string) (settled, error) {
			return c.ApproveFinding(ctx, &findingsv1.ApproveFindingRequest{Id: id})
		}),
		verdict("reject", func(ctx context.Context, c findingsv1.FindingsIntakeServiceClient, id string) (settled, error) {
			return c.RejectFinding(ctx, &findingsv1.RejectFindingRequest{Id: id})
		}),
		Command{Group: "integration", Verb: "add",
			Usage: "--org ORG --kind github|slack|jira|linear --url URL [--name N] [--project KEY] [--token-env VAR] [--secret-env VAR] [--inbound-secret-env VAR]",
			Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
				org := fs.String("org", "", "organization id")
				kind := fs.String("kind", "", "github, slack, jira or linear")
				url := fs.String("url", "", "webhook URL (slack) or API base URL (github, jira, linear)")
				name := fs.String("name", "", "display name (default: the kind)")
				project := fs.String("project", "", "Jira project key or Linear team id")
				tokenEnv := fs.String("token-env", "", "environment variable holding the API token")
				secretEnv := fs.String("secret-env", "", "environment variable holding the HMAC signing secret")
				inboundEnv := fs.String("inbound-secret-env", "", "environment variable holding the secret the git host or chat signs inbound events with (default: generated and printed once)")
				if err := Parse(fs, args, "org", "kind", "url"); err != nil {
					return nil, err
				}
				inboundSecret, err := secretFromEnv("inbound-secret-env", *inboundEnv)
				if err != nil {
					return nil, err
				}
				token, err := secretFromEnv("token-env", *tokenEnv)
				if err != nil {
					return nil, err
				}
				secret, err := secretFromEnv("secret-env", *secretEnv)
				if err != nil {
					return nil, err
				}
				r, err := findingsAdmin(e).AddIntegration(ctx, &findingsv1.AddIntegrationRequest{OrgId: *org, Kind: *kind, Url: *url, Name: *name,
					Project: *project, Token: token, Secret: secret, InboundSecret: inboundSecret})
				if err != nil {
					return nil, err
				}
				out := integrationJSON(r.GetIntegration())
				if r.GetInboundSecret() != "" && *inboundEnv == "" {
					out["inbound_secret"] = r.GetInboundSecret() // generated: shown only here
				}
				return out, nil
			}},
		Command{Group: "integration", Verb: "list", Usage: "--org ORG",
			Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
				org := fs.String("org", "", "organization id")
				if err := Parse(fs, args, "org"); err != nil {
					return nil, err
				}
				r, err := findingsAdmin(e).ListIntegrations(ctx, &findingsv1.ListIntegrationsRequest{OrgId: *org})
				if err != nil {
					return nil, err
				}
				data := make([]map[string]any, 0, len(r.GetData()))
				for _, i := range r.GetData() {
					data = append(data, integrationJSON(i))
				}
				return map[string]any{"data": data}, nil
			}},
		Command{Group: "integration", Verb: "map-user", Usage: "--id INTEGRATION --external-user LOGIN_OR_ID --user USER",
			Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
				id := fs.String("id", "", "integration id (github or slack)")
				ext := fs.String("external-user", "", "git host login or chat user id")
				user := fs.String("user", "", "user id in the integration's organization")
				if err := Parse(fs, args, "id", "external-user", "user"); err != nil {
					return nil, err
				}
				r, err := findingsAdmin(e).MapIntegrationUser(ctx, &findingsv1.MapIntegrationUserRequest{IntegrationId: *id, ExternalUser: *ext, UserId: *user})
				if err != nil {
					return nil, err
				}
				return map[string]any{"integration_id": r.GetIntegrationId(), "external_user": r.GetExternalUser(), "user_id": r.GetUserId(),
					"username": r.GetUsername()}, nil
			}},
		Command{Group: "integration", Verb: "remove", Usage: "--id ID",
			Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
				id := fs.String("id", "", "integration id")
				if err := Parse(fs, args, "id"); err != nil {
					return nil, err
				}
				r, err := findingsAdmin(e).RemoveIntegration(ctx, &findingsv1.RemoveIntegrationRequest{Id: *id})
				if err != nil {
					return nil, err
				}
				return map[string]any{"id": r.GetId(), "removed_at": tsOrNil(r.GetRemovedAt())}, nil
			}},
	)
}
