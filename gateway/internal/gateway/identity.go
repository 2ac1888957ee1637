package gateway

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/vulnscan/vulnscan/pkg/principal"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
)

// withIdentity adds to an outgoing call the token asserting the request's
// authenticated caller, signed for this call's method (the Signer reuses it
// for the same caller and method until shortly before it expires). Only a
// request whose API key was just authenticated has a principal, so a revoked
// key gets no token once the key cache refuses it. Calls made before
// authentication (VerifyAPIKey, health checks) carry none.
func withIdentity(ctx context.Context, s *principal.Signer, method string) (context.Context, error) {
	p, ok := principalFrom(ctx)
	if !ok {
		return ctx, nil
	}
	tok, err := s.Token(p, method)
	if err != nil {
		return ctx, err
	}
	return metadata.AppendToOutgoingContext(ctx, principal.MetadataKey, tok), nil
}

func signUnary(s *principal.Signer) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		ctx, err := withIdentity(ctx, s, method)
		if err != nil {
			return err
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}

func signStream(s *principal.Signer) grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		ctx, err := withIdentity(ctx, s, method)
		if err != nil {
			return nil, err
		}
		return streamer(ctx, desc, cc, method, opts...)
	}
}

// forgetOnRevoke calls forget with the caller's organization once a key
// revocation made through this replica has succeeded, before its answer
// goes back: the auth service has written the revocation to Redis (or,
// when Redis is down, holds it in its database) by then, so the replica's
// next lookup of a revoked key sees it. The announcement on Redis evicts
// the revoked keys on every replica, this one included, but a client's
// next request could reach this replica before the announcement does.
// Forgetting the organization's cached keys (a lookup in Redis each, once)
// makes the revocation immediate here whatever the timing: the revoked key
// and every key it created, which it revokes too, are keys of the caller's
// organization, and the request does not name the latter. Other
// organizations' keys stay cached. Without a caller, which an
// authenticated revocation always has, every key is forgotten.
func forgetOnRevoke(forget func(orgID string)) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if err == nil && method == authv1.AuthService_RevokeAPIKey_FullMethodName {
			p, _ := principalFrom(ctx)
			forget(p.OrgID)
		}
		return err
	}
}
