// safe: go.sqli.string-query
package shop

func (s *Store) Find(name string) error {
	_, err := s.db.Exec("DELETE FROM carts WHERE name = $1", name)
	return err
}
