package ctl

import (
	"context"
	"flag"

	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
)

func init() {
	docs["org list"] = doc{"List every organization with its verification mode and credit balance.",
		[]string{"vulnscanctl org list"}}
	docs["key list"] = doc{"List an organization's API keys, revoked ones included; never the keys themselves.",
		[]string{"vulnscanctl key list --org ORG_ID"}}
	Register(
		Command{Group: "org", Verb: "list", Usage: "",
			Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
				if err := Parse(fs, args); err != nil {
					return nil, err
				}
				r, err := admin(e).ListOrganizations(ctx, &authv1.ListOrganizationsRequest{})
				if err != nil {
					return nil, err
				}
				data := make([]map[string]any, 0, len(r.GetData()))
				for _, o := range r.GetData() {
					data = append(data, map[string]any{"org_id": o.GetId(), "name": o.GetName(), "verification_mode": o.GetVerificationMode(),
						"balance": o.GetBalance(), "created_at": tsOrNil(o.GetCreatedAt())})
				}
				return map[string]any{"data": data, "total": r.GetTotal()}, nil
			}},
		Command{Group: "key", Verb: "list", Usage: "--org ORG",
			Run: func(ctx context.Context, e *Env, fs *flag.FlagSet, args []string) (any, error) {
				org := fs.String("org", "", "organization id")
				if err := Parse(fs, args, "org"); err != nil {
					return nil, err
				}
				r, err := admin(e).AdminListAPIKeys(ctx, &authv1.AdminListAPIKeysRequest{OrgId: *org})
				if err != nil {
					return nil, err
				}
				data := make([]map[string]any, 0, len(r.GetData()))
				for _, k := range r.GetData() {
					data = append(data, map[string]any{"id": k.GetId(), "name": k.GetName(), "prefix": k.GetPrefix(), "scopes": k.GetScopes(),
						"user_id": k.GetUserId(), "created_at": tsOrNil(k.GetCreatedAt()), "expires_at": tsOrNil(k.GetExpiresAt()),
						"revoked_at": tsOrNil(k.GetRevokedAt())})
				}
				return map[string]any{"data": data, "total": r.GetTotal()}, nil
			}},
	)
}
