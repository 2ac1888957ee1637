// Package systest starts the whole vulnscan system — every service process
// and the gateway, from their real binaries — on free loopback ports with a
// fresh database, for end-to-end tests through the REST API. Binaries come
// from VULNSCAN_BIN_DIR (set by make test) or are built once into a
// temporary directory.
package systest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"

	"github.com/vulnscan/vulnscan/pkg/config"
	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/dbtest"
	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/server"
)

// Options change how the system starts.
type Options struct {
	// Env adds or overrides environment variables of every process.
	Env map[string]string
	// DatabaseURL, when set, is used as it is instead of a fresh database
	// on the shared server (e.g. a private cluster from StartPostgres).
	DatabaseURL string
	// RedisURL, when set, replaces REDIS_URL (e.g. from StartRedis).
	RedisURL string
}

// System is a running vulnscan.
type System struct {
	BaseURL     string // http://127.0.0.1:PORT/v1
	HTTPAddr    string
	DatabaseURL string            // the administrator's URL (a superuser)
	RoleURLs    map[string]string // each service's own URL, as its role
	RedisURL    string
	DataDir     string
	Addrs       map[string]string // gRPC address per service
	AdminAddrs  map[string]string // admin gRPC address of auth and findings
	PKIDir      string            // the local CA, every identity's certificate and the gateway's signing key
	Metrics     map[string]string // metrics address per process
	Env         []string          // environment of the processes

	bin   string
	tmp   string
	drop  func()
	roles []string
	mu    sync.Mutex
	procs map[string]*proc
	Log   *lockedBuffer
}

var services = []string{"auth", "estimation", "scan", "findings"}

// Run starts a system for a test binary's TestMain, runs the tests and stops
// it. Use: func TestMain(m *testing.M) { os.Exit(systest.Run(m, opts, &sys)) }
func Run(m *testing.M, opts Options, sys **System) int {
	s, err := Start(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "systest: cannot start the system:", err)
		return 1
	}
	*sys = s
	code := m.Run()
	if code != 0 {
		fmt.Fprintln(os.Stderr, "---- system log (tail) ----")
		fmt.Fprintln(os.Stderr, tail(s.Log.String(), 200))
	}
	s.Stop()
	return code
}

