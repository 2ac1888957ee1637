// Package inbound reads the events a git host (GitHub-style webhooks) and a
// chat (Slack-style slash commands and interactive actions) send to an
// integration's public endpoint: it verifies their signatures and turns
// them into what they ask of a finding.
//
// Signatures. The git host signs the body: X-Hub-Signature-256 is
// "sha256=" and the hex HMAC-SHA256 of the body under the integration's
// inbound secret; X-GitHub-Delivery, unique per delivery, is the replay key.
// The chat signs "v0:TIMESTAMP:BODY": X-Slack-Signature is "v0=" and the
// hex HMAC-SHA256, X-Slack-Request-Timestamp the Unix time of the request,
// which must be within five minutes of ours; the signature is the replay
// key. Comparisons are constant-time.
//
// Commands. A git host comment whose first line (quoted lines aside) starts
// with "/vulnscan" and a chat slash command "/vulnscan" are commands:
// "STATE [FINDING_ID] [REASON…]" changes the finding's state (STATE is open,
// true_positive, false_positive, accepted_risk or resolved) and
// "comment FINDING_ID TEXT" (chat) adds a comment. Any other git host
// comment is a comment. A git host reaction "+1" means true_positive and
// "-1" false_positive; a chat interactive action whose value is
// "STATE:FINDING_ID" names that state. Other reactions are not about a
// finding's state and are ignored.
package inbound

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/vulnscan/vulnscan/pkg/vocab"
	"github.com/vulnscan/vulnscan/pkg/wiretext"
)

// Window is how far a chat request's timestamp may be from now.
const Window = 5 * time.Minute

// States are the finding states a command or reaction may name.
var States = vocab.FindingStates.Strings()

// Error is a refused event: Unauthenticated for signature and replay-window
// failures, otherwise a bad request.
type Error struct {
	Unauthenticated bool
	Msg             string
}

func (e *Error) Error() string { return e.Msg }

func invalid(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

func unauthenticated(format string, args ...any) error {
	return &Error{Unauthenticated: true, Msg: fmt.Sprintf(format, args...)}
}

// Kind is what an event asks.
type Kind int

const (
	// Ignore: the event is not about a finding (another comment action, a
	// reaction that names no state, an event type not handled).
	Ignore Kind = iota
	// Ping: the git host checking the endpoint.
	Ping
	// Comment adds Text to the thread.
	Comment
	// State changes the finding's state to State with Text as the reason.
	State
)

// Event is an inbound event, verified and read.
type Event struct {
	Kind Kind
	// Author is the external user: the git host login in lower case or the
	// chat user id; AuthorName is how the receiver shows them.
	Author, AuthorName string
	// FindingID is a finding named explicitly; Refs are the receiver's
	// objects the event answers ("comment:ID"), to look up when no finding
	// is named.
	FindingID string
	Refs      []string
	State     string
	Text      string
	// Reaction says the event is a reaction or an action, not a command.
	Reaction bool
	// Self is the reference of the comment the event is about ("comment:ID"):
	// when the integration created it, the event is its own comment coming
	// back and is ignored.
	Self string
}

// Marker starts every comment the integration posts; a comment that starts
// with it is the integration's own and never read as a user's.
const Marker = "[vulnscan]"

// VerifyGitHub checks X-Hub-Signature-256 against body.
func VerifyGitHub(secret, header string, body []byte) error {
	if header == "" {
		return unauthenticated("X-Hub-Signature-256 header is required")
	}
	got, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return unauthenticated("X-Hub-Signature-256 must be sha256=<hex HMAC-SHA256 of the body>")
	}
	if !equalHex(got, mac(secret, body)) {
		return unauthenticated("Invalid signature: X-Hub-Signature-256 does not match the body")
	}
	return nil
}

