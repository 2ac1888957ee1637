package app

import (
	"runtime"
	"testing"
	"time"

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

// Workers look for queued scans every 100 ms unless told otherwise, and
// refuse a cooldown longer than the poll or none at all.
func TestQueuePacing(t *testing.T) {
	for _, c := range []struct {
		env            map[string]string
		poll, cooldown time.Duration
		fails          bool
	}{
		{env: map[string]string{}, poll: 100 * time.Millisecond, cooldown: 20 * time.Millisecond},
		{env: map[string]string{"SCAN_QUEUE_POLL": "1s", "SCAN_QUEUE_FETCH_COOLDOWN": "50ms"}, poll: time.Second, cooldown: 50 * time.Millisecond},
		{env: map[string]string{"SCAN_QUEUE_POLL": "10ms"}, fails: true},
		{env: map[string]string{"SCAN_QUEUE_FETCH_COOLDOWN": "0s"}, fails: true},
	} {
		cfg, err := ReadConfig(config.FromMap(c.env))
		if c.fails {
			if err == nil {
				t.Errorf("env %v: accepted", c.env)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if cfg.FetchPoll != c.poll || cfg.FetchCooldown != c.cooldown {
			t.Errorf("env %v: poll %s cooldown %s, want %s and %s", c.env, cfg.FetchPoll, cfg.FetchCooldown, c.poll, c.cooldown)
		}
	}
}
