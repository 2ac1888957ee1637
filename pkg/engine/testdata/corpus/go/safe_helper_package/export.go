// safe: go.sqli.string-query
package invoices

import (
	"database/sql"
	"strconv"
)

type Store struct{ db *sql.DB }

func exportCustomer(s *Store, customer string) error {
	id, err := strconv.ParseInt(customer, 10, 64)
	if err != nil {
		return err
	}
	_, err = s.db.Exec("DELETE FROM export_queue WHERE customer_id = " + strconv.FormatInt(id, 10))
	return err
}
