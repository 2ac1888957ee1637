// Package redact removes credentials from URLs and from errors that quote
// URLs, before they reach logs, error columns or operator output.
//
// Two strengths: URL drops userinfo, query and fragment (a probe target or an
// API base URL whose path is not secret); Secret keeps only scheme and host
// (a chat incoming-webhook URL, whose path is itself the credential).
package redact

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
)

// Mark replaces the removed parts.
const Mark = "REDACTED"

// URL returns raw without userinfo, query string and fragment. Text that
// does not parse as a URL is replaced by Mark whole, since it cannot be
// checked.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return Mark
	}
	if u.User != nil {
		u.User = url.User(Mark)
	}
	if u.RawQuery != "" {
		u.RawQuery = Mark
	}
	u.ForceQuery = false
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// Secret returns scheme and host of raw with the rest replaced by Mark,
// e.g. https://hooks.slack.com/REDACTED.
func Secret(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return Mark
	}
	return u.Scheme + "://" + u.Host + "/" + Mark
}

// Error returns err's text with the URL of any *url.Error it wraps
// replaced by hide(URL), and every other occurrence of that URL too.
// secret URLs (webhooks) are also removed wherever they appear verbatim.
func Error(err error, hide func(string) string, secrets ...string) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) && ue.URL != "" {
		// url.Error quotes the URL with %q, whose escaping may differ
		// from the raw text: replace both forms.
		msg = strings.ReplaceAll(msg, strconv.Quote(ue.URL), strconv.Quote(hide(ue.URL)))
		msg = strings.ReplaceAll(msg, ue.URL, hide(ue.URL))
	}
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, hide(s))
		}
	}
	return msg
}
