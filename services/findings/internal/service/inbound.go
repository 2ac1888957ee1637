package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/validate"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	"github.com/vulnscan/vulnscan/services/findings/internal/inbound"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// Inbound serves FindingsInboundService: the integrations' public event
// endpoints, forwarded by the gateway without an API key. The event's
// signature under the integration's inbound secret is its authentication.
type Inbound struct {
	findingsv1.UnimplementedFindingsInboundServiceServer
	*Service
	// Now is the clock the chat's replay window is checked against.
	Now func() time.Time
}

// Inbound providers: the kinds of integration that receive events.
const (
	providerGitHub = "github"
	providerSlack  = "slack"
)

// maxReason is the PATCH reason limit (the spec's), applied to a command's
// reason.
const maxReason = 2000

// nilUser is the author of thread entries written by an external user
// mapped to no user of the organization.
const nilUser = "00000000-0000-0000-0000-000000000000"

const (
	msgIntegrationNotFound = "Integration not found"
	msgNoFinding           = "Finding not found: name it (/vulnscan STATE FINDING_ID) or reply to one of the integration's comments about it"
)

// newInboundSecret is a fresh inbound signing secret.
func newInboundSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("inbound secret: %w", err)
	}
	return "vsin_" + hex.EncodeToString(b), nil
}

// HandleEvent verifies and applies one inbound event. Checks run in this
// order, the first failure answering and nothing changing: the integration
// exists, is of the endpoint's kind and has an inbound secret (404); the
// signature, and for the chat the timestamp window (401); the event's shape
// (400); the finding it names or answers (404); a state change's author is
// mapped to a user (403); the delivery key is new (409). The receipt, the
// thread entry, the audit records and the outbox events (for every other
// integration of the organization, never the one the event came from) are
// written in one transaction.
func (in *Inbound) HandleEvent(ctx context.Context, req *findingsv1.HandleEventRequest) (*findingsv1.HandleEventResponse, error) {
	if err := validate.UUID("integration_id", req.GetIntegrationId()); err != nil {
		return nil, err
	}
	p := req.GetProvider()
	if p != providerGitHub && p != providerSlack {
		return nil, apierr.NotFound("%s", msgIntegrationNotFound)
	}
	integ, err := in.Store.ActiveIntegration(ctx, req.GetIntegrationId())
	if errors.Is(err, store.ErrNoIntegration) || (err == nil && integ.Kind != p) {
		return nil, apierr.NotFound("%s", msgIntegrationNotFound)
	}
	if err != nil {
		return nil, apierr.Internal.Wrap(err)
	}
	if len(integ.InboundSecretEnc) == 0 {
		return nil, apierr.NotFound("Integration has no inbound signing secret")
	}
	raw, _, err := in.Box.Open(integ.InboundSecretEnc, store.IntegrationInboundSecretAD(integ.ID))
	if err != nil {
		return nil, apierr.Internal.Wrap(fmt.Errorf("open inbound secret: %w", err))
	}
	secret := string(raw)

	var ev inbound.Event
	var key string
	switch p {
	case providerGitHub:
		if err := inbound.VerifyGitHub(secret, req.GetSignature(), req.GetBody()); err != nil {
			return nil, inboundErr(err)
		}
		if req.GetDelivery() == "" {
			return nil, apierr.Invalid("X-GitHub-Delivery header is required")
		}
		if utf8.RuneCountInString(req.GetDelivery()) > 200 {
			return nil, apierr.Invalid("X-GitHub-Delivery must be at most 200 characters")
		}
		key = "github:" + req.GetDelivery()
		if ev, err = inbound.ParseGitHub(req.GetEvent(), req.GetBody()); err != nil {
			return nil, inboundErr(err)
		}
	case providerSlack:
		if err := inbound.VerifySlack(secret, req.GetSignature(), req.GetTimestamp(), req.GetBody(), in.Now()); err != nil {
			return nil, inboundErr(err)
		}
		// The signature covers the timestamp and the body: a request seen
		// twice within the window has the same one.
		key = "slack:" + strings.ToLower(strings.TrimPrefix(req.GetSignature(), "v0="))
		if ev, err = inbound.ParseSlack(req.GetContentType(), req.GetBody()); err != nil {
			return nil, inboundErr(err)
		}
	}

	if ev.Self != "" && ev.Kind != inbound.Ignore {
		// The integration's own comment coming back from the git host.
		own, err := in.Store.FindingByRef(ctx, integ.ID, ev.Self)
		if err != nil {
			return nil, apierr.Internal.Wrap(err)
		}
		if own != "" {
			ev.Kind = inbound.Ignore
		}
	}
	if ev.Kind == inbound.Ping || ev.Kind == inbound.Ignore {
		if err := in.Store.Receipt(ctx, integ.ID, key); err != nil {
			return nil, replayErr(err, p)
		}
		if ev.Kind == inbound.Ping {
			return &findingsv1.HandleEventResponse{Status: "pong", Text: "pong"}, nil
		}
		return &findingsv1.HandleEventResponse{Status: "ignored", Text: "not about a finding's triage"}, nil
	}

	findingID := ev.FindingID
	for _, ref := range ev.Refs {
		if findingID != "" {
			break
		}
		if findingID, err = in.Store.FindingByRef(ctx, integ.ID, ref); err != nil {
			return nil, apierr.Internal.Wrap(err)
		}
	}
	if findingID == "" {
		if ev.Kind == inbound.Comment {
			// A comment on the repository that is not about a finding.
			if err := in.Store.Receipt(ctx, integ.ID, key); err != nil {
				return nil, replayErr(err, p)
			}
			return &findingsv1.HandleEventResponse{Status: "ignored", Text: "the comment is about no finding"}, nil
		}
		return nil, apierr.NotFound("%s", msgNoFinding)
	}

	if utf8.RuneCountInString(ev.Text) > maxReason && ev.Kind == inbound.State {
		return nil, apierr.Invalid("reason must be at most %d characters", maxReason)
	}
	if utf8.RuneCountInString(ev.Text) > MaxComment && ev.Kind == inbound.Comment {
		return nil, apierr.Invalid("comment must be at most %d characters", MaxComment)
	}

	actor := store.Actor{UserID: nilUser, Username: ev.AuthorName, Source: p, Origin: integ.ID}
	uid, err := in.Store.MappedUser(ctx, integ.ID, ev.Author)
	if err != nil {
		return nil, apierr.Internal.Wrap(err)
	}
	if uid != "" {
		name, err := in.username(ctx, uid)
		if err != nil {
			return nil, err
		}
		actor.UserID, actor.Username = uid, name
	} else if ev.Kind == inbound.State {
		return nil, apierr.Forbidden("%s user %q is not mapped to a vulnscan user; only mapped users change findings", providerName(p), ev.AuthorName)
	}

	change := store.Inbound{FindingID: findingID}
	if ev.Kind == inbound.State {
		change.State, change.Reason = &ev.State, ev.Text
	} else {
		change.Comment = &ev.Text
	}
	res, err := in.Store.ApplyInbound(ctx, integ, key, change, actor)
	if err != nil {
		if errors.Is(err, store.ErrReplay) {
			return nil, replayErr(err, p)
		}
		return nil, translate(err)
	}
	out := &findingsv1.HandleEventResponse{FindingId: findingID, EntryId: res.EntryID, State: res.State}
	switch {
	case ev.Kind == inbound.Comment:
		out.Status, out.Text = "recorded", "comment added to finding "+findingID
	case res.Changed:
		out.Status, out.Text = "changed", "finding "+findingID+" is now "+res.State
	default:
		out.Status, out.Text = "recorded", "finding "+findingID+" already was "+res.State
	}
	return out, nil
}

