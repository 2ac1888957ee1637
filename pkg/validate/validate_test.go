package validate

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/apierr"
)

// requireVerdict checks err against want: "" for success, otherwise a 400
// whose message is want.
func requireVerdict(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		require.NoError(t, err)
		return
	}
	require.True(t, apierr.Is(err, http.StatusBadRequest), "want a 400, got %v", err)
	require.EqualError(t, err, want)
}

func TestUUID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, value, want string
	}{
		{"canonical", "0a1b2c3d-4e5f-4a6b-8c7d-9e8f7a6b5c4d", ""},
		{"upper case", "0A1B2C3D-4E5F-4A6B-8C7D-9E8F7A6B5C4D", ""},
		{"mixed case", "0a1B2c3D-4e5f-4A6b-8c7d-9E8f7a6b5c4d", ""},
		{"nil uuid", "00000000-0000-0000-0000-000000000000", ""},
		{"empty", "", "org_id is required"},
		{"not a uuid", "scan-1", "org_id must be a valid UUID"},
		{"braces", "{0a1b2c3d-4e5f-4a6b-8c7d-9e8f7a6b5c4d}", "org_id must be a valid UUID"},
		{"urn", "urn:uuid:0a1b2c3d-4e5f-4a6b-8c7d-9e8f7a6b5c4d", "org_id must be a valid UUID"},
		{"no hyphens", "0a1b2c3d4e5f4a6b8c7d9e8f7a6b5c4d", "org_id must be a valid UUID"},
		{"surrounding space", " 0a1b2c3d-4e5f-4a6b-8c7d-9e8f7a6b5c4d", "org_id must be a valid UUID"},
		{"not hex", "0a1b2c3d-4e5f-4a6b-8c7d-9e8f7a6b5c4g", "org_id must be a valid UUID"},
		{"too long", "0a1b2c3d-4e5f-4a6b-8c7d-9e8f7a6b5c4d0", "org_id must be a valid UUID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireVerdict(t, UUID("org_id", tc.value), tc.want)
		})
	}
}

func TestMaxLen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, value string
		max         int
		want        string
	}{
		{"empty", "", 3, ""},
		{"at the limit", "abc", 3, ""},
		{"over the limit", "abcd", 3, "name must be at most 3 characters"},
		{"counts characters, not bytes", strings.Repeat("é", 3), 3, ""},
		{"multi-byte over the limit", strings.Repeat("界", 4), 3, "name must be at most 3 characters"},
		{"zero allows nothing", "a", 0, "name must be at most 0 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireVerdict(t, MaxLen("name", tc.value, tc.max), tc.want)
		})
	}
}

func TestOneOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, value string
		allowed     []string
		want        string
	}{
		{"first", "auto", []string{"auto", "manual"}, ""},
		{"last", "manual", []string{"auto", "manual"}, ""},
		{"case matters", "Auto", []string{"auto", "manual"}, "mode must be one of: auto, manual"},
		{"empty is not a value", "", []string{"auto", "manual"}, "mode must be one of: auto, manual"},
		{"nothing allowed", "auto", nil, "mode must be one of: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireVerdict(t, OneOf("mode", tc.value, tc.allowed...), tc.want)
		})
	}
}
