package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/client"

	"github.com/vulnscan/vulnscan/pkg/vocab"
)

var states = vocab.FindingStates.Strings()

func estimateCmd(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("estimate")
	var t target
	targetFlags(fs, &t)
	asJSON := fs.Bool("json", false, "print the estimation as JSON")
	pos, err := flags(fs, args)
	if err != nil {
		return err
	}
	if err := t.resolve(pos); err != nil {
		return err
	}
	c, err := newClient(e)
	if err != nil {
		return err
	}
	p := newProgress(e)
	est, _, err := t.estimate(ctx, c, p)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(est)
	}
	for _, r := range est.RepoResults {
		_, _ = fmt.Fprintf(e.stdout, "%s %s@%s: %s, %d credits\n", r.RepoURL, r.Branch, short(r.CommitSHA), r.Status, r.Credits)
	}
	_, _ = fmt.Fprintf(e.stdout, "estimation %s: %s, %d credits\n", est.ID, est.Status, est.TotalCredits)
	return nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func findingsList(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("findings list")
	var q client.FindingQuery
	fs.StringVar(&q.ScanID, "scan", "", "only this scan's findings")
	fs.StringVar(&q.Severity, "severity", "", "critical, high, medium, low or info")
	fs.StringVar(&q.State, "state", "", "open, true_positive, false_positive, accepted_risk or resolved")
	fs.StringVar(&q.SortBy, "sort-by", "severity", "found_at, updated_at or severity")
	fs.StringVar(&q.SortOrder, "sort-order", "DESC", "ASC or DESC")
	fs.IntVar(&q.Page, "page", 1, "page (1-based)")
	fs.IntVar(&q.Limit, "limit", 15, "findings per page (at most 100)")
	all := fs.Bool("all", false, "every page")
	asJSON := fs.Bool("json", false, "print the API's page ({data,total,page,limit}) as JSON")
	pos, err := flags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("findings list takes no arguments, got %q", strings.Join(pos, " "))
	}
	// Values are checked by the API, whose 400 names the parameter.
	c, err := newClient(e)
	if err != nil {
		return err
	}
	var page client.FindingPage
	if *all {
		page.Data, err = c.AllFindings(ctx, q)
		page.Total, page.Page, page.Limit = len(page.Data), 1, len(page.Data)
	} else {
		page, err = c.ListFindings(ctx, q)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		if page.Data == nil {
			page.Data = []client.Finding{}
		}
		return json.NewEncoder(e.stdout).Encode(page)
	}
	printFindings(e.stdout, page.Data)
	_, _ = fmt.Fprintf(e.stdout, "%d of %d findings (page %d)\n", len(page.Data), page.Total, page.Page)
	return nil
}

func oneID(pos []string, cmd string) (string, error) {
	if len(pos) != 1 {
		return "", usagef("%s needs one finding id", cmd)
	}
	return pos[0], nil
}

func findingsShow(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("findings show")
	asJSON := fs.Bool("json", false, "print the finding as JSON")
	pos, err := flags(fs, args)
	if err != nil {
		return err
	}
	id, err := oneID(pos, "findings show")
	if err != nil {
		return err
	}
	c, err := newClient(e)
	if err != nil {
		return err
	}
	f, err := c.GetFinding(ctx, id)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(f)
	}
	w := e.stdout
	// Text from repositories and integrations is printed through shown.
	_, _ = fmt.Fprintf(w, "%s\n%s · %s · %s\n", shown(f.Title, false), f.Severity, f.State, f.Category)
	loc := shown(f.AffectedFile, false)
	if f.Line != nil && *f.Line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, *f.Line)
	}
	_, _ = fmt.Fprintf(w, "id %s\nat %s\n", f.ID, loc)
	if f.RepoURL != nil {
		_, _ = fmt.Fprintf(w, "repository %s\n", shown(*f.RepoURL, false))
	}
	if f.DuplicateOf != nil {
		_, _ = fmt.Fprintf(w, "duplicate of %s\n", *f.DuplicateOf)
	}
	_, _ = fmt.Fprintf(w, "seen in %d scan(s), first %s\n\n%s\n", f.OccurrenceCount, f.FoundAt, shown(f.Description, true))
	if f.AffectedCode != "" {
		_, _ = fmt.Fprintf(w, "\n%s\n", shown(f.AffectedCode, true))
	}
	if len(f.TriageThread) > 0 {
		_, _ = fmt.Fprintln(w, "\nTriage thread:")
		for _, t := range f.TriageThread {
			var parts []string
			if t.Reaction != nil {
				parts = append(parts, "["+shown(*t.Reaction, false)+"]")
			}
			if t.Comment != nil {
				parts = append(parts, shown(*t.Comment, true))
			}
			_, _ = fmt.Fprintf(w, "  %s %s (%s): %s\n", t.Timestamp, shown(t.Username, false), t.Source, strings.Join(parts, " "))
		}
	}
	return nil
}

func findingsTriage(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("findings triage")
	var t client.Triage
	fs.StringVar(&t.State, "state", "", strings.Join(states, ", "))
	fs.StringVar(&t.Severity, "severity", "", strings.Join(severities, ", "))
	dup := fs.String("duplicate-of", "", "id of the canonical finding, or none to unmark")
	fs.StringVar(&t.Reason, "reason", "", "why (kept in the audit trail and the triage thread)")
	comment := fs.String("comment", "", "add a comment to the triage thread")
	asJSON := fs.Bool("json", false, "print the answer as JSON")
	pos, err := flags(fs, args)
	if err != nil {
		return err
	}
	id, err := oneID(pos, "findings triage")
	if err != nil {
		return err
	}
	if err := oneOf("state", t.State, states...); err != nil {
		return err
	}
	if err := oneOf("severity", t.Severity, severities...); err != nil {
		return err
	}
	if *dup != "" {
		t.SetDuplicate = true
		if *dup != "none" {
			t.DuplicateOf = dup
		}
	}
	change := t.State != "" || t.Severity != "" || t.SetDuplicate
	if !change && *comment == "" {
		return usagef("findings triage needs --state, --severity, --duplicate-of or --comment")
	}
	if !change && t.Reason != "" {
		return usagef("--reason goes with --state, --severity or --duplicate-of; use --comment for a remark")
	}
	c, err := newClient(e)
	if err != nil {
		return err
	}
	out := map[string]any{"id": id}
	if change {
		r, err := c.TriageFinding(ctx, id, t)
		if err != nil {
			return err
		}
		out["state"], out["severity"], out["duplicate_of"] = r.State, r.Severity, r.DuplicateOf
	}
	if *comment != "" {
		cid, err := c.Comment(ctx, id, *comment)
		if err != nil {
			return err
		}
		out["comment_id"] = cid
	}
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(out)
	}
	if change {
		_, _ = fmt.Fprintf(e.stdout, "%s: %v, %v\n", id, out["state"], out["severity"])
	}
	if *comment != "" {
		_, _ = fmt.Fprintf(e.stdout, "%s: comment %v added\n", id, out["comment_id"])
	}
	return nil
}
