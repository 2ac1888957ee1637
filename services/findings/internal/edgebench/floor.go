package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vulnscan/vulnscan/pkg/apikey"
	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/services/findings/internal/store"
)

// The floor is the least a server can do for each measured request, in a
// process of its own like the gateway: check the key in an in-process cache
// (one database lookup the first time), then run the same queries the
// services run with one pgx pool and answer JSON. It has no second process,
// no gRPC hop, no logs, traces or metrics, and no rate limit: what the real
// path costs beyond it is the price of those.
type floor struct {
	pool  *pgxpool.Pool
	st    *store.Store
	cache sync.Map // API key → organization id
}

// serveFloor runs the floor server on addr until the process is killed.
func serveFloor(addr string) error {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(os.Getenv("DATABASE_URL"))
	if err != nil {
		return err
	}
	cfg.MaxConns = int32(max(4, runtime.GOMAXPROCS(0)*4))
	db.Configure(cfg.ConnConfig) // the services' session settings
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	f := &floor{pool: pool, st: &store.Store{Pool: pool}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/credits", f.credits)
	mux.HandleFunc("GET /v1/findings", f.findings)
	mux.HandleFunc("GET /v1/scans/{id}/findings", f.findings)
	mux.HandleFunc("GET /metrics", mallocsMetric)
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return (&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}).Serve(lis)
}

// mallocsMetric answers the one metric the harness reads of every process.
func mallocsMetric(w http.ResponseWriter, _ *http.Request) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	_, _ = fmt.Fprintf(w, "go_memstats_mallocs_total %d\n", m.Mallocs)
}

// org resolves the request's API key through the in-process cache.
func (f *floor) org(r *http.Request) (string, bool) {
	key := r.Header.Get("X-Api-Key")
	if v, ok := f.cache.Load(key); ok {
		return v.(string), true
	}
	var org string
	err := f.pool.QueryRow(r.Context(), `SELECT org_id::text FROM auth.api_keys
		WHERE key_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`, apikey.Hash(key)).Scan(&org)
	if err != nil {
		return "", false
	}
	f.cache.Store(key, org)
	return org, true
}

func (f *floor) credits(w http.ResponseWriter, r *http.Request) {
	org, ok := f.org(r)
	if !ok {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	var balance int32
	if err := f.pool.QueryRow(r.Context(), `SELECT balance FROM auth.credit_balances WHERE org_id = $1`, org).Scan(&balance); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"balance":%d}`, balance)
}

// floorFinding is a listed finding as the API spells it.
type floorFinding struct {
	ID             string    `json:"id"`
	ScanID         string    `json:"scan_id"`
	Title          string    `json:"title"`
	Category       string    `json:"category"`
	Severity       string    `json:"severity"`
	State          string    `json:"state"`
	Description    string    `json:"description"`
	AffectedFile   string    `json:"affected_file"`
	AffectedCode   string    `json:"affected_code"`
	ProofOfConcept *string   `json:"proof_of_concept"`
	Tags           []string  `json:"tags"`
	DuplicateOf    *string   `json:"duplicate_of"`
	Line           int32     `json:"line"`
	Fingerprint    string    `json:"fingerprint"`
	FoundAt        time.Time `json:"found_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// findings runs the findings store's own list queries (the page, then the
// exact total from the counters), so the floor follows any change to them.
func (f *floor) findings(w http.ResponseWriter, r *http.Request) {
	org, ok := f.org(r)
	if !ok {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	q := r.URL.Query()
	page, limit := atoiOr(q.Get("page"), 1), atoiOr(q.Get("limit"), 15)
	filter := store.Filter{OrgID: org, ScanID: r.PathValue("id"), Severity: q.Get("severity"), State: q.Get("state"),
		SortBy: q.Get("sort_by"), Desc: q.Get("sort_order") != "ASC", Limit: limit, Offset: (page - 1) * limit}
	if filter.SortBy == "" {
		filter.SortBy = "found_at"
	}
	list, total, err := f.st.List(r.Context(), filter)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	out := struct {
		Data  []floorFinding `json:"data"`
		Total int64          `json:"total"`
		Page  int            `json:"page"`
		Limit int            `json:"limit"`
	}{Data: make([]floorFinding, len(list)), Total: total, Page: page, Limit: limit}
	for i, x := range list {
		out.Data[i] = floorFinding{ID: x.ID, ScanID: x.ScanID, Title: x.Title, Category: x.Category, Severity: x.Severity, State: x.State,
			Description: x.Description, AffectedFile: x.AffectedFile, AffectedCode: x.AffectedCode, ProofOfConcept: x.ProofOfConcept,
			Tags: x.Tags, DuplicateOf: x.DuplicateOf, Line: x.Line, Fingerprint: x.Fingerprint, FoundAt: x.FoundAt, UpdatedAt: x.UpdatedAt}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return n
	}
	return def
}
