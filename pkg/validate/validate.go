// Package validate holds the request checks every service shares, each
// returning a 400 error that names the failing field.
package validate

import (
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/vulnscan/vulnscan/pkg/apierr"
)

// UUID checks that value is a UUID in canonical form.
func UUID(field, value string) error {
	if value == "" {
		return apierr.Invalid("%s is required", field)
	}
	if u, err := uuid.Parse(value); err != nil || len(value) != 36 || u.String() != lower(value) {
		return apierr.Invalid("%s must be a valid UUID", field)
	}
	return nil
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'F' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// MaxLen checks that value has at most max characters.
func MaxLen(field, value string, max int) error {
	if utf8.RuneCountInString(value) > max {
		return apierr.Invalid("%s must be at most %d characters", field, max)
	}
	return nil
}

// OneOf checks that value is one of allowed.
func OneOf(field, value string, allowed ...string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return apierr.Invalid("%s must be one of: %s", field, strings.Join(allowed, ", "))
}
