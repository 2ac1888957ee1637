package app

import (
	"runtime"
	"testing"

	"github.com/vulnscan/vulnscan/pkg/config"
)

// Without SCAN_WORKERS a process runs two scans per core; the variable
// overrides it.
func TestWorkersDefault(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want int
	}{
		{map[string]string{}, 2 * runtime.GOMAXPROCS(0)},
		{map[string]string{"SCAN_WORKERS": "3"}, 3},
	} {
		cfg, err := ReadConfig(config.FromMap(c.env))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Workers != c.want {
			t.Errorf("env %v: %d workers, want %d", c.env, cfg.Workers, c.want)
		}
	}
}
