package config

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// env sets the variables for the test and returns an Env over the process
// environment. Unset names in vars are given as "".
func env(t *testing.T, vars map[string]string) *Env {
	t.Helper()
	for k, v := range vars {
		t.Setenv(k, v)
	}
	return FromOS()
}

func TestString(t *testing.T) {
	e := env(t, map[string]string{"VS_T_SET": "  value  ", "VS_T_BLANK": "   ", "VS_T_EMPTY": ""})
	require.Equal(t, "value", e.String("VS_T_SET", "def"), "trimmed")
	require.Equal(t, "def", e.String("VS_T_BLANK", "def"), "blank counts as unset")
	require.Equal(t, "def", e.String("VS_T_EMPTY", "def"))
	require.Equal(t, "def", e.String("VS_T_NEVER_SET_ANYWHERE", "def"))
	require.NoError(t, e.Err())
}

func TestIntAndDuration(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		wantInt     int
		wantDur     time.Duration
		wantErrs    []string
	}{
		{"unset", "", 7, 3 * time.Second, nil},
		{"valid", " 42 ", 42, 3 * time.Second, []string{`VS_T_D: "42" is not a duration`}},
		{"negative", "-5", -5, 3 * time.Second, []string{`VS_T_D: "-5" is not a duration`}},
		{"duration", "1m30s", 7, 90 * time.Second, []string{`VS_T_I: "1m30s" is not an integer`}},
		{"garbage", "soon", 7, 3 * time.Second, []string{`VS_T_I: "soon" is not an integer`, `VS_T_D: "soon" is not a duration`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := env(t, map[string]string{"VS_T_I": tc.value, "VS_T_D": tc.value})
			require.Equal(t, tc.wantInt, e.Int("VS_T_I", 7))
			require.Equal(t, tc.wantDur, e.Duration("VS_T_D", 3*time.Second))
			if tc.wantErrs == nil {
				require.NoError(t, e.Err())
				return
			}
			for _, want := range tc.wantErrs {
				require.ErrorContains(t, e.Err(), want)
			}
		})
	}
}

func TestList(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{" a , b ,, c ,", []string{"a", "b", "c"}},
		{" , , ", nil},
	} {
		e := env(t, map[string]string{"VS_T_L": tc.value})
		require.Equal(t, tc.want, e.List("VS_T_L"), "%q", tc.value)
	}
}

func TestErrCollectsEveryProblem(t *testing.T) {
	e := env(t, map[string]string{"VS_T_A": "x", "VS_T_B": "y"})
	require.NoError(t, e.Err())
	_ = e.Int("VS_T_A", 0)
	_ = e.Duration("VS_T_B", 0)
	e.Fail(errors.New("VS_T_C: must be positive"))
	err := e.Err()
	require.Error(t, err)
	require.Equal(t, "VS_T_A: \"x\" is not an integer\nVS_T_B: \"y\" is not a duration\nVS_T_C: must be positive", err.Error())
}

func TestDatabaseURL(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]string
		want string
	}{
		{"default", map[string]string{"DATABASE_URL": "", "SCAN_DATABASE_URL": ""}, DefaultDatabaseURL},
		{"shared", map[string]string{"DATABASE_URL": "postgres://shared/db", "SCAN_DATABASE_URL": ""}, "postgres://shared/db"},
		{"the service's own wins", map[string]string{"DATABASE_URL": "postgres://shared/db", "SCAN_DATABASE_URL": "postgres://own/db"}, "postgres://own/db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, env(t, tc.vars).DatabaseURL("scan"))
		})
	}
}

// commonVars are the variables ReadCommon reads, cleared so that the
// machine's environment does not leak into a test.
var commonVars = []string{"METRICS_ADDR", "DATABASE_URL", "AUTH_DATABASE_URL", "SCAN_DATABASE_URL", "FINDINGS_DATABASE_URL",
	"ESTIMATION_DATABASE_URL", "REDIS_URL", "VULNSCAN_DATA_DIR", "AUTH_GRPC_ADDR", "ESTIMATION_GRPC_ADDR", "SCAN_GRPC_ADDR",
	"FINDINGS_GRPC_ADDR", "SHUTDOWN_GRACE", "GRPC_LISTEN_ADDR", "AUTH_ADMIN_GRPC_ADDR", "FINDINGS_ADMIN_GRPC_ADDR", "ADMIN_LISTEN_ADDR"}

