// Package mtls gives every vulnscan process its own identity on the internal
// gRPC plane: an X.509 certificate issued by the deployment's CA whose URI
// SAN is spiffe://vulnscan/<name> (gateway, auth, estimation, scan,
// findings, operator). Servers require and verify a client certificate and
// learn the caller's name from it — never from metadata; clients verify the
// server's chain and that its URI SAN names the service they meant to reach,
// so an address (a Kubernetes Service name, a loopback port) is never what
// authenticates a server.
//
// Files: a process reads the CA bundle, its certificate and its key from
// VULNSCAN_TLS_CA, VULNSCAN_TLS_CERT and VULNSCAN_TLS_KEY, which default to
// ca.crt, <name>.crt and <name>.key in VULNSCAN_PKI_DIR (default
// <VULNSCAN_DATA_DIR>/pki, where `make run` and the test harness generate a
// local CA with Generate). The CA bundle may hold several certificates, which
// is how the CA is rotated without downtime (see the README).
package mtls

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/vulnscan/vulnscan/pkg/config"
)

// TrustDomain is the SPIFFE trust domain of every vulnscan identity.
const TrustDomain = "vulnscan"

// Process identities.
const (
	Gateway    = "gateway"
	Auth       = "auth"
	Estimation = "estimation"
	Scan       = "scan"
	Findings   = "findings"
	Operator   = "operator"
)

// Identities lists every identity a local deployment issues a certificate for.
var Identities = []string{Gateway, Auth, Estimation, Scan, Findings, Operator}

// URI returns the SPIFFE id of name.
func URI(name string) *url.URL {
	return &url.URL{Scheme: "spiffe", Host: TrustDomain, Path: "/" + name}
}

// NameOf returns the vulnscan identity a certificate carries: the path of its
// spiffe://vulnscan/ URI SAN. It fails when there is none or several.
func NameOf(cert *x509.Certificate) (string, error) {
	name := ""
	for _, u := range cert.URIs {
		if u.Scheme != "spiffe" || u.Host != TrustDomain {
			continue
		}
		n := strings.TrimPrefix(u.Path, "/")
		if n == "" || strings.Contains(n, "/") || name != "" {
			return "", errors.New("certificate has no single spiffe://vulnscan/<name> identity")
		}
		name = n
	}
	if name == "" {
		return "", errors.New("certificate has no spiffe://vulnscan/<name> identity")
	}
	return name, nil
}

// Files names the PEM files of one identity.
type Files struct {
	CA, Cert, Key string
}

// FilesFromEnv returns where the process called name finds its files.
func FilesFromEnv(env *config.Env, name string) Files {
	dir := PKIDir(env)
	return Files{
		CA:   env.String("VULNSCAN_TLS_CA", filepath.Join(dir, "ca.crt")),
		Cert: env.String("VULNSCAN_TLS_CERT", filepath.Join(dir, name+".crt")),
		Key:  env.String("VULNSCAN_TLS_KEY", filepath.Join(dir, name+".key")),
	}
}

// PKIDir is VULNSCAN_PKI_DIR. By default it is .data/pki of the checkout,
// where `make run` writes the identities whatever VULNSCAN_DATA_DIR says:
// identities belong to the installation, not to one data directory, so an
// operator running bin/vulnscanctl finds the certificate of the system that
// `make run` started even when that run kept its data elsewhere. The
// checkout is the working directory when it holds .data/pki, else the
// directory above the running binary's bin/ (bin/vulnscanctl called from
// anywhere).
func PKIDir(env *config.Env) string {
	if dir := env.String("VULNSCAN_PKI_DIR", ""); dir != "" {
		return dir
	}
	local := filepath.Join(config.DefaultDataDir, "pki")
	if _, err := os.Stat(local); err == nil {
		return local
	}
	if exe, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(filepath.Dir(exe)), config.DefaultDataDir, "pki")
		if _, err := os.Stat(beside); err == nil {
			return beside
		}
	}
	return local
}

// Identity is a loaded certificate, its key and the CAs it trusts.
type Identity struct {
	Name string
	cert tls.Certificate
	pool *x509.CertPool
}

// Load reads an identity's files and checks that the certificate names want.
func Load(f Files, want string) (*Identity, error) {
	caPEM, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, fmt.Errorf("read CA bundle (run make run once, or set VULNSCAN_PKI_DIR / VULNSCAN_TLS_CA): %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("CA bundle %s holds no certificate", f.CA)
	}
	pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, fmt.Errorf("load certificate %s: %w", f.Cert, err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("parse certificate %s: %w", f.Cert, err)
	}
	name, err := NameOf(leaf)
	if err != nil {
		return nil, fmt.Errorf("certificate %s: %w", f.Cert, err)
	}
	if want != "" && name != want {
		return nil, fmt.Errorf("certificate %s is for %q, not %q", f.Cert, name, want)
	}
	pair.Leaf = leaf
	return &Identity{Name: name, cert: pair, pool: pool}, nil
}

// LoadFromEnv loads the identity of the process called name.
func LoadFromEnv(env *config.Env, name string) (*Identity, error) {
	return Load(FilesFromEnv(env, name), name)
}

// ServerConfig requires TLS 1.3 and a client certificate chaining to the CA.
func (id *Identity) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{id.cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    id.pool,
	}
}

// ClientConfig presents id's certificate and accepts only a server whose
// chain verifies against the CA and whose identity is server.
func (id *Identity) ClientConfig(server string) *tls.Config {
	pool := id.pool
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{id.cert},
		// Host names are not how servers are identified here (addresses
		// change between loopback, Kubernetes Services and tests): the
		// built-in host name check is replaced by VerifyConnection, which
		// verifies the whole chain and the server's SPIFFE identity.
		InsecureSkipVerify: true, //nolint:gosec // verified in VerifyConnection below
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("server presented no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			if _, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
				Roots: pool, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			}); err != nil {
				return fmt.Errorf("server certificate: %w", err)
			}
			name, err := NameOf(cs.PeerCertificates[0])
			if err != nil {
				return fmt.Errorf("server certificate: %w", err)
			}
			if name != server {
				return fmt.Errorf("server is %q, expected %q", name, server)
			}
			return nil
		},
	}
}

// Caller returns the verified identity of the peer of an incoming RPC.
func Caller(ctx context.Context) (string, bool) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return "", false
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.VerifiedChains) == 0 || len(info.State.VerifiedChains[0]) == 0 {
		return "", false
	}
	name, err := NameOf(info.State.VerifiedChains[0][0])
	if err != nil {
		return "", false
	}
	return name, true
}
