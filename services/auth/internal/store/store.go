// Package store is the auth service's data layer over its own schema "auth":
// organizations, users, API keys (hashes only), credit balances with their
// append-only ledger, and connected repositories with encrypted tokens.
package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vulnscan/vulnscan/pkg/boot"
	"github.com/vulnscan/vulnscan/pkg/db"
	"github.com/vulnscan/vulnscan/pkg/secretbox"
	"github.com/vulnscan/vulnscan/pkg/wiretext"
)

// Errors the store reports.
var (
	ErrNotFound           = errors.New("not found")
	ErrInsufficientCredit = errors.New("insufficient credits")
	ErrDuplicate          = errors.New("already exists")
	ErrTooManyKeys        = errors.New("too many active keys")
	// ErrParentInactive: the creating key was revoked or expired meanwhile.
	ErrParentInactive = errors.New("parent key no longer active")
	// ErrOutlivesParent: the new key would expire after its parent.
	ErrOutlivesParent = errors.New("key would outlive its parent")
	// ErrBalanceTooLarge: a grant would take the balance past the largest
	// one the ledger holds (2^31-1 credits).
	ErrBalanceTooLarge = errors.New("balance would exceed the largest balance")
)

// Store runs the auth queries.
type Store struct {
	Pool *pgxpool.Pool

	balances balanceReads
}

type Org struct {
	ID, Name, VerificationMode string
}

type User struct {
	ID, OrgID, Username string
}

type Key struct {
	// ParentID is the key that created this one through the API ("" for
	// keys issued by operators).
	ID, OrgID, UserID, Name, Prefix, Hash, ParentID string
	Scopes                                          []string
	ExpiresAt, RevokedAt                            *time.Time
	CreatedAt                                       time.Time
}

type Repo struct {
	ID, OrgID, URL, CloneURL, DefaultBranch string
	TokenEnc                                []byte
	CreatedAt                               time.Time
}