func providerName(p string) string {
	if p == providerGitHub {
		return "GitHub"
	}
	return "Slack"
}

// inboundErr maps the inbound package's refusals.
func inboundErr(err error) error {
	var e *inbound.Error
	if errors.As(err, &e) {
		if e.Unauthenticated {
			return apierr.Unauthenticated("%s", e.Msg)
		}
		return apierr.Invalid("%s", e.Msg)
	}
	return apierr.Internal.Wrap(err)
}

func replayErr(err error, p string) error {
	if !errors.Is(err, store.ErrReplay) {
		return apierr.Internal.Wrap(err)
	}
	if p == providerGitHub {
		return apierr.Conflict("Event already received: this X-GitHub-Delivery was processed before")
	}
	return apierr.Conflict("Event already received: this request was processed before")
}

// MapIntegrationUser maps a git host login (case-insensitive) or a chat
// user id of a github or slack integration to a user of its organization.
func (a *Admin) MapIntegrationUser(ctx context.Context, req *findingsv1.MapIntegrationUserRequest) (*findingsv1.MapIntegrationUserResponse, error) {
	if err := validate.UUID("integration_id", req.GetIntegrationId()); err != nil {
		return nil, err
	}
	if err := validate.UUID("user_id", req.GetUserId()); err != nil {
		return nil, err
	}
	ext := strings.TrimSpace(req.GetExternalUser())
	if ext == "" || utf8.RuneCountInString(ext) > 200 {
		return nil, apierr.Invalid("external_user must be 1 to 200 characters")
	}
	integ, err := a.Store.ActiveIntegration(ctx, req.GetIntegrationId())
	if errors.Is(err, store.ErrNoIntegration) {
		return nil, apierr.NotFound("%s", msgIntegrationNotFound)
	}
	if err != nil {
		return nil, apierr.Internal.Wrap(err)
	}
	if integ.Kind != providerGitHub && integ.Kind != providerSlack {
		return nil, apierr.Invalid("integration_id: a %s integration receives no events", integ.Kind)
	}
	if integ.Kind == providerGitHub {
		ext = strings.ToLower(ext)
	}
	u, err := a.Auth.GetUser(ctx, &authv1.GetUserRequest{UserId: req.GetUserId()})
	if err != nil {
		if apierr.HTTPStatus(statusOf(err)) == 404 {
			return nil, apierr.NotFound("User not found")
		}
		return nil, apierr.Internal.Wrap(err)
	}
	if u.GetOrgId() != integ.OrgID {
		return nil, apierr.NotFound("User not found")
	}
	if err := a.Store.MapUser(ctx, integ.ID, ext, u.GetId()); err != nil {
		return nil, apierr.Internal.Wrap(err)
	}
	return &findingsv1.MapIntegrationUserResponse{IntegrationId: integ.ID, ExternalUser: ext, UserId: u.GetId(), Username: u.GetUsername()}, nil
}