// Main is the TestMain of a package of end-to-end tests that needs only
// env added to the system's environment: it starts the system into *sys,
// runs the tests, stops the system and exits.
func Main(m *testing.M, sys **System, env map[string]string) {
	os.Exit(Run(m, Options{Env: env}, sys))
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Start builds (if needed) and starts every process and waits until /readyz answers.
func Start(opts Options) (*System, error) {
	tmp, err := os.MkdirTemp("", "vulnscan-systest-")
	if err != nil {
		return nil, err
	}
	s := &System{tmp: tmp, procs: map[string]*proc{}, Log: &lockedBuffer{}, Addrs: map[string]string{}, AdminAddrs: map[string]string{}, Metrics: map[string]string{}}
	fail := func(err error) (*System, error) { s.Stop(); return nil, err }

	if s.bin, err = binaries(); err != nil {
		return fail(err)
	}
	if opts.DatabaseURL != "" {
		s.DatabaseURL = opts.DatabaseURL
	} else {
		url, drop, err := dbtest.CreateDatabase(context.Background(), "vssys")
		if err != nil {
			return fail(err)
		}
		s.DatabaseURL, s.drop = url, drop
	}
	s.RedisURL = opts.RedisURL
	if s.RedisURL == "" {
		s.RedisURL = os.Getenv("REDIS_URL")
	}
	// Every service connects as its own role, as under make run. Roles are
	// global to the server: they are named after this system's database so
	// that systems running side by side do not share them.
	cfg, err := pgx.ParseConfig(s.DatabaseURL)
	if err != nil {
		return fail(err)
	}
	prefix := cfg.Database + "_"
	for _, svc := range db.Services {
		s.roles = append(s.roles, prefix+svc)
	}
	s.RoleURLs, err = db.ProvisionRoles(context.Background(), s.DatabaseURL, db.RoleOptions{Prefix: prefix, PasswordDir: filepath.Join(tmp, "db-roles")})
	if err != nil {
		return fail(fmt.Errorf("per-service database roles: %w", err))
	}
	if s.RedisURL == "" {
		s.RedisURL = config.DefaultRedisURL
	}
	if err := pingRedis(s.RedisURL); err != nil {
		return fail(fmt.Errorf("redis at %s (run tests with make test): %w", s.RedisURL, err))
	}
	s.DataDir = filepath.Join(tmp, "data")
	s.PKIDir = filepath.Join(tmp, "pki")
	if err := mtls.Generate(s.PKIDir, mtls.Identities...); err != nil {
		return fail(err)
	}
	if err := principal.GenerateKeys(s.PKIDir); err != nil {
		return fail(err)
	}
	ports, err := freePorts(12)
	if err != nil {
		return fail(err)
	}
	s.HTTPAddr = ports[0]
	s.BaseURL = "http://" + s.HTTPAddr + "/v1"
	env := map[string]string{
		"VULNSCAN_HTTP_ADDR":             s.HTTPAddr,
		"DATABASE_URL":                   s.DatabaseURL,
		"REDIS_URL":                      s.RedisURL,
		"VULNSCAN_DATA_DIR":              s.DataDir,
		"VULNSCAN_ALLOWED_PRIVATE_CIDRS": "127.0.0.0/8",
		"SCAN_MODE":                      "all",
		"LOG_LEVEL":                      "info",
		"SHUTDOWN_GRACE":                 "5s",
		"VULNSCAN_PKI_DIR":               s.PKIDir,
		"AUTH_ADMIN_GRPC_ADDR":           ports[10],
		"FINDINGS_ADMIN_GRPC_ADDR":       ports[11],
	}
	s.AdminAddrs["auth"], s.AdminAddrs["findings"] = ports[10], ports[11]
	for i, name := range services {
		s.Addrs[name] = ports[1+i]
		env[strings.ToUpper(name)+"_GRPC_ADDR"] = ports[1+i]
		if u := s.RoleURLs[name]; u != "" {
			env[strings.ToUpper(name)+"_DATABASE_URL"] = u
		}
	}
	for k, v := range opts.Env {
		env[k] = v
	}
	base := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "VULNSCAN_") || strings.HasSuffix(k, "_GRPC_ADDR") || strings.HasSuffix(k, "DATABASE_URL") ||
			k == "REDIS_URL" || k == "METRICS_ADDR" || k == "GRPC_LISTEN_ADDR" || k == "ADMIN_LISTEN_ADDR" || k == "SCAN_MODE" ||
			strings.HasSuffix(k, "_SECRET_KEY") || strings.HasSuffix(k, "_SECRET_KEYS") {
			continue
		}
		base = append(base, kv)
	}
	for k, v := range env {
		base = append(base, k+"="+v)
	}
	s.Env = base
	for i, name := range append(append([]string{}, services...), "gateway") {
		s.Metrics[name] = ports[5+i]
		if err := s.start(name, "METRICS_ADDR="+ports[5+i]); err != nil {
			return fail(err)
		}
	}
	if err := s.waitReady(90 * time.Second); err != nil {
		return fail(fmt.Errorf("%w\n%s", err, tail(s.Log.String(), 60)))
	}
	return s, nil
}

func (s *System) start(name string, extraEnv ...string) error {
	cmd := exec.Command(filepath.Join(s.bin, name))
	cmd.Env = append(append([]string{}, s.Env...), extraEnv...)
	w := &prefixWriter{prefix: "[" + name + "] ", buf: s.Log}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.procs[name] = &proc{cmd: cmd, done: done}
	s.mu.Unlock()
	return nil
}

