package mtls

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/vulnscan/vulnscan/pkg/config"
)

func filesIn(dir, name string) Files {
	return Files{CA: filepath.Join(dir, "ca.crt"), Cert: filepath.Join(dir, name+".crt"), Key: filepath.Join(dir, name+".key")}
}

func loadFrom(t *testing.T, dir, name string) *Identity {
	t.Helper()
	id, err := Load(filesIn(dir, name), name)
	require.NoError(t, err)
	return id
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	blk, _ := pem.Decode(b)
	require.NotNil(t, blk, path)
	c, err := x509.ParseCertificate(blk.Bytes)
	require.NoError(t, err)
	return c
}

func spiffe(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

func TestNameOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		uris []*url.URL
		want string // "" means refused
	}{
		{"one identity", []*url.URL{spiffe("spiffe://vulnscan/scan")}, "scan"},
		{"foreign URIs are ignored", []*url.URL{spiffe("https://vulnscan/x"), spiffe("spiffe://other/auth"), spiffe("spiffe://vulnscan/auth")}, "auth"},
		{"no URI", nil, ""},
		{"only another trust domain", []*url.URL{spiffe("spiffe://other/gateway")}, ""},
		{"empty name", []*url.URL{spiffe("spiffe://vulnscan/")}, ""},
		{"nested path", []*url.URL{spiffe("spiffe://vulnscan/ns/gateway")}, ""},
		{"two identities", []*url.URL{spiffe("spiffe://vulnscan/gateway"), spiffe("spiffe://vulnscan/operator")}, ""},
	} {
		got, err := NameOf(&x509.Certificate{URIs: tc.uris})
		if tc.want == "" {
			require.Error(t, err, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}
	require.Equal(t, "spiffe://vulnscan/findings", URI(Findings).String())
}

// What Generate issues: a CA that can sign only leaves, and leaves that
// carry their SPIFFE id, loopback names and both TLS usages, in private files.
func TestGenerateIssues(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pki")
	require.NoError(t, Generate(dir, Identities...))

	ca := readCert(t, filepath.Join(dir, "ca.crt"))
	require.True(t, ca.IsCA)
	require.True(t, ca.MaxPathLenZero)
	require.Equal(t, x509.KeyUsageCertSign|x509.KeyUsageCRLSign, ca.KeyUsage)
	require.WithinDuration(t, time.Now().Add(CALifetime), ca.NotAfter, 2*time.Hour)

	info, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), info.Mode().Perm())

	for _, n := range Identities {
		c := readCert(t, filepath.Join(dir, n+".crt"))
		require.NoError(t, c.CheckSignatureFrom(ca), n)
		require.False(t, c.IsCA, n)
		name, err := NameOf(c)
		require.NoError(t, err)
		require.Equal(t, n, name)
		require.Equal(t, []string{n, "localhost"}, c.DNSNames)
		require.Len(t, c.IPAddresses, 2)
		require.True(t, c.IPAddresses[0].Equal(net.IPv4(127, 0, 0, 1)))
		require.True(t, c.IPAddresses[1].Equal(net.IPv6loopback))
		require.ElementsMatch(t, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, c.ExtKeyUsage)
		require.WithinDuration(t, time.Now().Add(LeafLifetime), c.NotAfter, 2*time.Hour)
		for _, f := range []string{n + ".crt", n + ".key"} {
			info, err := os.Stat(filepath.Join(dir, f))
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), f)
		}
		id := loadFrom(t, dir, n)
		require.Equal(t, n, id.Name)
	}
	matches, err := filepath.Glob(filepath.Join(dir, "*.tmp"))
	require.NoError(t, err)
	require.Empty(t, matches, "no temporary files are left behind")
}