// CreateOrg creates an organization with its owner user and opening balance.
func (s *Store) CreateOrg(ctx context.Context, name, mode, owner string, credits int32) (orgID, userID string, err error) {
	orgID, userID = uuid.NewString(), uuid.NewString()
	err = db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO auth.organizations (id, name, verification_mode) VALUES ($1, $2, $3)`, orgID, name, mode); err != nil {
			if db.IsUniqueViolation(err, "") {
				return ErrDuplicate
			}
			return fmt.Errorf("insert organization: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO auth.users (id, org_id, username, role) VALUES ($1, $2, $3, 'owner')`, userID, orgID, owner); err != nil {
			return fmt.Errorf("insert owner: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO auth.credit_balances (org_id, balance) VALUES ($1, $2)`, orgID, credits); err != nil {
			return fmt.Errorf("insert balance: %w", err)
		}
		if credits > 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO auth.credit_ledger (org_id, kind, delta, balance_after, reference) VALUES ($1, 'grant', $2, $2, 'initial')`, orgID, credits); err != nil {
				return fmt.Errorf("insert ledger: %w", err)
			}
		}
		return nil
	})
	return orgID, userID, err
}

// GetOrg returns an organization.
func (s *Store) GetOrg(ctx context.Context, id string) (Org, error) {
	var o Org
	err := s.Pool.QueryRow(ctx, `SELECT id::text, name, verification_mode FROM auth.organizations WHERE id = $1`, id).Scan(&o.ID, &o.Name, &o.VerificationMode)
	if errors.Is(err, pgx.ErrNoRows) {
		return o, ErrNotFound
	}
	return o, err
}

// CreateUser adds a member to an organization.
func (s *Store) CreateUser(ctx context.Context, orgID, username string) (string, error) {
	id := uuid.NewString()
	_, err := s.Pool.Exec(ctx, `INSERT INTO auth.users (id, org_id, username) VALUES ($1, $2, $3)`, id, orgID, username)
	if db.IsUniqueViolation(err, "") {
		return "", ErrDuplicate
	}
	return id, err
}

// GetUser returns a user.
func (s *Store) GetUser(ctx context.Context, id string) (User, error) {
	var u User
	err := s.Pool.QueryRow(ctx, `SELECT id::text, org_id::text, username FROM auth.users WHERE id = $1`, id).Scan(&u.ID, &u.OrgID, &u.Username)
	if errors.Is(err, pgx.ErrNoRows) {
		return u, ErrNotFound
	}
	return u, err
}

// OwnerOf returns the owner user of an organization.
func (s *Store) OwnerOf(ctx context.Context, orgID string) (string, error) {
	var id string
	err := s.Pool.QueryRow(ctx, `SELECT id::text FROM auth.users WHERE org_id = $1 AND role = 'owner' ORDER BY created_at LIMIT 1`, orgID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrNotFound
	}
	return id, err
}

// CreateKey stores a key's hash, refusing when the organization already has
// maxActive active keys. The organization row is locked so that concurrent
// creations cannot exceed the limit.
func (s *Store) CreateKey(ctx context.Context, k Key, maxActive int) (Key, error) {
	k.ID = uuid.NewString()
	err := db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM auth.organizations WHERE id = $1 FOR UPDATE`, k.OrgID).Scan(&one); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return ErrNotFound
			}
			return fmt.Errorf("lock organization: %w", err)
		}
		var active int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM auth.api_keys WHERE org_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`, k.OrgID).Scan(&active); err != nil {
			return fmt.Errorf("count keys: %w", err)
		}
		if active >= maxActive {
			return ErrTooManyKeys
		}
		if k.ParentID != "" {
			// Locking the parent orders this creation against its
			// revocation (RevokeKey locks it first): either the parent is
			// revoked already and the child refused, or the revocation
			// runs after this commit and finds the child.
			var pexp, prev *time.Time
			err := tx.QueryRow(ctx, `SELECT expires_at, revoked_at FROM auth.api_keys WHERE id = $1 AND org_id = $2 FOR UPDATE`,
				k.ParentID, k.OrgID).Scan(&pexp, &prev)
			if errors.Is(err, pgx.ErrNoRows) || (err == nil && (prev != nil || (pexp != nil && !pexp.After(time.Now())))) {
				return ErrParentInactive
			}
			if err != nil {
				return fmt.Errorf("lock parent key: %w", err)
			}
			if pexp != nil && (k.ExpiresAt == nil || k.ExpiresAt.After(*pexp)) {
				return ErrOutlivesParent
			}
		}
		var parent *string
		if k.ParentID != "" {
			parent = &k.ParentID
		}
		return tx.QueryRow(ctx, `INSERT INTO auth.api_keys (id, org_id, user_id, name, prefix, key_hash, scopes, expires_at, parent_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING created_at`,
			k.ID, k.OrgID, k.UserID, k.Name, k.Prefix, k.Hash, k.Scopes, k.ExpiresAt, parent).Scan(&k.CreatedAt)
	})
	return k, err
}

const keyColumns = `id::text, org_id::text, user_id::text, name, prefix, key_hash, scopes, expires_at, revoked_at, created_at`

func scanKey(row pgx.Row) (Key, error) {
	var k Key
	err := row.Scan(&k.ID, &k.OrgID, &k.UserID, &k.Name, &k.Prefix, &k.Hash, &k.Scopes, &k.ExpiresAt, &k.RevokedAt, &k.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return k, ErrNotFound
	}
	return k, err
}

// KeyByHash finds a key by the hash of its text.
func (s *Store) KeyByHash(ctx context.Context, hash string) (Key, error) {
	return scanKey(s.Pool.QueryRow(ctx, `SELECT `+keyColumns+` FROM auth.api_keys WHERE key_hash = $1`, hash))
}

// ListKeys lists an organization's keys, newest first.
func (s *Store) ListKeys(ctx context.Context, orgID string) ([]Key, error) {
	rows, err := s.Pool.Query(ctx, `SELECT `+keyColumns+` FROM auth.api_keys WHERE org_id = $1 ORDER BY created_at DESC, id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Key, error) { return scanKey(r) })
}

