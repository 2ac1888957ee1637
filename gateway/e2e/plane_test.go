package e2e

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/mtls"
	"github.com/vulnscan/vulnscan/pkg/principal"
	"github.com/vulnscan/vulnscan/pkg/server"
	"github.com/vulnscan/vulnscan/pkg/systest"
	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
	estimationv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/estimation/v1"
	findingsv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/findings/v1"
	scanv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/scan/v1"
)

// The attacks of the internal plane, replayed against the running processes.

func planeCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dialAs(t *testing.T, service, as string, admin bool) *grpc.ClientConn {
	t.Helper()
	cc, err := sys.Dial(service, as, admin)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

func connectRepo(t *testing.T, orgID, url, token string) {
	t.Helper()
	_, err := sys.CtlRaw([]string{"PLANE_REPO_TOKEN=" + token}, "repo", "connect", "--org", orgID, "--url", url, "--token-env", "PLANE_REPO_TOKEN")
	require.NoError(t, err)
}

// A process without a certificate from the deployment's CA gets nothing:
// not over plaintext, not over TLS without a client certificate, not with a
// certificate from another CA that claims a vulnscan identity.
func TestPlaneRefusesUnauthenticatedCalls(t *testing.T) {
	t.Parallel()
	org := sys.Org(t, 10)
	connectRepo(t, org.ID, "https://git.example.com/plane/unauth.git", "ghp_unauth_secret")
	req := &authv1.GetConnectedRepoRequest{OrgId: org.ID, Url: "https://git.example.com/plane/unauth.git"}

	plain, err := grpc.NewClient(sys.Addrs["auth"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer plain.Close()
	_, err = authv1.NewAuthInternalServiceClient(plain).GetConnectedRepo(planeCtx(t), req)
	require.Error(t, err)
	require.Equal(t, codes.Unavailable, status.Code(err), err)

	gw, err := sys.Identity(mtls.Gateway)
	require.NoError(t, err)
	cfg := gw.ClientConfig(mtls.Auth)
	cfg.Certificates = nil
	anon, err := grpc.NewClient(sys.Addrs["auth"], grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	require.NoError(t, err)
	defer anon.Close()
	_, err = authv1.NewAuthInternalServiceClient(anon).GetConnectedRepo(planeCtx(t), req)
	require.Equal(t, codes.Unavailable, status.Code(err), err)

	// A rogue CA issuing itself an "estimation" certificate (the identity
	// allowed to read tokens), trusting the real CA for the server.
	rogue := t.TempDir()
	require.NoError(t, mtls.Generate(rogue, mtls.Estimation))
	forged, err := mtls.Load(mtls.Files{CA: filepath.Join(sys.PKIDir, "ca.crt"), Cert: filepath.Join(rogue, "estimation.crt"), Key: filepath.Join(rogue, "estimation.key")}, mtls.Estimation)
	require.NoError(t, err)
	cc, err := server.Dial(sys.Addrs["auth"], forged, mtls.Auth)
	require.NoError(t, err)
	defer cc.Close()
	_, err = authv1.NewAuthInternalServiceClient(cc).GetConnectedRepo(planeCtx(t), req)
	require.Equal(t, codes.Unavailable, status.Code(err), err)

	// The identity that may read it does.
	r, err := authv1.NewAuthInternalServiceClient(dialAs(t, "auth", mtls.Estimation, false)).GetConnectedRepo(planeCtx(t), req)
	require.NoError(t, err)
	require.Equal(t, "ghp_unauth_secret", r.GetToken())
}

// The internet-facing gateway and the worker that parses attacker code hold
// valid certificates, and still cannot call an admin or another's method.
func TestPlaneRefusesNonOperatorAdminCalls(t *testing.T) {
	t.Parallel()
	org := sys.Org(t, 10)
	connectRepo(t, org.ID, "https://git.example.com/plane/admin.git", "ghp_admin_secret")
	for _, as := range []string{mtls.Gateway, mtls.Scan, mtls.Findings, mtls.Estimation} {
		t.Run(as, func(t *testing.T) {
			_, err := authv1.NewAuthAdminServiceClient(dialAs(t, "auth", as, true)).IssueAPIKey(planeCtx(t),
				&authv1.IssueAPIKeyRequest{OrgId: org.ID, Scopes: []string{"read", "write"}, Name: "stolen"})
			require.Equal(t, codes.PermissionDenied, status.Code(err), err)
			_, err = authv1.NewAuthAdminServiceClient(dialAs(t, "auth", as, true)).CreateOrganization(planeCtx(t),
				&authv1.CreateOrganizationRequest{Name: "rogue"})
			require.Equal(t, codes.PermissionDenied, status.Code(err), err)
			// Findings by scan id alone, across organizations: operator only.
			_, err = findingsv1.NewFindingsIntakeServiceClient(dialAs(t, "findings", as, true)).ListFindingsForOperator(planeCtx(t),
				&findingsv1.ListFindingsForOperatorRequest{OrgId: org.ID})
			require.Equal(t, codes.PermissionDenied, status.Code(err), err)
			_, err = findingsv1.NewFindingsIntakeServiceClient(dialAs(t, "findings", as, false)).ListFindingsForOperator(planeCtx(t),
				&findingsv1.ListFindingsForOperatorRequest{OrgId: org.ID})
			require.Equal(t, codes.PermissionDenied, status.Code(err), err)
			// The admin API is not served on the main port at all.
			_, err = authv1.NewAuthAdminServiceClient(dialAs(t, "auth", as, false)).IssueAPIKey(planeCtx(t),
				&authv1.IssueAPIKeyRequest{OrgId: org.ID, Scopes: []string{"read"}})
			require.Contains(t, []codes.Code{codes.PermissionDenied, codes.Unimplemented}, status.Code(err), err)
		})
	}
	// Only the estimation service reads repository tokens.
	for _, as := range []string{mtls.Gateway, mtls.Scan, mtls.Findings, mtls.Operator} {
		_, err := authv1.NewAuthInternalServiceClient(dialAs(t, "auth", as, false)).GetConnectedRepo(planeCtx(t),
			&authv1.GetConnectedRepoRequest{OrgId: org.ID, Url: "https://git.example.com/plane/admin.git"})
		require.Equal(t, codes.PermissionDenied, status.Code(err), "%s: %v", as, err)
	}
	// Only the scan worker downloads uploads.
	stream, err := estimationv1.NewEstimationInternalServiceClient(dialAs(t, "estimation", mtls.Gateway, false)).DownloadUpload(planeCtx(t),
		&estimationv1.DownloadUploadRequest{OrgId: org.ID, UploadId: "00000000-0000-0000-0000-000000000000"})
	if err == nil {
		_, err = stream.Recv()
	}
	require.Equal(t, codes.PermissionDenied, status.Code(err), err)

	// The operator can.
	r, err := authv1.NewAuthAdminServiceClient(dialAs(t, "auth", mtls.Operator, true)).GetBalance(planeCtx(t), &authv1.GetBalanceRequest{OrgId: org.ID})
	require.NoError(t, err)
	require.EqualValues(t, 10, r.GetBalance())
}

// Public methods act for the tenant of a gateway-signed token bound to the
// call; raw x-vulnscan-* metadata, a token signed by another key, a token for
// another method and one token reused for another organization's data fail.
func TestPlaneTenantIdentityIsSigned(t *testing.T) {
	t.Parallel()
	a, b := sys.Org(t, 10), sys.Org(t, 10)
	r, err := sys.Do("POST", "/context-documents", b.WriteKey, map[string]any{"name": "b's secrets", "content": "org B only"})
	require.NoError(t, err)
	require.Equal(t, 201, r.Status, string(r.Body))
	docB := r.JSON()["id"].(string)

	scan := scanv1.NewScanServiceClient(dialAs(t, "scan", mtls.Gateway, false))
	const rid = "plane-request-1"
	const method = "/vulnscan.scan.v1.ScanService/GetContextDocument"
	call := func(md metadata.MD) error {
		_, err := scan.GetContextDocument(metadata.NewOutgoingContext(planeCtx(t), md), &scanv1.GetContextDocumentRequest{Id: docB})
		return err
	}
	signer, err := sys.Signer()
	require.NoError(t, err)
	token := func(s *principal.Signer, org systest.Org, m string) string {
		tok, err := s.Sign(principal.Principal{OrgID: org.ID, UserID: org.UserID, Scopes: []string{"read", "write"}}, rid, m)
		require.NoError(t, err)
		return tok
	}
	_, otherKey, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)

	// The forged-metadata attack of the report: no token at all.
	err = call(metadata.Pairs("x-vulnscan-org-id", b.ID, "x-vulnscan-user-id", b.UserID, "x-vulnscan-scopes", "read,write", server.RequestIDKey, rid))
	require.Equal(t, codes.Unauthenticated, status.Code(err), err)
	err = call(metadata.Pairs(principal.MetadataKey, token(principal.NewSigner(otherKey), b, method), server.RequestIDKey, rid))
	require.Equal(t, codes.Unauthenticated, status.Code(err), err)
	err = call(metadata.Pairs(principal.MetadataKey, token(signer, b, "/vulnscan.scan.v1.ScanService/ListContextDocuments"), server.RequestIDKey, rid))
	require.Equal(t, codes.Unauthenticated, status.Code(err), err)
	err = call(metadata.Pairs(principal.MetadataKey, token(signer, b, method), server.RequestIDKey, "another-request"))
	require.Equal(t, codes.Unauthenticated, status.Code(err), err)
	// A valid token of org A does not read org B's document, and an org A
	// token with B's raw metadata added is still org A.
	err = call(metadata.Pairs(principal.MetadataKey, token(signer, a, method), server.RequestIDKey, rid, "x-vulnscan-org-id", b.ID))
	require.Equal(t, codes.NotFound, status.Code(err), err)
	// B's own valid token does.
	require.NoError(t, call(metadata.Pairs(principal.MetadataKey, token(signer, b, method), server.RequestIDKey, rid)))

	// Through the REST API, org A's key sees none of B's document either.
	g, err := sys.Do("GET", "/context-documents/"+docB, a.ReadKey, nil)
	require.NoError(t, err)
	require.Equal(t, 404, g.Status)
}

// A sealed repository token copied onto another organization's row does not
// open there: the ciphertext is bound to its row.
func TestPlaneCiphertextBoundToRow(t *testing.T) {
	t.Parallel()
	a, b := sys.Org(t, 10), sys.Org(t, 10)
	url := "https://git.example.com/plane/sealed.git"
	connectRepo(t, a.ID, url, "ghp_token_of_a")
	connectRepo(t, b.ID, url, "ghp_token_of_b")
	pool, err := db.Open(context.Background(), sys.DatabaseURL, 10*time.Second)
	require.NoError(t, err)
	defer pool.Close()
	var sealedB []byte
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT token_enc FROM auth.connected_repos WHERE org_id = $1`, b.ID).Scan(&sealedB))
	require.NotContains(t, string(sealedB), "ghp_token_of_b")
	_, err = pool.Exec(context.Background(), `UPDATE auth.connected_repos SET token_enc = $1 WHERE org_id = $2`, sealedB, a.ID)
	require.NoError(t, err)

	c := authv1.NewAuthInternalServiceClient(dialAs(t, "auth", mtls.Estimation, false))
	_, err = c.GetConnectedRepo(planeCtx(t), &authv1.GetConnectedRepoRequest{OrgId: a.ID, Url: url})
	require.Equal(t, codes.Internal, status.Code(err), err)
	got, err := c.GetConnectedRepo(planeCtx(t), &authv1.GetConnectedRepoRequest{OrgId: b.ID, Url: url})
	require.NoError(t, err)
	require.Equal(t, "ghp_token_of_b", got.GetToken())
}