func commonEnv(t *testing.T, set map[string]string) *Env {
	t.Helper()
	vars := map[string]string{}
	for _, k := range commonVars {
		vars[k] = ""
	}
	for k, v := range set {
		vars[k] = v
	}
	return env(t, vars)
}

func TestReadCommonDefaults(t *testing.T) {
	for _, tc := range []struct {
		service, listen, admin string
	}{
		{"auth", DefaultAuthAddr, DefaultAuthAdminAddr},
		{"estimation", DefaultEstimationAddr, ""},
		{"scan", DefaultScanAddr, ""},
		{"findings", DefaultFindingsAddr, DefaultFindingsAdminAddr},
	} {
		t.Run(tc.service, func(t *testing.T) {
			e := commonEnv(t, nil)
			c := ReadCommon(e, tc.service, "127.0.0.1:9999")
			require.NoError(t, e.Err())
			require.Equal(t, Common{
				Service:        tc.service,
				GRPCListen:     tc.listen,
				MetricsAddr:    "127.0.0.1:9999",
				DatabaseURL:    DefaultDatabaseURL,
				RedisURL:       DefaultRedisURL,
				DataDir:        DefaultDataDir,
				AuthAddr:       DefaultAuthAddr,
				EstimationAddr: DefaultEstimationAddr,
				ScanAddr:       DefaultScanAddr,
				FindingsAddr:   DefaultFindingsAddr,
				AdminListen:    tc.admin,
				ShutdownGrace:  20 * time.Second,
			}, c)
		})
	}
}

func TestReadCommonOverrides(t *testing.T) {
	e := commonEnv(t, map[string]string{
		"AUTH_GRPC_ADDR":       "10.0.0.1:1",
		"SCAN_GRPC_ADDR":       "10.0.0.3:3",
		"AUTH_ADMIN_GRPC_ADDR": "10.0.0.1:2",
		"AUTH_DATABASE_URL":    "postgres://auth/db",
		"REDIS_URL":            "redis://cache:6379/1",
		"SHUTDOWN_GRACE":       "5s",
		"METRICS_ADDR":         ":9000",
	})
	c := ReadCommon(e, "auth", "unused")
	require.NoError(t, e.Err())
	require.Equal(t, "10.0.0.1:1", c.GRPCListen, "a service listens on its own address by default")
	require.Equal(t, "10.0.0.1:2", c.AdminListen)
	require.Equal(t, "10.0.0.3:3", c.ScanAddr, "and dials its peers at theirs")
	require.Equal(t, "postgres://auth/db", c.DatabaseURL)
	require.Equal(t, "redis://cache:6379/1", c.RedisURL)
	require.Equal(t, 5*time.Second, c.ShutdownGrace)
	require.Equal(t, ":9000", c.MetricsAddr)

	// Listen addresses apart from the advertised ones (in a container the
	// service binds 0.0.0.0 and peers dial its name).
	e = commonEnv(t, map[string]string{"GRPC_LISTEN_ADDR": "0.0.0.0:9101", "ADMIN_LISTEN_ADDR": "0.0.0.0:9301", "SHUTDOWN_GRACE": "forever"})
	c = ReadCommon(e, "auth", "")
	require.Equal(t, "0.0.0.0:9101", c.GRPCListen)
	require.Equal(t, DefaultAuthAddr, c.AuthAddr)
	require.Equal(t, "0.0.0.0:9301", c.AdminListen)
	require.Equal(t, 20*time.Second, c.ShutdownGrace)
	require.ErrorContains(t, e.Err(), `SHUTDOWN_GRACE: "forever" is not a duration`)

	// A service without an admin API has no admin listener, even when the
	// variable is set for another process.
	e = commonEnv(t, map[string]string{"ADMIN_LISTEN_ADDR": "0.0.0.0:9301"})
	require.Empty(t, ReadCommon(e, "scan", "").AdminListen)
}
