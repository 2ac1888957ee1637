package server

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/principal"
)

// Policy is a listener's allow-list: which caller identities (the
// spiffe://vulnscan/<name> of their client certificate) may call which
// methods. A key is a full method ("/pkg.Service/Method") or a whole service
// ("/pkg.Service/"). Anything not listed is refused, except the gRPC health
// service, which every authenticated identity may query.
type Policy map[string][]string

// Allows reports whether caller may call fullMethod.
func (p Policy) Allows(caller, fullMethod string) bool {
	if strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/") {
		return true
	}
	if contains(p[fullMethod], caller) {
		return true
	}
	if i := strings.LastIndex(fullMethod, "/"); i > 0 {
		return contains(p[fullMethod[:i+1]], caller)
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// guard authenticates and authorizes one call: the caller's certificate
// identity must be allowed to call the method, and a tenant identity, when
// the call carries one, must be a valid, unexpired gateway-signed token for
// this method (and request id, when it names one). The verified principal is attached to the context; raw x-vulnscan-*
// metadata is never read.
type guard struct {
	policy   Policy
	verifier *principal.Verifier
}

func (g guard) check(ctx context.Context, method string) (context.Context, error) {
	caller, ok := mtls.Caller(ctx)
	if !ok {
		return ctx, status.Error(codes.Unauthenticated, "a verified client certificate is required")
	}
	if !g.policy.Allows(caller, method) {
		return ctx, status.Errorf(codes.PermissionDenied, "identity %q may not call %s", caller, method)
	}
	toks := metadata.ValueFromIncomingContext(ctx, principal.MetadataKey)
	if len(toks) == 0 {
		return ctx, nil
	}
	if len(toks) > 1 || g.verifier == nil {
		return ctx, status.Error(codes.Unauthenticated, "invalid identity token")
	}
	// The first request id is the one the request-id interceptor adopts.
	rid := ""
	if v := metadata.ValueFromIncomingContext(ctx, RequestIDKey); len(v) > 0 {
		rid = v[0]
	}
	p, err := g.verifier.Verify(toks[0], rid, method)
	if err != nil {
		return ctx, status.Error(codes.Unauthenticated, err.Error())
	}
	return principal.With(ctx, p), nil
}

// The method checked is the one on the wire (grpc.Method), not the
// handler's own idea of its name.
func (g guard) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	method, ok := grpc.Method(ctx)
	if !ok {
		method = info.FullMethod
	}
	ctx, err := g.check(ctx, method)
	if err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (g guard) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	method, ok := grpc.MethodFromServerStream(ss)
	if !ok {
		method = info.FullMethod
	}
	ctx, err := g.check(ss.Context(), method)
	if err != nil {
		return err
	}
	return h(srv, withContext(ss, ctx))
}

type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }
