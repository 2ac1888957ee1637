package server

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/vulnscan/vulnscan/pkg/validate"
)

// Requests whose strings no service can carry or store (see validate.Text)
// are refused with a 400 naming the field, on both sides of a call:
//
//   - a service refuses them as it receives them (textInterceptor,
//     textStreamInterceptor), behind the authorization guard, so a NUL in a
//     reason, a comment or a reported snippet never reaches PostgreSQL as a
//     driver error (an internal error, retried by workers for ever);
//   - a caller refuses them before they leave (CheckText, CheckTextStream,
//     on every connection Dial opens), because protobuf cannot marshal a
//     string that is not UTF-8: the call would fail in the caller as an
//     internal error naming no field. So a query parameter, path segment or
//     body field of such bytes answers the gateway's caller the spec's 400
//     rather than a 500, and a worker learns which field it sent.

func textInterceptor(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := checkText(req); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func textStreamInterceptor(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return h(srv, &textServerStream{ServerStream: ss})
}

// textServerStream checks each message the client sends.
type textServerStream struct{ grpc.ServerStream }

func (s *textServerStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return checkText(m)
}

// CheckText is a client interceptor that refuses a request validate.Text
// refuses, before it is marshalled.
func CheckText(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if err := checkText(req); err != nil {
		return err
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// CheckTextStream is CheckText for the messages a client stream sends.
func CheckTextStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, err
	}
	return &textClientStream{ClientStream: cs}, nil
}

type textClientStream struct{ grpc.ClientStream }

func (s *textClientStream) SendMsg(m any) error {
	if err := checkText(m); err != nil {
		return err
	}
	return s.ClientStream.SendMsg(m)
}

// checkText applies validate.Text to a protobuf message; the error is the
// apierr's gRPC status.
func checkText(m any) error {
	pm, ok := m.(proto.Message)
	if !ok {
		return nil
	}
	if err := validate.Text(pm); err != nil {
		return translate(context.Background(), nil, err)
	}
	return nil
}
