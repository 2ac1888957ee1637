package service

import (
	"strings"
	"time"
	"unicode"

	"github.com/vulnscan/vulnscan/pkg/apierr"
	"github.com/vulnscan/vulnscan/pkg/validate"
	"github.com/vulnscan/vulnscan/pkg/vocab"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// Bounds of the search filters.
const (
	MaxSearchText = 200  // q, in characters
	MaxTag        = 200  // tag, in characters
	MaxFilePrefix = 1024 // affected_file, in characters
	MaxRepoURL    = 2048 // repo_url, in characters
)

// searcher is every request that carries the search filters: both lists,
// the export and the bulk change's filter.
type searcher interface {
	GetFoundSince() string
	GetFoundUntil() string
	GetRepoUrl() string
	GetCategory() string
	GetTag() string
	GetAffectedFile() string
	GetQ() string
}

// search validates the search filters of r into f. prefix is put before
// every field name in error messages ("filter." in a bulk change). An empty
// parameter is no filter.
//
// The found_at window is half-open: found_since is inclusive, found_until
// exclusive, so consecutive windows never count a finding twice. repo_url
// is compared after the normalization findings are stored under
// (vocab.RepoKey). affected_file is a byte-exact prefix, q a substring
// ignoring case; neither has wildcards.
func search(r searcher, f *store.Filter, prefix string) error {
	var err error
	if f.FoundSince, err = rfc3339(prefix+"found_since", r.GetFoundSince()); err != nil {
		return err
	}
	if f.FoundUntil, err = rfc3339(prefix+"found_until", r.GetFoundUntil()); err != nil {
		return err
	}
	if !f.FoundSince.IsZero() && !f.FoundUntil.IsZero() && f.FoundSince.After(f.FoundUntil) {
		return apierr.Invalid("%sfound_since must not be after %sfound_until", prefix, prefix)
	}
	if v := r.GetRepoUrl(); v != "" {
		if err := text(prefix+"repo_url", v, MaxRepoURL); err != nil {
			return err
		}
		if f.RepoKey = vocab.RepoKey(v); f.RepoKey == "" {
			return apierr.Invalid("%srepo_url must be a repository URL", prefix)
		}
	}
	if v := r.GetCategory(); v != "" {
		if err := validate.OneOf(prefix+"category", v, store.Categories...); err != nil {
			return err
		}
		f.Category = v
	}
	if v := r.GetTag(); v != "" {
		if err := text(prefix+"tag", v, MaxTag); err != nil {
			return err
		}
		f.Tag = v
	}
	if v := r.GetAffectedFile(); v != "" {
		if err := text(prefix+"affected_file", v, MaxFilePrefix); err != nil {
			return err
		}
		f.FilePrefix = v
	}
	if v := r.GetQ(); v != "" {
		if err := text(prefix+"q", v, MaxSearchText); err != nil {
			return err
		}
		if strings.TrimSpace(v) == "" {
			return apierr.Invalid("%sq must not be only spaces", prefix)
		}
		f.Text = v
	}
	return nil
}

// rfc3339 parses an optional RFC 3339 time.
func rfc3339(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, apierr.Invalid("%s must be an RFC 3339 time, for example 2026-01-31T00:00:00Z", field)
	}
	return t, nil
}

// text checks a search string: at most max characters, none of them a
// control character (they never occur in what is searched, and the text
// search joins fields with newlines).
func text(field, v string, max int) error {
	if err := validate.MaxLen(field, v, max); err != nil {
		return err
	}
	if strings.ContainsFunc(v, unicode.IsControl) {
		return apierr.Invalid("%s must not contain control characters", field)
	}
	return nil
}