// A leaf within a week of expiring is re-issued; one with longer to live
// is kept.
func TestGenerateRenewsNearExpiry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		left    time.Duration
		renewed bool
	}{
		{"one day left", 24 * time.Hour, true},
		{"expired", -time.Hour, true},
		{"a month left", 30 * 24 * time.Hour, false},
	} {
		dir := t.TempDir()
		require.NoError(t, Generate(dir))
		ca, caKey, err := readPair(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"))
		require.NoError(t, err)
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl := &x509.Certificate{
			SerialNumber: serial(), Subject: pkix.Name{CommonName: Scan},
			NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(tc.left),
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			URIs:        []*url.URL{URI(Scan)},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
		require.NoError(t, err)
		require.NoError(t, writeKey(filepath.Join(dir, "scan.key"), key))
		require.NoError(t, writePEM(filepath.Join(dir, "scan.crt"), "CERTIFICATE", der))

		require.NoError(t, Generate(dir, Scan))
		after := readCert(t, filepath.Join(dir, "scan.crt"))
		if tc.renewed {
			require.WithinDuration(t, time.Now().Add(LeafLifetime), after.NotAfter, 2*time.Hour, tc.name)
			loadFrom(t, dir, Scan) // the new key matches the new certificate
		} else {
			require.Equal(t, der, after.Raw, tc.name)
		}
	}
}

func TestGenerateRefusesABrokenCA(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, Generate(dir))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca.key"), []byte("not pem"), 0o600))
	err := Generate(dir, Gateway)
	require.ErrorContains(t, err, "local CA")
	_, err = os.Stat(filepath.Join(dir, "gateway.crt"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing is issued by a CA that cannot be read")
}

func TestLoadRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, Generate(dir, Gateway, Auth))
	empty := filepath.Join(dir, "empty.crt")
	require.NoError(t, os.WriteFile(empty, []byte("no certificates here"), 0o600))

	// A certificate without a SPIFFE id, signed by the same CA.
	ca, caKey, err := readPair(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"))
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: serial(), NotBefore: time.Now(),
		NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"anon"}}, ca, key.Public(), caKey)
	require.NoError(t, err)
	require.NoError(t, writeKey(filepath.Join(dir, "anon.key"), key))
	require.NoError(t, writePEM(filepath.Join(dir, "anon.crt"), "CERTIFICATE", der))

	for _, tc := range []struct {
		name  string
		files Files
		want  string
		err   string
	}{
		{"missing CA", Files{CA: filepath.Join(dir, "nope.crt"), Cert: filesIn(dir, Gateway).Cert, Key: filesIn(dir, Gateway).Key}, Gateway, "read CA bundle"},
		{"CA bundle without certificates", Files{CA: empty, Cert: filesIn(dir, Gateway).Cert, Key: filesIn(dir, Gateway).Key}, Gateway, "holds no certificate"},
		{"key of another identity", Files{CA: filesIn(dir, Gateway).CA, Cert: filesIn(dir, Gateway).Cert, Key: filesIn(dir, Auth).Key}, Gateway, "load certificate"},
		{"no SPIFFE id", filesIn(dir, "anon"), "", "no spiffe://vulnscan/<name> identity"},
		{"identity other than wanted", filesIn(dir, Auth), Gateway, `is for "auth", not "gateway"`},
	} {
		_, err := Load(tc.files, tc.want)
		require.ErrorContains(t, err, tc.err, tc.name)
	}
	// An empty want accepts whichever identity the certificate names.
	id, err := Load(filesIn(dir, Auth), "")
	require.NoError(t, err)
	require.Equal(t, Auth, id.Name)
}

// handshake runs one TLS handshake on loopback between a server holding
// srv and a client holding cli that expects to reach want. It returns the
// identity Caller reads from the server side of the connection on success,
// the client's error and the server's error.
func handshake(t *testing.T, srv, cli *Identity, want string) (caller string, clientErr, serverErr error) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer lis.Close()
	type result struct {
		err    error
		caller string
	}
	done := make(chan result, 1)
	go func() {
		c, err := lis.Accept()
		if err != nil {
			done <- result{err: err}
			return
		}
		defer c.Close()
		sc := tls.Server(c, srv.ServerConfig())
		if err := sc.Handshake(); err != nil {
			done <- result{err: err}
			return
		}
		// With TLS 1.3 the server learns of a client's refusal on its
		// first read: wait for the client's one byte.
		if _, err := sc.Read(make([]byte, 1)); err != nil {
			done <- result{err: err}
			return
		}
		ctx := peer.NewContext(context.Background(), &peer.Peer{AuthInfo: credentials.TLSInfo{State: sc.ConnectionState()}})
		name, _ := Caller(ctx)
		done <- result{caller: name}
	}()
	c, err := net.Dial("tcp", lis.Addr().String())
	require.NoError(t, err)
	cc := tls.Client(c, cli.ClientConfig(want))
	clientErr = cc.Handshake()
	if clientErr == nil {
		_, clientErr = cc.Write([]byte{1})
	}
	if clientErr == nil {
		// A server that refused the client's certificate says so on
		// the client's next read.
		_ = cc.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, readErr := cc.Read(make([]byte, 1))
		if readErr != nil && !errors.Is(readErr, io.EOF) && !os.IsTimeout(readErr) {
			clientErr = readErr
		}
	}
	_ = cc.Close()
	r := <-done
	return r.caller, clientErr, r.err
}

