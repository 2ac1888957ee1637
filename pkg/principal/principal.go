// Package principal carries the authenticated tenant caller from the gateway
// to the services. The gateway verifies the API key and sends the key's
// organization, user, key id and scopes as a short-lived token it signs
// (token.go), bound to the gRPC method it calls. A service's
// interceptor (pkg/server) verifies the token and attaches the principal to
// the context; handlers read it with From. Raw x-vulnscan-* metadata carries
// no authority at all: From never reads metadata, so a caller that can reach
// a service port but holds no valid token is a caller without a tenant.
package principal

import (
	"context"
	"slices"

	"github.com/vulnscan/vulnscan/pkg/apierr"
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

type ctxKey struct{}

// With returns ctx carrying p, a principal whose token has been verified.
func With(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// From returns the verified principal of an incoming public RPC, or a 401
// error when the call carried no valid gateway-signed token.
func From(ctx context.Context) (Principal, error) {
	p, ok := ctx.Value(ctxKey{}).(Principal)
	if !ok || p.OrgID == "" || p.UserID == "" {
		return Principal{}, apierr.Unauthenticated("Missing API key")
	}
	return p, nil
}