// proc is a running process and a channel closed when it exits.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Kill stops one process abruptly (SIGKILL), for crash tests.
func (s *System) Kill(name string) error { return s.stop(name, syscall.SIGKILL) }

// Terminate stops one process gracefully (SIGTERM) and waits for it.
func (s *System) Terminate(name string) error { return s.stop(name, syscall.SIGTERM) }

// stop sends sig to one process and waits up to 30 s for it to exit.
func (s *System) stop(name string, sig syscall.Signal) error {
	s.mu.Lock()
	p := s.procs[name]
	delete(s.procs, name)
	s.mu.Unlock()
	if p == nil {
		return fmt.Errorf("%s is not running", name)
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
		return nil
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not stop within 30s of %s", name, sig)
	}
}

// Restart starts a process again after Kill, on the same addresses.
func (s *System) Restart(name string) error {
	return s.start(name, "METRICS_ADDR="+s.Metrics[name])
}

func (s *System) waitReady(d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + s.HTTPAddr + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		s.mu.Lock()
		for name, p := range s.procs {
			if p.exited() {
				s.mu.Unlock()
				return fmt.Errorf("%s exited", name)
			}
		}
		s.mu.Unlock()
		time.Sleep(200 * time.Millisecond)
	}
	return errors.New("system not ready in time")
}

// Stop stops every process gracefully and drops the database.
func (s *System) Stop() {
	s.mu.Lock()
	procs := s.procs
	s.procs = map[string]*proc{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(15 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		}()
	}
	wg.Wait()
	if s.drop != nil {
		s.drop()
		dropRoles(s.DatabaseURL, s.roles)
	}
	_ = os.RemoveAll(s.tmp)
}

// Identity loads the certificate of one of the system's identities
// (mtls.Gateway, mtls.Scan, mtls.Operator, …).
func (s *System) Identity(name string) (*mtls.Identity, error) {
	dir := s.PKIDir
	return mtls.Load(mtls.Files{CA: filepath.Join(dir, "ca.crt"), Cert: filepath.Join(dir, name+".crt"), Key: filepath.Join(dir, name+".key")}, name)
}

// Dial connects to service's main listener (admin listener when admin) as
// the identity as, with its certificate, even where pkg/topology lists no
// such edge: tests use it to prove the server refuses what no process may
// call.
func (s *System) Dial(service, as string, admin bool) (*grpc.ClientConn, error) {
	id, err := s.Identity(as)
	if err != nil {
		return nil, err
	}
	addr := s.Addrs[service]
	if admin {
		addr = s.AdminAddrs[service]
	}
	return server.DialUnlisted(addr, id, service)
}

// Signer returns the gateway's identity signer, for tests that act as the
// gateway.
func (s *System) Signer() (*principal.Signer, error) {
	return principal.SignerFromEnv(config.FromMap(map[string]string{"VULNSCAN_PKI_DIR": s.PKIDir}))
}

// Ctl runs vulnscanctl against the system and decodes its JSON output.
func (s *System) Ctl(args ...string) (map[string]any, error) {
	out, err := s.CtlRaw(nil, args...)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("vulnscanctl printed non-JSON %q: %w", out, err)
	}
	return m, nil
}