// RevokeKey marks a key revoked (keeping the first revocation time)
// together with every key it created, transitively, and queues one outbox
// row per revoked key hash in the same transaction, for the announcer to
// publish to the gateways' caches. It returns the key and the hashes to
// announce. orgID, when not empty, restricts the key to that organization.
func (s *Store) RevokeKey(ctx context.Context, id, orgID string) (Key, []string, error) {
	var k Key
	var hashes []string
	err := db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		var err error
		// Lock the root first, in its own statement: a concurrent
		// CreateKey holding it commits before the tree is read below, so
		// its child is part of the tree.
		k, err = scanKey(tx.QueryRow(ctx, `SELECT `+keyColumns+` FROM auth.api_keys
			WHERE id = $1 AND ($2 = '' OR org_id::text = $2) FOR UPDATE`, id, orgID))
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `WITH RECURSIVE tree AS (
				SELECT id FROM auth.api_keys WHERE id = $1
				UNION
				SELECT c.id FROM auth.api_keys c JOIN tree ON c.parent_id = tree.id
			)
			UPDATE auth.api_keys k SET revoked_at = coalesce(k.revoked_at, now())
			FROM tree WHERE k.id = tree.id
			RETURNING k.id::text, k.key_hash, k.revoked_at`, k.ID)
		if err != nil {
			return fmt.Errorf("revoke key tree: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var kid, hash string
			var at *time.Time
			if err := rows.Scan(&kid, &hash, &at); err != nil {
				return fmt.Errorf("revoke key tree: %w", err)
			}
			if kid == k.ID {
				k.RevokedAt = at
			}
			hashes = append(hashes, hash)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("revoke key tree: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO auth.revocation_outbox (key_hash) SELECT unnest($1::text[])`, hashes); err != nil {
			return fmt.Errorf("queue revocation announcements: %w", err)
		}
		return nil
	})
	return k, hashes, err
}

// Announcement is one revocation waiting to be published.
type Announcement struct {
	ID   int64
	Hash string
}

// AnnounceRevocations hands up to n queued revocations to publish, oldest
// first, and deletes those it returns nil for; a failure is recorded on the
// row and retried on the next call. Rows are locked while publishing so
// that several replicas share the queue without publishing twice at once
// (publishing twice is harmless: the tombstone and the eviction are
// idempotent). It returns how many were published.
func (s *Store) AnnounceRevocations(ctx context.Context, n int, publish func(hash string) error) (int, error) {
	done := 0
	err := db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, key_hash FROM auth.revocation_outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`, n)
		if err != nil {
			return fmt.Errorf("claim revocations: %w", err)
		}
		list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Announcement, error) {
			var a Announcement
			return a, r.Scan(&a.ID, &a.Hash)
		})
		if err != nil {
			return fmt.Errorf("claim revocations: %w", err)
		}
		for _, a := range list {
			if perr := publish(a.Hash); perr != nil {
				// At most 500 bytes of valid UTF-8: PostgreSQL refuses text
				// with a character cut in half.
				msg := wiretext.Cut(perr.Error(), 500)
				if _, err := tx.Exec(ctx, `UPDATE auth.revocation_outbox SET attempts = attempts + 1, last_error = $2 WHERE id = $1`, a.ID, msg); err != nil {
					return fmt.Errorf("record failed announcement: %w", err)
				}
				// Redis is likely down: the rest waits for the next round.
				return nil
			}
			if _, err := tx.Exec(ctx, `DELETE FROM auth.revocation_outbox WHERE id = $1`, a.ID); err != nil {
				return fmt.Errorf("delete announcement: %w", err)
			}
			done++
		}
		return nil
	})
	return done, err
}

// ForgetRevocations deletes the queued announcements of these key hashes,
// which the caller has just published itself. Rows an announcer holds are
// left to it (publishing twice is harmless).
func (s *Store) ForgetRevocations(ctx context.Context, hashes []string) error {
	_, err := s.Pool.Exec(ctx, `DELETE FROM auth.revocation_outbox WHERE id IN (
		SELECT id FROM auth.revocation_outbox WHERE key_hash = ANY($1::text[]) FOR UPDATE SKIP LOCKED)`, hashes)
	if err != nil {
		return fmt.Errorf("forget published revocations: %w", err)
	}
	return nil
}

// PendingRevocations counts revocations not yet published.
func (s *Store) PendingRevocations(ctx context.Context) (int, error) {
	var n int
	err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM auth.revocation_outbox`).Scan(&n)
	return n, err
}

