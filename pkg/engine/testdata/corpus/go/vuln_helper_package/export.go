package invoices

import "database/sql"

type Store struct{ db *sql.DB }

func exportCustomer(s *Store, customer string) error {
	_, err := s.db.Exec("COPY (SELECT * FROM invoices WHERE customer = '" + customer + "') TO '/tmp/out.csv'") // vuln: go.sqli.string-query
	return err
}
