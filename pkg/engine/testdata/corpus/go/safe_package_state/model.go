// safe: go.sqli.string-query
package shop

import (
	"database/sql"
	"strconv"
)

type Store struct {
	db *sql.DB
}

var store *Store

var DB *sql.DB

func Open(dsn string) error {
	var err error
	DB, err = sql.Open("postgres", dsn)
	store = &Store{db: DB}
	return err
}

func (s *Store) Remove(id string) {
	n, err := strconv.Atoi(id)
	if err != nil {
		return
	}
	_, _ = s.db.Exec("DELETE FROM carts WHERE id = " + strconv.Itoa(n))
}