// KeyByID returns a key of an organization.
func (s *Store) KeyByID(ctx context.Context, id, orgID string) (Key, error) {
	return scanKey(s.Pool.QueryRow(ctx, `SELECT `+keyColumns+` FROM auth.api_keys WHERE id = $1 AND org_id = $2`, id, orgID))
}

// Balance returns an organization's credit balance.
func (s *Store) Balance(ctx context.Context, orgID string) (int32, error) {
	id, err := uuid.Parse(orgID)
	if err != nil {
		return 0, ErrNotFound
	}
	return s.balances.read(ctx, s.Pool, id.String())
}

// Grant adds credits.
func (s *Store) Grant(ctx context.Context, orgID string, amount int32) (int32, error) {
	var bal int32
	err := db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `UPDATE auth.credit_balances SET balance = balance + $2, updated_at = now() WHERE org_id = $1 RETURNING balance`, orgID, amount).Scan(&bal)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "22003" {
			return ErrBalanceTooLarge
		}
		if err != nil {
			return fmt.Errorf("grant: %w", err)
		}
		_, err = tx.Exec(ctx, `INSERT INTO auth.credit_ledger (org_id, kind, delta, balance_after) VALUES ($1, 'grant', $2, $3)`, orgID, amount, bal)
		return err
	})
	return bal, err
}

// Debit takes amount credits, once per reference. It reports applied=false
// when the reference was already debited. The balance never goes below zero.
func (s *Store) Debit(ctx context.Context, orgID string, amount int32, ref string) (bal int32, applied bool, err error) {
	err = db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		// Lock the balance first so that concurrent debits of one reference serialize.
		if err := tx.QueryRow(ctx, `SELECT balance FROM auth.credit_balances WHERE org_id = $1 FOR UPDATE`, orgID).Scan(&bal); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return ErrNotFound
			}
			return fmt.Errorf("lock balance: %w", err)
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM auth.credit_ledger WHERE org_id = $1 AND kind = 'debit' AND reference = $2)`, orgID, ref).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return nil
		}
		if bal < amount {
			return ErrInsufficientCredit
		}
		bal -= amount
		if _, err := tx.Exec(ctx, `UPDATE auth.credit_balances SET balance = $2, updated_at = now() WHERE org_id = $1`, orgID, bal); err != nil {
			return fmt.Errorf("debit: %w", err)
		}
		applied = true
		_, err := tx.Exec(ctx, `INSERT INTO auth.credit_ledger (org_id, kind, delta, balance_after, reference) VALUES ($1, 'debit', $2, $3, $4)`, orgID, -amount, bal, ref)
		return err
	})
	return bal, applied, err
}

// Refund returns the credits of the debit with this reference, once. With no
// such debit it refunds nothing.
func (s *Store) Refund(ctx context.Context, orgID, ref string) (bal, refunded int32, err error) {
	err = db.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT balance FROM auth.credit_balances WHERE org_id = $1 FOR UPDATE`, orgID).Scan(&bal); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return ErrNotFound
			}
			return fmt.Errorf("lock balance: %w", err)
		}
		var debit int32
		err := tx.QueryRow(ctx, `SELECT -delta FROM auth.credit_ledger WHERE org_id = $1 AND kind = 'debit' AND reference = $2`, orgID, ref).Scan(&debit)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		var done bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM auth.credit_ledger WHERE org_id = $1 AND kind = 'refund' AND reference = $2)`, orgID, ref).Scan(&done); err != nil || done {
			return err
		}
		bal += debit
		refunded = debit
		if _, err := tx.Exec(ctx, `UPDATE auth.credit_balances SET balance = $2, updated_at = now() WHERE org_id = $1`, orgID, bal); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO auth.credit_ledger (org_id, kind, delta, balance_after, reference) VALUES ($1, 'refund', $2, $3, $4)`, orgID, debit, bal, ref)
		return err
	})
	return bal, refunded, err
}

