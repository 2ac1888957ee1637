package handlers

import (
	"database/sql"
	"fmt"
	"net/http"
	"os/exec"
	"text/template"

	"github.com/go-ldap/ldap/v3"
)

type Server struct{ db *sql.DB }

func (s *Server) findUser(name string) (*sql.Rows, error) {
	q := fmt.Sprintf("SELECT * FROM users WHERE name = '%s'", name)
	return s.db.Query(q) // vuln: go.sqli.string-query
}

func (s *Server) Users(w http.ResponseWriter, r *http.Request) {
	rows, err := s.findUser(r.URL.Query().Get("name"))
	if err == nil {
		rows.Close()
	}
}

func Ping(w http.ResponseWriter, r *http.Request) {
	host := r.FormValue("host")
	out, _ := exec.Command("sh", "-c", "ping -c 1 "+host).Output() // vuln: go.cmdi.exec
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write(out)
}

func Lookup(conn *ldap.Conn, r *http.Request) (*ldap.SearchResult, error) {
	user := r.URL.Query().Get("user")
	req := ldap.NewSearchRequest("dc=example,dc=com", ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false, // vuln: go.ldapi.filter
		"(uid="+user+")", []string{"dn"}, nil)
	return conn.Search(req)
}

func Hello(w http.ResponseWriter, r *http.Request) {
	body := "Hello " + r.URL.Query().Get("name")
	t, _ := template.New("hello").Parse(body) // vuln: go.ssti.parse
	_ = t.Execute(w, nil)
}
