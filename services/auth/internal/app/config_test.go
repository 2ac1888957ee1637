package app

import (
	"strings"
	"testing"
	"time"

	"github.com/vulnscan/vulnscan/pkg/config"
)

func TestReadConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
		check   func(t *testing.T, c Config)
	}{
		{
			name: "defaults",
			env:  map[string]string{},
			check: func(t *testing.T, c Config) {
				if c.MaxActiveKeys != 10 {
					t.Errorf("MaxActiveKeys = %d, want 10", c.MaxActiveKeys)
				}
				if c.Service != "auth" {
					t.Errorf("Service = %q, want auth", c.Service)
				}
				if c.MetricsAddr != "127.0.0.1:9201" {
					t.Errorf("MetricsAddr = %q, want 127.0.0.1:9201", c.MetricsAddr)
				}
				if c.GRPCListen != config.DefaultAuthAddr {
					t.Errorf("GRPCListen = %q, want %q", c.GRPCListen, config.DefaultAuthAddr)
				}
				if c.AdminListen != config.DefaultAuthAdminAddr {
					t.Errorf("AdminListen = %q, want %q", c.AdminListen, config.DefaultAuthAdminAddr)
				}
				if c.ShutdownGrace != 20*time.Second {
					t.Errorf("ShutdownGrace = %v, want 20s", c.ShutdownGrace)
				}
			},
		},
		{
			name: "overrides",
			env: map[string]string{
				"VULNSCAN_MAX_ACTIVE_KEYS": "3",
				"AUTH_DATABASE_URL":        "postgres://127.0.0.1:5432/authdb",
				"DATABASE_URL":             "postgres://127.0.0.1:5432/shared",
				"METRICS_ADDR":             "127.0.0.1:1",
				"AUTH_GRPC_ADDR":           "127.0.0.1:2",
				"AUTH_ADMIN_GRPC_ADDR":     "127.0.0.1:3",
				"SHUTDOWN_GRACE":           "5s",
			},
			check: func(t *testing.T, c Config) {
				if c.MaxActiveKeys != 3 {
					t.Errorf("MaxActiveKeys = %d, want 3", c.MaxActiveKeys)
				}
				if c.DatabaseURL != "postgres://127.0.0.1:5432/authdb" {
					t.Errorf("DatabaseURL = %q, want the service's own URL", c.DatabaseURL)
				}
				if c.MetricsAddr != "127.0.0.1:1" || c.GRPCListen != "127.0.0.1:2" || c.AdminListen != "127.0.0.1:3" {
					t.Errorf("addresses = %q %q %q", c.MetricsAddr, c.GRPCListen, c.AdminListen)
				}
				if c.ShutdownGrace != 5*time.Second {
					t.Errorf("ShutdownGrace = %v, want 5s", c.ShutdownGrace)
				}
			},
		},
		{
			name: "listen addresses win over service addresses",
			env: map[string]string{
				"AUTH_GRPC_ADDR":    "127.0.0.1:2",
				"GRPC_LISTEN_ADDR":  "127.0.0.1:4",
				"ADMIN_LISTEN_ADDR": "127.0.0.1:5",
				"DATABASE_URL":      "postgres://127.0.0.1:5432/shared",
			},
			check: func(t *testing.T, c Config) {
				if c.GRPCListen != "127.0.0.1:4" || c.AdminListen != "127.0.0.1:5" {
					t.Errorf("GRPCListen, AdminListen = %q, %q", c.GRPCListen, c.AdminListen)
				}
				if c.AuthAddr != "127.0.0.1:2" {
					t.Errorf("AuthAddr = %q, want 127.0.0.1:2", c.AuthAddr)
				}
				if c.DatabaseURL != "postgres://127.0.0.1:5432/shared" {
					t.Errorf("DatabaseURL = %q, want the shared URL", c.DatabaseURL)
				}
			},
		},
		{name: "zero keys", env: map[string]string{"VULNSCAN_MAX_ACTIVE_KEYS": "0"}, wantErr: "VULNSCAN_MAX_ACTIVE_KEYS must be at least 1"},
		{name: "negative keys", env: map[string]string{"VULNSCAN_MAX_ACTIVE_KEYS": "-2"}, wantErr: "VULNSCAN_MAX_ACTIVE_KEYS must be at least 1"},
		{name: "keys not a number", env: map[string]string{"VULNSCAN_MAX_ACTIVE_KEYS": "ten"}, wantErr: `"ten" is not an integer`},
		{name: "bad grace", env: map[string]string{"SHUTDOWN_GRACE": "soon"}, wantErr: "SHUTDOWN_GRACE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ReadConfig(config.FromMap(tt.env))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ReadConfig error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadConfig: %v", err)
			}
			tt.check(t, c)
		})
	}
}
