// safe: go.sqli.string-query go.cmdi.exec go.ldapi.filter go.ssti.parse
package handlers

import (
	"database/sql"
	"html/template"
	"net/http"
	"os/exec"
	"strconv"

	"github.com/go-ldap/ldap/v3"
)

type Server struct{ db *sql.DB }

var hello = template.Must(template.New("hello").Parse("Hello {{.}}"))

func (s *Server) findUser(name string) (*sql.Rows, error) {
	return s.db.Query("SELECT * FROM users WHERE name = $1", name)
}

func (s *Server) Users(w http.ResponseWriter, r *http.Request) {
	rows, err := s.findUser(r.URL.Query().Get("name"))
	if err == nil {
		rows.Close()
	}
}

func (s *Server) Page(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.URL.Query().Get("n"))
	if err != nil {
		return
	}
	rows, err := s.db.Query("SELECT * FROM items LIMIT " + strconv.Itoa(n))
	if err == nil {
		rows.Close()
	}
}

func Ping(w http.ResponseWriter, r *http.Request) {
	out, _ := exec.Command("ping", "-c", "1", r.FormValue("host")).Output()
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(strconv.Itoa(len(out))))
}

func Lookup(conn *ldap.Conn, r *http.Request) (*ldap.SearchResult, error) {
	user := ldap.EscapeFilter(r.URL.Query().Get("user"))
	req := ldap.NewSearchRequest("dc=example,dc=com", ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		"(uid="+user+")", []string{"dn"}, nil)
	return conn.Search(req)
}

func Hello(w http.ResponseWriter, r *http.Request) {
	_ = hello.Execute(w, r.URL.Query().Get("name"))
}