// CtlRaw runs vulnscanctl with extra environment and returns its stdout.
func (s *System) CtlRaw(extraEnv []string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(s.bin, "vulnscanctl"), args...)
	cmd.Env = append(append([]string{}, s.Env...), extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("vulnscanctl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// Response is a decoded API answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a map.
func (r Response) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Do sends a request with the API key (none when key is ""). body may be nil,
// a []byte / string sent as is, or a value encoded as JSON.
func (s *System) Do(method, path, key string, body any) (Response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return Response{}, err
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, s.BaseURL+path, rd)
	if err != nil {
		return Response{}, err
	}
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, err
}

// Org is an organization created for a test with a read-write and a read key.
type Org struct {
	ID, UserID, WriteKey, WriteKeyID, ReadKey, ReadKeyID string
}

// NewOrg creates an organization with credits and verification mode ("auto" or "manual").
func (s *System) NewOrg(credits int, mode string) (Org, error) {
	name := fmt.Sprintf("org-%d-%s", time.Now().UnixNano(), randHex(3))
	o, err := s.Ctl("org", "create", "--name", name, "--credits", fmt.Sprint(credits), "--verification", mode)
	if err != nil {
		return Org{}, err
	}
	org := Org{ID: o["org_id"].(string), UserID: o["user_id"].(string)}
	w, err := s.Ctl("key", "create", "--org", org.ID, "--scopes", "read,write", "--name", "rw")
	if err != nil {
		return Org{}, err
	}
	r, err := s.Ctl("key", "create", "--org", org.ID, "--scopes", "read", "--name", "ro")
	if err != nil {
		return Org{}, err
	}
	org.WriteKey, org.WriteKeyID = w["key"].(string), w["id"].(string)
	org.ReadKey, org.ReadKeyID = r["key"].(string), r["id"].(string)
	return org, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func pingRedis(url string) error {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return err
	}
	c := redis.NewClient(opt)
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.Ping(ctx).Err()
}

func freePorts(n int) ([]string, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	out := make([]string, n)
	for i := range out {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out[i] = l.Addr().String()
	}
	return out, nil
}

var buildOnce struct {
	sync.Once
	dir string
	err error
}

// binaries returns the directory holding the built binaries.
func binaries() (string, error) {
	if d := os.Getenv("VULNSCAN_BIN_DIR"); d != "" {
		return d, nil
	}
	buildOnce.Do(func() {
		root, err := repoRoot()
		if err != nil {
			buildOnce.err = err
			return
		}
		dir, err := os.MkdirTemp("", "vulnscan-bin-")
		if err != nil {
			buildOnce.err = err
			return
		}
		cmd := exec.Command("go", "build", "-o", dir+"/", "./gateway/cmd/gateway", "./gateway/cmd/vulnscanctl", "./pkg/cmd/vulnscan",
			"./services/auth/cmd/auth", "./services/estimation/cmd/estimation", "./services/scan/cmd/scan", "./services/findings/cmd/findings", "./pkg/cmd/vulnscan-pki")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildOnce.err = fmt.Errorf("build binaries: %w\n%s", err, out)
			return
		}
		buildOnce.dir = dir
	})
	return buildOnce.dir, buildOnce.err
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.work not found above the working directory")
		}
		dir = parent
	}
}

// logSettle is how long SettledLog waits: several times the 50 ms within
// which a process writes a batched info line, plus the pipe's copy.
const logSettle = 300 * time.Millisecond

// SettledLog returns the processes' log once the lines they logged before
// the call have been written: each process writes info lines in batches,
// up to 50 ms after logging them, so a check that a line is absent must
// not read the log at once, or it passes for a line still in a batch.
func (s *System) SettledLog() string {
	time.Sleep(logSettle)
	return s.Log.String()
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type prefixWriter struct {
	prefix string
	buf    *lockedBuffer
	mu     sync.Mutex
	part   []byte
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.part = append(w.part, p...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		_, _ = w.buf.Write(append([]byte(w.prefix), w.part[:i+1]...))
		w.part = w.part[i+1:]
	}
	return len(p), nil
}

// dropRoles drops the system's database roles on the server of url once
// the system's database is gone (a role that still owns objects elsewhere is
// left, with no harm).
func dropRoles(url string, roles []string) {
	if len(roles) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return
	}
	cfg.Database = "postgres"
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return
	}
	defer func() { _ = c.Close(ctx) }()
	for _, r := range roles {
		_, _ = c.Exec(ctx, "DROP ROLE IF EXISTS "+pgx.Identifier{r}.Sanitize())
	}
}

// BinDir is the directory of the binaries the system runs, vulnscanctl
// included.
func (s *System) BinDir() string { return s.bin }
