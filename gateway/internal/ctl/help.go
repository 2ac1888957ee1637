package ctl

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strings"
)

// doc is a command's help text: a one-line summary and worked examples.
type doc struct {
	summary  string
	examples []string
}

// docs holds the help of every command, keyed "group verb".
var docs = map[string]doc{
	"org create": {"Create an organization with an owner user and an opening credit balance.",
		[]string{"vulnscanctl org create --name acme --credits 100", "vulnscanctl org create --name acme --verification manual"}},
	"user create": {"Add a user to an organization.",
		[]string{"vulnscanctl user create --org 3f0c…-org-id --username alice"}},
	"key create": {"Issue an API key; the key itself is printed only this once.",
		[]string{"vulnscanctl key create --org ORG_ID --scopes read,write --name ci", "vulnscanctl key create --org ORG_ID --scopes read --expires-in 30d"}},
	"key revoke": {"Revoke an API key at once, on every gateway.",
		[]string{"vulnscanctl key revoke --id KEY_ID"}},
	"credits grant": {"Add credits to an organization's balance.",
		[]string{"vulnscanctl credits grant --org ORG_ID --amount 50"}},
	"credits show": {"Show an organization's credit balance.",
		[]string{"vulnscanctl credits show --org ORG_ID"}},
	"repo connect": {"Register a connected repository, with an access token read from an environment variable.",
		[]string{"GH_TOKEN=… vulnscanctl repo connect --org ORG_ID --url https://github.com/acme/api --token-env GH_TOKEN"}},
	"finding list": {"List an organization's or a scan's findings; --pending shows those held in verification with their confidence and reasons.",
		[]string{"vulnscanctl finding list --scan SCAN_ID", "vulnscanctl finding list --org ORG_ID --pending"}},
	"finding approve": {"Approve a finding held in verification, making it visible in the API.",
		[]string{"vulnscanctl finding approve --id FINDING_ID"}},
	"finding reject": {"Reject a finding held in verification; it stays hidden.",
		[]string{"vulnscanctl finding reject --id FINDING_ID"}},
	"integration add": {"Send an organization's new findings to GitHub issues, Slack, Jira or Linear.",
		[]string{"SLACK_HOOK=… vulnscanctl integration add --org ORG_ID --kind slack --url https://hooks.slack.com/services/… --secret-env SLACK_HOOK"}},
	"integration list": {"List an organization's integrations.",
		[]string{"vulnscanctl integration list --org ORG_ID"}},
	"integration map-user": {"Map a GitHub login or Slack user id of an integration to a user: the author of the triage entries and state changes its inbound events make.",
		[]string{"vulnscanctl integration map-user --id INTEGRATION_ID --external-user octocat --user USER_ID"}},
	"integration remove": {"Remove an integration.",
		[]string{"vulnscanctl integration remove --id INTEGRATION_ID"}},
}

// groupDocs describes each group in the top-level help.
var groupDocs = map[string]string{
	"org":         "organizations",
	"user":        "users of an organization",
	"key":         "API keys",
	"credits":     "credit balances",
	"repo":        "connected repositories",
	"finding":     "findings held in verification",
	"integration": "where new findings are sent",
}

// helpRequest is returned by Parse when the arguments ask for help.
type helpRequest struct {
	required []string
	all      bool // --help-all: show the service address flags too
}

func (*helpRequest) Error() string { return "help requested" }

// wantsHelp reports whether args ask for help, and for all flags.
func wantsHelp(args []string) (help, all bool) {
	for _, a := range args {
		if a == "--" {
			break
		}
		switch a {
		case "-h", "-help", "--help":
			help = true
		case "--help-all", "-help-all":
			help, all = true, true
		}
	}
	return help, all
}

func isAddrFlag(name string) bool { return strings.HasSuffix(name, "-addr") }

func groups() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range commands {
		if !seen[c.Group] {
			seen[c.Group] = true
			out = append(out, c.Group)
		}
	}
	sort.Strings(out)
	return out
}

func hasGroup(g string) bool {
	for _, c := range commands {
		if c.Group == g {
			return true
		}
	}
	return false
}

// usage prints the top-level help.
func usage(w io.Writer) {
	fmt.Fprint(w, `vulnscanctl operates vulnscan: organizations, users, API keys, credits,
connected repositories, finding verification and integrations. Every command
prints one JSON object on stdout; errors go to stderr with a non-zero exit.

Usage:
  vulnscanctl GROUP VERB [flags]
  vulnscanctl GROUP --help        the verbs of a group
  vulnscanctl GROUP VERB --help   a command's flags and examples
  vulnscanctl version             {"version","commit","go"}

Commands:
`)
	for _, g := range groups() {
		fmt.Fprintf(w, "  %-12s %s\n", g, groupDocs[g])
		for _, c := range commands {
			if c.Group == g {
				fmt.Fprintf(w, "    %-10s %s\n", c.Verb, docs[c.Group+" "+c.Verb].summary)
			}
		}
	}
	fmt.Fprint(w, `
Examples:
  vulnscanctl org create --name acme --credits 100
  vulnscanctl key create --org ORG_ID --scopes read,write --name ci
  vulnscanctl key list --org ORG_ID

The services are found at AUTH_ADMIN_GRPC_ADDR and FINDINGS_ADMIN_GRPC_ADDR;
"GROUP VERB --help-all" also shows the flags that override them.
`)
}

// groupUsage prints the verbs of one group.
func groupUsage(w io.Writer, g string) {
	fmt.Fprintf(w, "vulnscanctl %s: %s\n\nUsage:\n", g, groupDocs[g])
	for _, c := range commands {
		if c.Group == g {
			fmt.Fprintf(w, "  vulnscanctl %s %s %s\n      %s\n", c.Group, c.Verb, c.Usage, docs[c.Group+" "+c.Verb].summary)
		}
	}
	fmt.Fprintf(w, "\nRun \"vulnscanctl %s VERB --help\" for a command's flags and examples.\n", g)
}

// commandUsage prints one command's help: summary, usage, flags (required
// ones marked, service addresses only with all) and examples.
func commandUsage(w io.Writer, c *Command, fs *flag.FlagSet, h *helpRequest) {
	d := docs[c.Group+" "+c.Verb]
	fmt.Fprintf(w, "%s\n\nUsage:\n  vulnscanctl %s %s %s\n\nFlags:\n", d.summary, c.Group, c.Verb, c.Usage)
	req := map[string]bool{}
	for _, r := range h.required {
		req[r] = true
	}
	fs.VisitAll(func(f *flag.Flag) {
		if isAddrFlag(f.Name) && !h.all {
			return
		}
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		if req[f.Name] {
			usage += " (required)"
		} else if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "%-28s %s\n", line, usage)
	})
	if !h.all {
		fmt.Fprintln(w, "  --help-all                   also show the service address flags")
	}
	if len(d.examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range d.examples {
			fmt.Fprintln(w, "  "+e)
		}
	}
}

// versionInfo describes the binary from its build information.
func versionInfo() map[string]any {
	out := map[string]any{"version": "(devel)", "commit": nil, "go": nil}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	out["go"] = bi.GoVersion
	if v := bi.Main.Version; v != "" {
		out["version"] = v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			out["commit"] = s.Value
		}
	}
	return out
}

func asHelp(err error) (*helpRequest, bool) {
	var h *helpRequest
	ok := errors.As(err, &h)
	return h, ok
}