// ConnectRepo registers (or updates) a connected repository.
func (s *Store) ConnectRepo(ctx context.Context, r Repo, urlKey string) (Repo, error) {
	r.ID = uuid.NewString()
	err := s.Pool.QueryRow(ctx, `INSERT INTO auth.connected_repos (id, org_id, url, url_key, clone_url, default_branch, token_enc)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (org_id, url_key) DO UPDATE SET url = EXCLUDED.url, clone_url = EXCLUDED.clone_url,
			default_branch = EXCLUDED.default_branch, token_enc = EXCLUDED.token_enc
		RETURNING id::text, created_at`, r.ID, r.OrgID, r.URL, urlKey, r.CloneURL, r.DefaultBranch, r.TokenEnc).Scan(&r.ID, &r.CreatedAt)
	return r, err
}

const repoColumns = `id::text, org_id::text, url, clone_url, default_branch, token_enc, created_at`

func scanRepo(row pgx.Row) (Repo, error) {
	var r Repo
	err := row.Scan(&r.ID, &r.OrgID, &r.URL, &r.CloneURL, &r.DefaultBranch, &r.TokenEnc, &r.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, ErrNotFound
	}
	return r, err
}

// RepoByURL finds an organization's connected repository by normalized URL.
func (s *Store) RepoByURL(ctx context.Context, orgID, urlKey string) (Repo, error) {
	return scanRepo(s.Pool.QueryRow(ctx, `SELECT `+repoColumns+` FROM auth.connected_repos WHERE org_id = $1 AND url_key = $2`, orgID, urlKey))
}

// ListRepos lists an organization's connected repositories, newest first.
func (s *Store) ListRepos(ctx context.Context, orgID string) ([]Repo, error) {
	rows, err := s.Pool.Query(ctx, `SELECT `+repoColumns+` FROM auth.connected_repos WHERE org_id = $1 ORDER BY created_at DESC, id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list repositories: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Repo, error) { return scanRepo(r) })
}

// OrgSummary is an organization as operators list it.
type OrgSummary struct {
	ID, Name, VerificationMode string
	Balance                    int32
	CreatedAt                  time.Time
}

// ListOrgs returns every organization with its balance, oldest first.
func (s *Store) ListOrgs(ctx context.Context) ([]OrgSummary, error) {
	rows, err := s.Pool.Query(ctx, `SELECT o.id::text, o.name, o.verification_mode, coalesce(b.balance, 0), o.created_at
		FROM auth.organizations o LEFT JOIN auth.credit_balances b ON b.org_id = o.id ORDER BY o.created_at, o.id`)
	if err != nil {
		return nil, fmt.Errorf("list organizations: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (OrgSummary, error) {
		var o OrgSummary
		err := r.Scan(&o.ID, &o.Name, &o.VerificationMode, &o.Balance, &o.CreatedAt)
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("list organizations: %w", err)
	}
	return out, nil
}

// RepoTokenAD binds a connected repository's sealed token to its row, named
// by the key it is upserted by (organization, in PostgreSQL's lower-case
// text form of a uuid, and normalized URL).
func RepoTokenAD(orgID, urlKey string) secretbox.AD {
	return secretbox.AD{Table: "auth.connected_repos", Column: "token_enc", Row: strings.ToLower(orgID) + "/" + urlKey}
}

// SealedColumns are the auth schema's sealed columns, re-sealed on start
// when still in the legacy format.
var SealedColumns = []boot.SealedColumn{
	{Table: "auth.connected_repos", Column: "token_enc", Key: "id", RowExpr: "org_id::text || '/' || url_key"},
}

// Schema is the Postgres schema the auth service owns; Migrate applies its migrations.
const Schema = "auth"

var Migrate = db.Migrations(Schema, migrations)

//go:embed migrations/*.sql
var migrations embed.FS
