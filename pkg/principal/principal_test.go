package principal

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/apierr"
)

func TestScopes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		scopes []string
		scope  string
		want   bool
	}{
		{"read grants read", []string{ScopeRead}, ScopeRead, true},
		{"read does not grant write", []string{ScopeRead}, ScopeWrite, false},
		{"write grants write", []string{ScopeWrite}, ScopeWrite, true},
		{"write includes read", []string{ScopeWrite}, ScopeRead, true},
		{"nothing grants nothing", nil, ScopeRead, false},
		{"an unknown scope grants only itself", []string{"admin"}, ScopeRead, false},
		{"an unknown scope asked for", []string{ScopeRead, ScopeWrite}, "admin", false},
		{"scopes are case-sensitive", []string{"WRITE"}, ScopeWrite, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, HasScope(tc.scopes, tc.scope))
			require.Equal(t, tc.want, Principal{Scopes: tc.scopes}.Has(tc.scope))
		})
	}
}

func TestFromNeedsOrganizationAndUser(t *testing.T) {
	t.Parallel()
	type otherKey struct{}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		ok   bool
	}{
		{"nothing attached", context.Background(), false},
		{"a principal without a user", With(context.Background(), Principal{OrgID: "o"}), false},
		{"a principal without an organization", With(context.Background(), Principal{UserID: "u"}), false},
		{"a principal under another key type", context.WithValue(context.Background(), otherKey{}, Principal{OrgID: "o", UserID: "u"}), false},
		{"organization and user", With(context.Background(), Principal{OrgID: "o", UserID: "u", Scopes: []string{ScopeRead}}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := From(tc.ctx)
			if !tc.ok {
				require.True(t, apierr.Is(err, http.StatusUnauthorized), "want a 401, got %v", err)
				require.Equal(t, Principal{}, p)
				return
			}
			require.NoError(t, err)
			require.Equal(t, Principal{OrgID: "o", UserID: "u", Scopes: []string{ScopeRead}}, p)
		})
	}
}
