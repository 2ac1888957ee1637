package systest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Redis is a private redis-server started for a test, which the test may
// stop and start again on the same port (fault tests).
type Redis struct {
	URL  string
	addr string
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// StartRedis starts a private redis-server on a free loopback port, with
// no persistence: a restart begins empty, like a lost cache.
func StartRedis() (*Redis, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "vulnscan-redis-")
	if err != nil {
		return nil, err
	}
	r := &Redis{addr: ports[0], dir: dir, URL: "redis://" + ports[0] + "/0"}
	return r, r.Start()
}

// Start (re)starts the server and waits until it answers.
func (r *Redis) Start() error {
	host, port, _ := strings.Cut(r.addr, ":")
	r.cmd = exec.Command("redis-server", "--bind", host, "--port", port, "--save", "", "--appendonly", "no", "--dir", r.dir)
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	r.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(r.cmd, r.done)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if pingRedis(r.URL) == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("private redis did not answer")
}

// Stop kills the server (as a crash would) and waits for it to exit.
func (r *Redis) Stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.done
	r.cmd = nil
}

// Close stops the server and removes its directory.
func (r *Redis) Close() {
	r.Stop()
	_ = os.RemoveAll(r.dir)
}

// Postgres is a private PostgreSQL cluster started for a test with initdb
// and pg_ctl from the machine's own binaries (as the postgres user when
// running as root), which the test may stop and start again.
type Postgres struct {
	URL  string // of database "vulnscan"
	port string
	dir  string
	bin  string
}

// StartPostgres initializes and starts a private cluster on a free port
// with fsync off (test data is disposable, commits still synchronous) and
// creates database vulnscan.
func StartPostgres() (*Postgres, error) {
	bin, err := pgBin()
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	_, port, _ := strings.Cut(ports[0], ":")
	dir, err := os.MkdirTemp("", "vulnscan-pg-")
	if err != nil {
		return nil, err
	}
	p := &Postgres{port: port, dir: filepath.Join(dir, "data"), bin: bin,
		URL: "postgres://postgres@127.0.0.1:" + port + "/vulnscan?sslmode=disable"}
	if err := os.Mkdir(p.dir, 0o700); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		// The server runs as postgres: it needs its directory and a way in.
		if err := exec.Command("chown", "-R", "postgres", dir).Run(); err != nil {
			return nil, fmt.Errorf("chown cluster directory: %w", err)
		}
		_ = os.Chmod(dir, 0o755)
	}
	if out, err := p.asPostgres(filepath.Join(bin, "initdb"), "-D", p.dir, "-A", "trust", "-U", "postgres", "-N").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w: %s", err, out)
	}
	if err := p.Start(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, strings.Replace(p.URL, "/vulnscan?", "/postgres?", 1))
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, "CREATE DATABASE vulnscan"); err != nil {
		return nil, fmt.Errorf("create database: %w", err)
	}
	return p, nil
}

func (p *Postgres) asPostgres(name string, args ...string) *exec.Cmd {
	if os.Geteuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
	}
	return exec.Command(name, args...)
}

// Start (re)starts the cluster and waits until it accepts connections.
func (p *Postgres) Start() error {
	// fsync is off (the machine does not crash under a test), but commits
	// stay synchronous: Stop is a crash of the server, and a commit it
	// acknowledged must survive it, as the fault tests check.
	opts := "-c listen_addresses=127.0.0.1 -p " + p.port + " -k " + p.dir + " -c fsync=off -c full_page_writes=off -c max_connections=200"
	if out, err := p.asPostgres(filepath.Join(p.bin, "pg_ctl"), "-D", p.dir, "-o", opts, "-l", filepath.Join(p.dir, "server.log"), "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl start: %w: %s", err, out)
	}
	return nil
}

// Stop stops the cluster at once (immediate mode, as a crash would).
func (p *Postgres) Stop() error {
	if out, err := p.asPostgres(filepath.Join(p.bin, "pg_ctl"), "-D", p.dir, "-m", "immediate", "-w", "stop").CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl stop: %w: %s", err, out)
	}
	return nil
}

// Close stops the cluster and removes its files.
func (p *Postgres) Close() {
	_ = p.Stop()
	_ = os.RemoveAll(filepath.Dir(p.dir))
}

// pgBin finds the directory of initdb and pg_ctl.
func pgBin() (string, error) {
	if path, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(path), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Strings(dirs)
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i], nil
		}
	}
	return "", errors.New("initdb not found (install postgresql)")
}