// VerifySlack checks X-Slack-Signature and the timestamp's window.
func VerifySlack(secret, header, ts string, body []byte, now time.Time) error {
	if header == "" {
		return unauthenticated("X-Slack-Signature header is required")
	}
	if ts == "" {
		return unauthenticated("X-Slack-Request-Timestamp header is required")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return unauthenticated("X-Slack-Request-Timestamp must be a Unix time in seconds")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Window || d < -Window {
		return unauthenticated("X-Slack-Request-Timestamp is outside the 5-minute window")
	}
	got, ok := strings.CutPrefix(header, "v0=")
	if !ok {
		return unauthenticated("X-Slack-Signature must be v0=<hex HMAC-SHA256 of v0:timestamp:body>")
	}
	if !equalHex(got, SlackSign(secret, ts, body)) {
		return unauthenticated("Invalid signature: X-Slack-Signature does not match the request")
	}
	return nil
}

// SlackSign is the hex HMAC-SHA256 of "v0:ts:body".
func SlackSign(secret, ts string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("v0:" + ts + ":"))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// GitHubSign is the hex HMAC-SHA256 of body.
func GitHubSign(secret string, body []byte) string { return mac(secret, body) }

func mac(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func equalHex(got, want string) bool {
	g, err := hex.DecodeString(strings.ToLower(got))
	if err != nil {
		return false
	}
	w, _ := hex.DecodeString(want)
	return hmac.Equal(g, w)
}

type ghUser struct {
	Login string `json:"login"`
}

type ghComment struct {
	ID          int64  `json:"id"`
	Body        string `json:"body"`
	InReplyToID int64  `json:"in_reply_to_id"`
	User        ghUser `json:"user"`
}

type ghPayload struct {
	Action   string     `json:"action"`
	Comment  *ghComment `json:"comment"`
	Reaction *struct {
		Content string `json:"content"`
		User    ghUser `json:"user"`
	} `json:"reaction"`
	Sender ghUser `json:"sender"`
}

// quotedFinding finds a quoted "finding ID" line: a reply that quotes one
// of the integration's comments names the finding it was about.
var quotedFinding = regexp.MustCompile(`(?m)^>\s*finding ([0-9a-fA-F-]{36})\s*$`)

// ParseGitHub reads a git host webhook of type event (X-GitHub-Event).
// Comment events (issue_comment, commit_comment,
// pull_request_review_comment) count when created; "reaction" events
// (action created, reaction.content, comment.id of the comment reacted to)
// when they name a state.
func ParseGitHub(event string, body []byte) (Event, error) {
	return cleaned(parseGitHub(event, body))
}

func parseGitHub(event string, body []byte) (Event, error) {
	switch event {
	case "":
		return Event{}, invalid("X-GitHub-Event header is required")
	case "ping":
		return Event{Kind: Ping}, nil
	case "issue_comment", "commit_comment", "pull_request_review_comment", "reaction":
	default:
		return Event{}, nil
	}
	var p ghPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return Event{}, invalid("body must be a JSON %s event", event)
	}
	if p.Action != "created" {
		return Event{}, nil
	}
	if p.Comment == nil {
		return Event{}, invalid("comment is required in a %s event", event)
	}
	login := p.Sender.Login
	var ev Event
	if event == "reaction" {
		if p.Reaction == nil {
			return Event{}, invalid("reaction is required in a reaction event")
		}
		if p.Reaction.User.Login != "" {
			login = p.Reaction.User.Login
		}
		switch p.Reaction.Content {
		case "+1":
			ev = Event{Kind: State, State: string(vocab.TruePositive), Reaction: true}
		case "-1":
			ev = Event{Kind: State, State: string(vocab.FalsePositive), Reaction: true}
		default:
			return Event{}, nil
		}
		ev.Refs = []string{CommentRef(p.Comment.ID)}
	} else {
		if p.Comment.User.Login != "" && login == "" {
			login = p.Comment.User.Login
		}
		if strings.HasPrefix(strings.TrimSpace(p.Comment.Body), Marker) {
			return Event{}, nil
		}
		var err error
		if ev, err = parseComment(p.Comment.Body); err != nil {
			return Event{}, err
		}
		ev.Self = CommentRef(p.Comment.ID)
		if p.Comment.InReplyToID != 0 {
			ev.Refs = append(ev.Refs, CommentRef(p.Comment.InReplyToID))
		}
		if ev.FindingID == "" {
			if m := quotedFinding.FindStringSubmatch(p.Comment.Body); m != nil {
				ev.FindingID = strings.ToLower(m[1])
			}
		}
	}
	if login == "" {
		return Event{}, invalid("sender.login is required")
	}
	ev.Author, ev.AuthorName = strings.ToLower(login), login
	return ev, nil
}

// CommentRef is the reference of a git host comment.
func CommentRef(id int64) string { return "comment:" + strconv.FormatInt(id, 10) }

// parseComment reads a git host comment body: a command when its first
// line that is not a quote starts with /vulnscan, else a comment.
func parseComment(body string) (Event, error) {
	off := 0
	for _, line := range strings.SplitAfter(body, "\n") {
		start := off
		off += len(line)
		l := strings.TrimSpace(line)
		if l == "" || strings.HasPrefix(l, ">") {
			continue
		}
		if rest, ok := strings.CutPrefix(l, "/vulnscan"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			// The reason runs from the command to the end of the body.
			cmd := body[start+strings.Index(line, "/vulnscan")+len("/vulnscan"):]
			return parseCommand(strings.Join(strings.Fields(cmd), " "), false)
		}
		break
	}
	if strings.TrimSpace(body) == "" {
		return Event{}, nil
	}
	return Event{Kind: Comment, Text: body}, nil
}

// parseCommand reads "STATE [FINDING_ID] [REASON…]" or, when comments is
// set, also "comment FINDING_ID TEXT".
func parseCommand(text string, comments bool) (Event, error) {
	verb, rest, _ := strings.Cut(strings.TrimSpace(text), " ")
	rest = strings.TrimSpace(rest)
	usage := "command must be /vulnscan STATE [FINDING_ID] [REASON] with STATE one of " + strings.Join(States, ", ")
	if comments {
		usage += ", or /vulnscan comment FINDING_ID TEXT"
	}
	if verb == "" {
		return Event{}, invalid("%s", usage)
	}
	first, after, _ := strings.Cut(rest, " ")
	if comments && verb == "comment" {
		if uuid.Validate(first) != nil {
			return Event{}, invalid("finding_id must be a UUID")
		}
		if strings.TrimSpace(after) == "" {
			return Event{}, invalid("comment must not be empty")
		}
		return Event{Kind: Comment, FindingID: strings.ToLower(first), Text: strings.TrimSpace(after)}, nil
	}
	if !isState(verb) {
		return Event{}, invalid("%s (got %q)", usage, verb)
	}
	ev := Event{Kind: State, State: verb, Text: rest}
	if uuid.Validate(first) == nil && len(first) == 36 {
		ev.FindingID, ev.Text = strings.ToLower(first), strings.TrimSpace(after)
	}
	return ev, nil
}

func isState(s string) bool {
	for _, x := range States {
		if s == x {
			return true
		}
	}
	return false
}

// ParseSlack reads a chat request: a slash command (form fields command,
// text, user_id, user_name) or an interactive action (form field payload,
// JSON with user and actions[].value "STATE:FINDING_ID").
func ParseSlack(contentType string, body []byte) (Event, error) {
	return cleaned(parseSlack(contentType, body))
}

// cleaned makes an event's text fit to store (see wiretext): a receiver's
// event holds whatever its users typed, and a NUL in a login or a comment,
// or a form field that is not UTF-8, made the event fail with an internal
// error that the receiver retried.
func cleaned(ev Event, err error) (Event, error) {
	if err != nil {
		return ev, err
	}
	for _, s := range []*string{&ev.Author, &ev.AuthorName, &ev.FindingID, &ev.State, &ev.Text, &ev.Self} {
		*s = wiretext.Clean(*s)
	}
	for i := range ev.Refs {
		ev.Refs[i] = wiretext.Clean(ev.Refs[i])
	}
	return ev, nil
}

func parseSlack(contentType string, body []byte) (Event, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt != "application/x-www-form-urlencoded" {
		return Event{}, invalid("Content-Type must be application/x-www-form-urlencoded")
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return Event{}, invalid("body must be form-encoded")
	}
	if raw := form.Get("payload"); raw != "" {
		return parseAction(raw)
	}
	if cmd := form.Get("command"); cmd != "/vulnscan" {
		return Event{}, invalid("command must be /vulnscan")
	}
	ev, err := parseCommand(form.Get("text"), true)
	if err != nil {
		return Event{}, err
	}
	if ev.FindingID == "" {
		return Event{}, invalid("finding_id is required: /vulnscan %s FINDING_ID [REASON]", ev.State)
	}
	if form.Get("user_id") == "" {
		return Event{}, invalid("user_id is required")
	}
	ev.Author, ev.AuthorName = form.Get("user_id"), form.Get("user_name")
	if ev.AuthorName == "" {
		ev.AuthorName = ev.Author
	}
	return ev, nil
}

func parseAction(raw string) (Event, error) {
	var p struct {
		Type string `json:"type"`
		User struct {
			ID       string `json:"id"`
			Username string `json:"username"`
		} `json:"user"`
		Actions []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"actions"`
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return Event{}, invalid("payload must be JSON")
	}
	if p.Type != "block_actions" || len(p.Actions) == 0 {
		return Event{}, nil
	}
	if p.User.ID == "" {
		return Event{}, invalid("payload.user.id is required")
	}
	state, id, ok := strings.Cut(p.Actions[0].Value, ":")
	if !ok || !isState(state) {
		return Event{}, invalid("payload.actions[0].value must be STATE:FINDING_ID with STATE one of %s", strings.Join(States, ", "))
	}
	if uuid.Validate(id) != nil || len(id) != 36 {
		return Event{}, invalid("finding_id must be a UUID")
	}
	name := p.User.Username
	if name == "" {
		name = p.User.ID
	}
	return Event{Kind: State, State: state, FindingID: strings.ToLower(id), Author: p.User.ID, AuthorName: name, Reaction: true}, nil
}
