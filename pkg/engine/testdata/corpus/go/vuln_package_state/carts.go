package shop

func (s *Store) Find(name string) error {
	_, err := s.db.Exec("DELETE FROM carts WHERE name = '" + name + "'") // vuln: go.sqli.string-query
	return err
}
