package ctl

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
)

func admin(e *Env) authv1.AuthAdminServiceClient {
	return authv1.NewAuthAdminServiceClient(e.conn("auth"))
}

func tsOrNil(t *timestamppb.Timestamp) any {
	if t == nil {
		return nil
	}
	return t.AsTime().UTC().Format(time.RFC3339Nano)
}

func init() {
	Register(
		Command{Group: "org", Verb: "create", Usage: "--name NAME [--credits N] [--verification auto|manual]",
			Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
				name := fs.String("name", "", "organization name")
				credits := fs.Int("credits", 0, "opening credit balance")
				mode := fs.String("verification", "auto", "finding verification mode: auto or manual")
				if err := Parse(fs, args, "name"); err != nil {
					return nil, err
				}
				r, err := admin(e).CreateOrganization(ctx, &authv1.CreateOrganizationRequest{Name: *name, Credits: int32(*credits), VerificationMode: *mode})
				if err != nil {
					return nil, err
				}
				return map[string]any{"org_id": r.GetOrgId(), "user_id": r.GetUserId()}, nil
			}},
		Command{Group: "user", Verb: "create", Usage: "--org ORG --username NAME",
			Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
				org := fs.String("org", "", "organization id")
				username := fs.String("username", "", "user name")
				if err := Parse(fs, args, "org", "username"); err != nil {
					return nil, err
				}
				r, err := admin(e).CreateUser(ctx, &authv1.CreateUserRequest{OrgId: *org, Username: *username})
				if err != nil {
					return nil, err
				}
				return map[string]any{"user_id": r.GetUserId()}, nil
			}},
		Command{Group: "key", Verb: "create", Usage: "--org ORG [--user USER] --scopes read,write [--name N] [--expires-in DURATION]",
			Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
				org := fs.String("org", "", "organization id")
				user := fs.String("user", "", "user id (default: the organization's owner)")
				scopes := fs.String("scopes", "", "comma-separated scopes: read, write")
				name := fs.String("name", "", "key name")
				expiresIn := fs.String("expires-in", "", "lifetime, e.g. 720h or 30d")
				if err := Parse(fs, args, "org", "scopes"); err != nil {
					return nil, err
				}
				req := &authv1.IssueAPIKeyRequest{OrgId: *org, UserId: *user, Name: *name}
				for _, s := range strings.Split(*scopes, ",") {
					if s = strings.TrimSpace(s); s != "" {
						req.Scopes = append(req.Scopes, s)
					}
				}
				if *expiresIn != "" {
					d, err := ParseDuration(*expiresIn)
					if err != nil {
						return nil, fmt.Errorf("--expires-in: %w", err)
					}
					req.ExpiresAt = timestamppb.New(time.Now().Add(d))
				}
				r, err := admin(e).IssueAPIKey(ctx, req)
				if err != nil {
					return nil, err
				}
				return map[string]any{"id": r.GetId(), "key": r.GetKey(), "scopes": r.GetScopes(), "expires_at": tsOrNil(r.GetExpiresAt())}, nil
			}},
		Command{Group: "key", Verb: "revoke", Usage: "--id KEY_ID",
			Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
				id := fs.String("id", "", "key id")
				if err := Parse(fs, args, "id"); err != nil {
					return nil, err
				}
				r, err := admin(e).AdminRevokeAPIKey(ctx, &authv1.AdminRevokeAPIKeyRequest{Id: *id})
				if err != nil {
					return nil, err
				}
				return map[string]any{"id": r.GetId(), "revoked_at": tsOrNil(r.GetRevokedAt())}, nil
			}},
		Command{Group: "credits", Verb: "grant", Usage: "--org ORG --amount N",
			Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
				org := fs.String("org", "", "organization id")
				amount := fs.Int("amount", 0, "credits to add")
				if err := Parse(fs, args, "org", "amount"); err != nil {
					return nil, err
				}
				r, err := admin(e).GrantCredits(ctx, &authv1.GrantCreditsRequest{OrgId: *org, Amount: int32(*amount)})
				if err != nil {
					return nil, err
				}
				return map[string]any{"org_id": r.GetOrgId(), "balance": r.GetBalance()}, nil
			}},
		Command{Group: "credits", Verb: "show", Usage: "--org ORG",
			Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
				org := fs.String("org", "", "organization id")
				if err := Parse(fs, args, "org"); err != nil {
					return nil, err
				}
				r, err := admin(e).GetBalance(ctx, &authv1.GetBalanceRequest{OrgId: *org})
				if err != nil {
					return nil, err
				}
				return map[string]any{"org_id": r.GetOrgId(), "balance": r.GetBalance()}, nil
			}},
		Command{Group: "repo", Verb: "connect", Usage: "--org ORG --url URL [--clone-url URL] [--token-env VAR] [--default-branch B]",
			Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
				org := fs.String("org", "", "organization id")
				url := fs.String("url", "", "repository URL (https)")
				cloneURL := fs.String("clone-url", "", "URL to clone from (default: --url)")
				tokenEnv := fs.String("token-env", "", "environment variable holding the access token")
				branch := fs.String("default-branch", "", "default branch (default: the remote's)")
				if err := Parse(fs, args, "org", "url"); err != nil {
					return nil, err
				}
				token, err := secretFromEnv("token-env", *tokenEnv)
				if err != nil {
					return nil, err
				}
				r, err := admin(e).ConnectRepo(ctx, &authv1.ConnectRepoRequest{OrgId: *org, Url: *url, CloneUrl: *cloneURL, Token: token, DefaultBranch: *branch})
				if err != nil {
					return nil, err
				}
				return map[string]any{"id": r.GetId(), "url": r.GetUrl()}, nil
			}},
	)
}
