// Package ctl implements vulnscanctl, the operators' command line. Each
// command calls a service's gRPC API and prints exactly one JSON object on
// stdout; failures print a message on stderr and exit non-zero.
package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/server"
)

// Command is one "group verb" command.
type Command struct {
	Group, Verb string
	Usage       string
	// Run parses args with fs (already holding the address flags) and returns
	// the value printed as JSON.
	Run func(ctx context.Context, env *Env, fs *flag.FlagSet, args []string) (any, error)
}

var commands []Command

// Register adds commands; each file of this package registers its own.
func Register(cs ...Command) { commands = append(commands, cs...) }

// Env gives commands their service connections.
type Env struct {
	addrs map[string]*string
	conns map[string]*grpc.ClientConn
	env   *config.Env
	id    *mtls.Identity
}

// Conn returns a connection to the named service ("auth", "findings", …).
func (e *Env) Conn(service string) (*grpc.ClientConn, error) {
	if cc, ok := e.conns[service]; ok {
		return cc, nil
	}
	if e.id == nil {
		// The operator identity: by default the certificate `make run`
		// writes under .data/pki (VULNSCAN_PKI_DIR, VULNSCAN_TLS_* override).
		id, err := mtls.LoadFromEnv(e.env, mtls.Operator)
		if err != nil {
			return nil, fmt.Errorf("operator identity: %w", err)
		}
		e.id = id
	}
	cc, err := server.Dial(*e.addrs[service], e.id, service)
	if err != nil {
		return nil, err
	}
	e.conns[service] = cc
	return cc, nil
}

// conn is Conn for a command's one call: when no connection can be made
// (no operator identity, a bad address), the call itself fails with the
// reason, so every command reports it alike.
func (e *Env) conn(service string) grpc.ClientConnInterface {
	cc, err := e.Conn(service)
	if err != nil {
		return brokenConn{err}
	}
	return cc
}

// brokenConn is a connection that could not be made: every call fails with why.
type brokenConn struct{ err error }

func (b brokenConn) Invoke(context.Context, string, any, any, ...grpc.CallOption) error { return b.err }

func (b brokenConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, b.err
}

// Main runs vulnscanctl with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// Help asked for goes to stdout with exit 0; help shown because the
	// command line is incomplete or wrong goes to stderr with exit 2.
	switch {
	case len(args) == 0:
		usage(stderr)
		return 2
	case args[0] == "help" || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "--help-all":
		if len(args) > 1 && hasGroup(args[1]) {
			groupUsage(stdout, args[1])
		} else {
			usage(stdout)
		}
		return 0
	case args[0] == "version" || args[0] == "--version":
		return printJSON(stdout, stderr, versionInfo())
	case !hasGroup(args[0]):
		fmt.Fprintf(stderr, "vulnscanctl: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	case len(args) == 1:
		fmt.Fprintf(stderr, "vulnscanctl %s: a verb is required\n\n", args[0])
		groupUsage(stderr, args[0])
		return 2
	}
	if h, _ := wantsHelp(args[1:2]); h {
		groupUsage(stdout, args[0])
		return 0
	}
	var cmd *Command
	for i := range commands {
		if commands[i].Group == args[0] && commands[i].Verb == args[1] {
			cmd = &commands[i]
		}
	}
	if cmd == nil {
		fmt.Fprintf(stderr, "vulnscanctl: unknown command %q\n\n", strings.Join(args[:2], " "))
		groupUsage(stderr, args[0])
		return 2
	}
	fs := flag.NewFlagSet(cmd.Group+" "+cmd.Verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // Main reports parse errors itself
	env := config.FromOS()
	// vulnscanctl calls only admin APIs of auth and findings, which listen
	// on their own ports: --auth-addr and --findings-addr name those.
	e := &Env{env: env, addrs: map[string]*string{
		"auth":     fs.String("auth-addr", env.String("AUTH_ADMIN_GRPC_ADDR", config.DefaultAuthAdminAddr), "auth service admin gRPC address"),
		"findings": fs.String("findings-addr", env.String("FINDINGS_ADMIN_GRPC_ADDR", config.DefaultFindingsAdminAddr), "findings service admin gRPC address"),
	}, conns: map[string]*grpc.ClientConn{}}
	defer func() {
		for _, cc := range e.conns {
			_ = cc.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := cmd.Run(ctx, e, fs, args[2:])
	if h, ok := asHelp(err); ok {
		commandUsage(stdout, cmd, fs, h)
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "vulnscanctl:", describe(err))
		var u usageError
		if errors.As(err, &u) {
			fmt.Fprintf(stderr, "usage: vulnscanctl %s %s %s (--help for flags and examples)\n", cmd.Group, cmd.Verb, cmd.Usage)
			return 2
		}
		return 1
	}
	return printJSON(stdout, stderr, out)
}

// usageError is a mistake in the command line (exit 2), as opposed to an
// answer of a service (exit 1).
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

func printJSON(stdout, stderr io.Writer, out any) int {
	enc := json.NewEncoder(stdout)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(stderr, "vulnscanctl:", err)
		return 1
	}
	return 0
}

func describe(err error) string {
	if st, ok := status.FromError(err); ok {
		return fmt.Sprintf("%s (%s)", st.Message(), st.Code())
	}
	return err.Error()
}

// Parse parses args and checks that required flags were given.
//
// When args ask for help it returns a *helpRequest naming the required
// flags, which Main renders; a mistake is a usageError.
func Parse(fs *flag.FlagSet, args []string, required ...string) error {
	if help, all := wantsHelp(args); help {
		return &helpRequest{required: required, all: all}
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, r := range required {
		if !set[r] {
			return usageError{fmt.Errorf("--%s is required", r)}
		}
	}
	return nil
}

// ParseDuration accepts Go durations plus a day suffix ("30d").
func ParseDuration(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	return d, nil
}

// Stdin-free environment access for commands that read secrets from variables.
var lookupEnv = os.LookupEnv
