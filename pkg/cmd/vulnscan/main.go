// Command vulnscan is the users' command-line client: it scans a directory or
// a repository from a terminal or a CI job, waits for the result, writes
// SARIF, fails the build on findings at or above a severity, and lists and
// triages findings. `vulnscan scan --local DIR` runs the same engine on the
// machine, with no server. It is configured by VULNSCAN_URL and
// VULNSCAN_API_KEY; `vulnscan help` lists the commands.
//
// Exit codes: 0 success (and, for scans, no open finding at or above
// --fail-on), 1 findings at or above --fail-on, 2 usage error, API error,
// failed estimation or failed scan.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/vulnscan/vulnscan/pkg/client"

	"github.com/vulnscan/vulnscan/pkg/vocab"
)

// Exit codes.
const (
	exitOK       = 0
	exitFindings = 1
	exitError    = 2
)

const defaultURL = "http://127.0.0.1:8080"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], env{getenv: os.Getenv, stdout: os.Stdout, stderr: os.Stderr})
	stop()
	os.Exit(code)
}

// env is what a command sees of the process.
type env struct {
	getenv         func(string) string
	stdout, stderr io.Writer
}

// usageError is a wrong command line: exit 2 with the usage.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// findingsError means the scan found something at or above the threshold.
type findingsError struct{ n int }

func (e findingsError) Error() string {
	return fmt.Sprintf("%d finding(s) at or above the --fail-on severity", e.n)
}

const usage = `vulnscan: scan code for vulnerabilities from a terminal or a CI job

Usage:
  vulnscan scan [DIR | --repo URL [--branch B] [--source connected|public] [--base BRANCH [--base-commit SHA] [--pull-request N]]]
                [--target-url URL]... [--wait] [--fail-on SEVERITY] [--sarif FILE] [--json]
  vulnscan scan --local DIR [--fail-on SEVERITY] [--sarif FILE] [--json]
  vulnscan estimate [DIR | --repo URL [--branch B] [--source connected|public]] [--base BRANCH] [--json]
  vulnscan findings list [--scan ID] [--severity S] [--state S] [--sort-by F] [--sort-order ASC|DESC]
                         [--page N] [--limit N] [--all] [--json]
  vulnscan findings show ID [--json]
  vulnscan findings triage ID [--state S] [--severity S] [--duplicate-of ID|none] [--reason TEXT]
                         [--comment TEXT] [--json]

Environment:
  VULNSCAN_URL      the API, e.g. https://vulnscan.example.com (default ` + defaultURL + `)
  VULNSCAN_API_KEY  an API key (read,write to scan and triage; read to list)
  CI                when "true" (or when stderr is not a terminal) progress is printed as plain lines

Exit codes:
  0  done; for scans: no open finding at or above --fail-on
  1  the scan reported open findings at or above --fail-on
  2  usage error, API error (the API's message is printed), failed estimation or scan
`

func run(ctx context.Context, args []string, e env) int {
	err := dispatch(ctx, args, e)
	var ue usageError
	var fe findingsError
	var ae *client.APIError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		_, _ = fmt.Fprint(e.stdout, usage)
		return exitOK
	case errors.As(err, &fe):
		_, _ = fmt.Fprintln(e.stderr, "vulnscan:", shown(err.Error(), true))
		return exitFindings
	case errors.As(err, &ue):
		_, _ = fmt.Fprintf(e.stderr, "vulnscan: %s\nRun 'vulnscan help' for usage.\n", ue.msg)
		return exitError
	case errors.As(err, &ae):
		_, _ = fmt.Fprintln(e.stderr, "vulnscan: the API answered", shown(ae.Error(), true))
		return exitError
	default:
		// Failures may quote a repository host's or a remote's own
		// message: printed through shown.
		_, _ = fmt.Fprintln(e.stderr, "vulnscan:", shown(err.Error(), true))
		return exitError
	}
}

func dispatch(ctx context.Context, args []string, e env) error {
	if len(args) == 0 {
		return usagef("no command given")
	}
	switch args[0] {
	case "help", "-h", "--help", "-help":
		return flag.ErrHelp
	case "scan":
		return scanCmd(ctx, args[1:], e)
	case "estimate":
		return estimateCmd(ctx, args[1:], e)
	case "findings":
		if len(args) < 2 {
			return usagef("findings needs a subcommand: list, show or triage")
		}
		switch args[1] {
		case "list":
			return findingsList(ctx, args[2:], e)
		case "show":
			return findingsShow(ctx, args[2:], e)
		case "triage":
			return findingsTriage(ctx, args[2:], e)
		}
		return usagef("unknown findings subcommand %q (list, show or triage)", args[1])
	}
	return usagef("unknown command %q", args[0])
}

// newClient reads VULNSCAN_URL and VULNSCAN_API_KEY.
func newClient(e env) (*client.Client, error) {
	key := strings.TrimSpace(e.getenv("VULNSCAN_API_KEY"))
	if key == "" {
		return nil, usagef("VULNSCAN_API_KEY is not set: create a key and export it")
	}
	u := e.getenv("VULNSCAN_URL")
	if u == "" {
		u = defaultURL
	}
	c, err := client.New(u, key)
	if err != nil {
		return nil, usagef("VULNSCAN_URL: %v", err)
	}
	return c, nil
}

// flags parses args with fs, allowing positional arguments between flags
// ("scan . --wait"), and returns the positional ones.
func flags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%s: %v", fs.Name(), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func newFlagSet(name string) *flag.FlagSet { return flag.NewFlagSet(name, flag.ContinueOnError) }

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

var severities = vocab.Severities.Strings()

// severityRank orders severities, higher is more severe (0: unknown).
func severityRank(s string) int { return vocab.Severity(s).Rank() }

func oneOf(name, v string, allowed ...string) error {
	if v == "" {
		return nil
	}
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return usagef("--%s must be one of %s, not %q", name, strings.Join(allowed, ", "), v)
}