// Servers and clients accept only peers whose chain verifies against their
// CA bundle, and a client accepts only the server identity it asked for.
func TestMutualTLS(t *testing.T) {
	t.Parallel()
	home, foreign := t.TempDir(), t.TempDir()
	require.NoError(t, Generate(home, Auth, Gateway, Operator))
	require.NoError(t, Generate(foreign, Auth, Gateway))

	// A bundle holding both CAs (how the CA is rotated): it trusts either.
	rotating := t.TempDir()
	a, err := os.ReadFile(filepath.Join(home, "ca.crt"))
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(foreign, "ca.crt"))
	require.NoError(t, err)
	bundle := filepath.Join(rotating, "ca.crt")
	require.NoError(t, os.WriteFile(bundle, append(a, b...), 0o600))
	both, err := Load(Files{CA: bundle, Cert: filesIn(home, Auth).Cert, Key: filesIn(home, Auth).Key}, Auth)
	require.NoError(t, err)
	newClient, err := Load(Files{CA: bundle, Cert: filesIn(foreign, Gateway).Cert, Key: filesIn(foreign, Gateway).Key}, Gateway)
	require.NoError(t, err)

	for _, tc := range []struct {
		name     string
		srv, cli *Identity
		want     string
		ok       bool
		caller   string
	}{
		{"same CA, expected server", loadFrom(t, home, Auth), loadFrom(t, home, Gateway), Auth, true, Gateway},
		{"operator calling auth", loadFrom(t, home, Auth), loadFrom(t, home, Operator), Auth, true, Operator},
		{"server is another identity", loadFrom(t, home, Gateway), loadFrom(t, home, Operator), Auth, false, ""},
		{"server from a foreign CA", loadFrom(t, foreign, Auth), loadFrom(t, home, Gateway), Auth, false, ""},
		{"client from a foreign CA", loadFrom(t, home, Auth), loadFrom(t, foreign, Gateway), Auth, false, ""},
		{"during a CA rotation old and new certificates meet", both, newClient, Auth, true, Gateway},
		{"a client that trusts only the new CA refuses the old server", both, loadFrom(t, foreign, Gateway), Auth, false, ""},
	} {
		caller, cErr, sErr := handshake(t, tc.srv, tc.cli, tc.want)
		if tc.ok {
			require.NoError(t, cErr, tc.name)
			require.NoError(t, sErr, tc.name)
			require.Equal(t, tc.caller, caller, tc.name)
			continue
		}
		require.True(t, cErr != nil || sErr != nil, "%s: the handshake must fail", tc.name)
		require.Empty(t, caller, tc.name)
	}
}

func TestClientRefusalReasons(t *testing.T) {
	t.Parallel()
	home, foreign := t.TempDir(), t.TempDir()
	require.NoError(t, Generate(home, Auth, Gateway))
	require.NoError(t, Generate(foreign, Auth))
	cfg := loadFrom(t, home, Gateway).ClientConfig(Auth)

	require.ErrorContains(t, cfg.VerifyConnection(tls.ConnectionState{}), "no certificate")
	own := readCert(t, filepath.Join(home, "auth.crt"))
	require.NoError(t, cfg.VerifyConnection(tls.ConnectionState{PeerCertificates: []*x509.Certificate{own}}))
	stranger := readCert(t, filepath.Join(foreign, "auth.crt"))
	require.ErrorContains(t, cfg.VerifyConnection(tls.ConnectionState{PeerCertificates: []*x509.Certificate{stranger}}), "server certificate")
	other := readCert(t, filepath.Join(home, "gateway.crt"))
	require.ErrorContains(t, cfg.VerifyConnection(tls.ConnectionState{PeerCertificates: []*x509.Certificate{other}}), `server is "gateway", expected "auth"`)

	sc := loadFrom(t, home, Auth).ServerConfig()
	require.Equal(t, tls.RequireAndVerifyClientCert, sc.ClientAuth)
	require.Equal(t, uint16(tls.VersionTLS13), sc.MinVersion)
	require.Equal(t, uint16(tls.VersionTLS13), cfg.MinVersion)
}

func TestCallerWithoutVerifiedTLS(t *testing.T) {
	t.Parallel()
	for _, ctx := range []context.Context{
		context.Background(),
		peer.NewContext(context.Background(), &peer.Peer{}),
		peer.NewContext(context.Background(), &peer.Peer{AuthInfo: credentials.TLSInfo{}}),
	} {
		name, ok := Caller(ctx)
		require.False(t, ok)
		require.Empty(t, name)
	}
}

// The files of an identity default to <PKI dir>/ca.crt, <name>.crt and
// <name>.key; each variable overrides one.
func TestFilesFromEnv(t *testing.T) {
	t.Setenv("VULNSCAN_PKI_DIR", "/etc/pki-test")
	t.Setenv("VULNSCAN_TLS_CA", "")
	t.Setenv("VULNSCAN_TLS_CERT", "")
	t.Setenv("VULNSCAN_TLS_KEY", "")
	require.Equal(t, Files{CA: "/etc/pki-test/ca.crt", Cert: "/etc/pki-test/scan.crt", Key: "/etc/pki-test/scan.key"},
		FilesFromEnv(config.FromOS(), Scan))
	t.Setenv("VULNSCAN_TLS_CA", "/run/ca.pem")
	t.Setenv("VULNSCAN_TLS_KEY", "/run/key.pem")
	require.Equal(t, Files{CA: "/run/ca.pem", Cert: "/etc/pki-test/scan.crt", Key: "/run/key.pem"},
		FilesFromEnv(config.FromOS(), Scan))

	dir := t.TempDir()
	require.NoError(t, Generate(dir, Scan))
	t.Setenv("VULNSCAN_PKI_DIR", dir)
	t.Setenv("VULNSCAN_TLS_CA", "")
	t.Setenv("VULNSCAN_TLS_KEY", "")
	id, err := LoadFromEnv(config.FromOS(), Scan)
	require.NoError(t, err)
	require.Equal(t, Scan, id.Name)
	_, err = LoadFromEnv(config.FromOS(), Auth)
	require.ErrorContains(t, err, "load certificate")
}
