// Package principal carries the authenticated caller from the gateway to the
// services. The gateway verifies the API key and forwards the key's
// organization, user, key id and scopes as gRPC metadata; services read them
// with From. Services are reachable only from the gateway and each other
// (see deploy/ network policies); they never accept an organization from a
// request body.
package principal

import (
	"context"
	"slices"
	"strings"

	"google.golang.org/grpc/metadata"

	"github.com/vulnscan/vulnscan/pkg/apierr"
)

// Metadata keys set by the gateway.
const (
	KeyOrgID  = "x-vulnscan-org-id"
	KeyUserID = "x-vulnscan-user-id"
	KeyKeyID  = "x-vulnscan-key-id"
	KeyScopes = "x-vulnscan-scopes"
)

// Scopes.
const (
	ScopeRead  = "read"
	ScopeWrite = "write"
)

// Principal is the caller of a public RPC.
type Principal struct {
	OrgID  string
	UserID string
	KeyID  string
	Scopes []string
}

// Has reports whether the principal holds scope; write includes read.
func (p Principal) Has(scope string) bool {
	return HasScope(p.Scopes, scope)
}

// HasScope reports whether scopes grant scope; write includes read.
func HasScope(scopes []string, scope string) bool {
	if slices.Contains(scopes, scope) {
		return true
	}
	return scope == ScopeRead && slices.Contains(scopes, ScopeWrite)
}

// Metadata renders p as gRPC metadata pairs.
func (p Principal) Metadata() metadata.MD {
	return metadata.Pairs(KeyOrgID, p.OrgID, KeyUserID, p.UserID, KeyKeyID, p.KeyID, KeyScopes, strings.Join(p.Scopes, ","))
}

// From returns the principal of an incoming public RPC, or a 401 error when
// the call did not come through the gateway's authentication.
func From(ctx context.Context) (Principal, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	get := func(k string) string {
		if v := md.Get(k); len(v) == 1 {
			return v[0]
		}
		return ""
	}
	p := Principal{OrgID: get(KeyOrgID), UserID: get(KeyUserID), KeyID: get(KeyKeyID)}
	if s := get(KeyScopes); s != "" {
		p.Scopes = strings.Split(s, ",")
	}
	if p.OrgID == "" || p.UserID == "" {
		return Principal{}, apierr.Unauthenticated("Missing API key")
	}
	return p, nil
}

// NewOutgoing returns ctx with p attached for a call to another service.
func NewOutgoing(ctx context.Context, p Principal) context.Context {
	return metadata.NewOutgoingContext(ctx, p.Metadata())
}
