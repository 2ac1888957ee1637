// Package e2e tests the scan service end to end through the real gateway:
// starting scans (validation, credits, claims, concurrency), running them to
// completion with findings, and surviving a worker killed mid-scan.
package e2e

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/vulnscan/vulnscan/pkg/systest"
)

// vulnerableApp is a small Flask application with real vulnerabilities.
var vulnerableApp = map[string]string{
	"requirements.txt": "flask==3.0.0\n",
	"app.py": `import sqlite3
import subprocess
from flask import Flask, request

app = Flask(__name__)


@app.route("/user")
def user():
    name = request.args.get("name")
    conn = sqlite3.connect("app.db")
    query = "SELECT * FROM users WHERE name = '" + name + "'"
    return str(conn.execute(query).fetchall())


@app.route("/ping")
def ping():
    host = request.args.get("host")
    return subprocess.check_output("ping -c 1 " + host, shell=True)


if __name__ == "__main__":
    app.run(debug=True)
`,
}

func zipOf(t testing.TB, files map[string]string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func upload(t testing.TB, sys *systest.System, key string, files map[string]string) string {
	t.Helper()
	req, err := http.NewRequest("POST", sys.BaseURL+"/uploads", bytes.NewReader(zipOf(t, files)))
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Content-Type", "application/zip")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, 201, resp.StatusCode, string(b))
	r := systest.Response{Body: b}
	return r.JSON()["repo_url"].(string)
}

// estimate creates an estimation of uploads and waits until it is terminal.
func estimate(t testing.TB, sys *systest.System, key string, repoURLs ...string) map[string]any {
	t.Helper()
	var repos []map[string]any
	for _, u := range repoURLs {
		repos = append(repos, map[string]any{"source": "upload", "repo_url": u})
	}
	r, err := sys.Do("POST", "/cost-estimations", key, map[string]any{"repos": repos})
	require.NoError(t, err)
	require.Equal(t, 201, r.Status, string(r.Body))
	id := r.JSON()["id"].(string)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		g, err := sys.Do("GET", "/cost-estimations/"+id, key, nil)
		require.NoError(t, err)
		est := g.JSON()
		switch est["status"] {
		case "completed", "partial", "failed":
			return est
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("estimation %s did not finish", id)
	return nil
}

// readyEstimation uploads the vulnerable app and estimates it.
func readyEstimation(t testing.TB, sys *systest.System, key string) (estID, repoURL string, credits int) {
	t.Helper()
	repoURL = upload(t, sys, key, vulnerableApp)
	est := estimate(t, sys, key, repoURL)
	require.Equal(t, "completed", est["status"], "%v", est)
	credits = int(est["total_credits"].(float64))
	require.Positive(t, credits)
	return est["id"].(string), repoURL, credits
}

func scanBody(estID, repoURL string, extra map[string]any) map[string]any {
	b := map[string]any{"cost_estimation_id": estID, "repos": []map[string]any{{"url": repoURL, "branch": "", "source": "upload"}}}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func waitScan(t testing.TB, sys *systest.System, key, id string, timeout time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		r, err := sys.Do("GET", "/scans/"+id+"/status", key, nil)
		require.NoError(t, err)
		require.Equal(t, 200, r.Status, string(r.Body))
		st := r.JSON()
		if st["status"] == "completed" || st["status"] == "failed" {
			return st
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("scan %s did not finish in %s\n%s", id, timeout, tailLog(sys))
	return nil
}

func tailLog(sys *systest.System) string {
	lines := strings.Split(sys.Log.String(), "\n")
	if len(lines) > 80 {
		lines = lines[len(lines)-80:]
	}
	return strings.Join(lines, "\n")
}

func balance(t testing.TB, sys *systest.System, key string) int {
	t.Helper()
	r, err := sys.Do("GET", "/credits", key, nil)
	require.NoError(t, err)
	require.Equal(t, 200, r.Status, string(r.Body))
	return int(r.JSON()["balance"].(float64))
}

func requireError(t testing.TB, r systest.Response, status int, contains string) {
	t.Helper()
	require.Equal(t, status, r.Status, "body: %s", r.Body)
	m := r.JSON()
	require.EqualValues(t, status, m["statusCode"], "%s", r.Body)
	require.Equal(t, http.StatusText(status), m["error"])
	require.Contains(t, strings.ToLower(fmt.Sprint(m["message"])), strings.ToLower(contains))
}

type grpcConn = grpc.ClientConn

// quietLog is a logger for the services a test builds in process.
func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
