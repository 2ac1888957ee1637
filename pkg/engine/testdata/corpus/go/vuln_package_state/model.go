package shop

import "database/sql"

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
	_, _ = s.db.Exec("DELETE FROM carts WHERE id = " + id) // vuln: go.sqli.string-query
}
