package main

import (
	"strings"
	"testing"
)

func TestPasswordsFromURLs(t *testing.T) {
	const pw = "0123456789abcdef0123456789abcdef"
	good := map[string]string{
		"AUTH_DATABASE_URL":       "postgres://vulnscan_auth:" + pw + "a@db:5432/vulnscan?sslmode=verify-full",
		"ESTIMATION_DATABASE_URL": "postgres://vulnscan_estimation:" + pw + "e@db:5432/vulnscan",
		"SCAN_DATABASE_URL":       "postgresql://vulnscan_scan:" + pw + "s@db/vulnscan",
		"FINDINGS_DATABASE_URL":   "postgres://vulnscan_findings:" + pw + "f@db/vulnscan",
	}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range good {
			m[a] = b
		}
		m[k] = v
		return m
	}
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"all given", good, ""},
		{"missing", with("SCAN_DATABASE_URL", ""), "SCAN_DATABASE_URL is not set"},
		{"wrong role", with("FINDINGS_DATABASE_URL", "postgres://vulnscan_auth:"+pw+"@db/vulnscan"), `want the service's role "vulnscan_findings"`},
		{"admin user", with("AUTH_DATABASE_URL", "postgres://postgres:"+pw+"@db/vulnscan"), "want the service's role"},
		{"no password", with("AUTH_DATABASE_URL", "postgres://vulnscan_auth@db/vulnscan"), "has no password"},
		{"not a url", with("AUTH_DATABASE_URL", "host=db user=vulnscan_auth password="+pw), "not a postgres://"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := passwordsFromURLs("vulnscan_", func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), pw) {
					t.Fatalf("error reveals a password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"auth": pw + "a", "estimation": pw + "e", "scan": pw + "s", "findings": pw + "f"}
			for svc, p := range want {
				if got[svc] != p {
					t.Fatalf("%s: %q, want %q", svc, got[svc], p)
				}
			}
		})
	}
}
