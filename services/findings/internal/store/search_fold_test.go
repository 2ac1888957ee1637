package store

import (
	"context"
	"fmt"
	"testing"
)

// TestSearchFoldsCaseAsILIKE: q over the texts' and paths' lowered forms
// matches exactly what ILIKE matches on the findings themselves, accented
// and non-Latin letters and LIKE's metacharacters included.
func TestSearchFoldsCaseAsILIKE(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	titles := []string{"Überprüfung der Eingabe fehlt", "ÉCHEC de validation", "Ошибка ПРОВЕРКИ", "50% off_by_one", "plain title"}
	files := []string{"src/Ärger.go", "lib/ÉTÉ/x.py", "web/Страница.js", "a_b%c.go", "README"}
	s, _, sc := reportedScan(t, "c", len(titles)*len(files), func(i int, r *Reported) {
		r.Title, r.AffectedFile, r.Verified = titles[i%len(titles)], files[i/len(titles)], true
		r.Description = fmt.Sprintf("Found in %s", files[(i+1)%len(files)])
	})
	for _, q := range []string{"überPRÜFUNG", "ÜBERPRÜFUNG", "échec", "проверки", "ОШИБКА", "ärger", "été/", "страница", "50%",
		"_by_", "A_B%C", "readme", "no such"} {
		var want int64
		if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM findings.findings WHERE org_id = $1
			AND (title ILIKE $2 OR description ILIKE $2 OR affected_file ILIKE $2)`, sc.OrgID, "%"+EscapeLike(q)+"%").Scan(&want); err != nil {
			t.Fatal(err)
		}
		for _, walk := range []bool{false, true} {
			f := Filter{OrgID: sc.OrgID, Text: q, SortBy: "found_at", Limit: 100}
			r, err := s.Resolve(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if r.keys != nil {
				r.keys.walk = walk
			}
			got, total := runQueries(t, s.Pool, r)
			if total != want || int64(len(got)) != want {
				t.Errorf("q=%q walk=%t: %d rows total %d, ILIKE matches %d", q, walk, len(got), total, want)
			}
		}
		// Letters beyond ASCII fold only under a locale that knows them
		// (not C): whatever the server's, q must agree with ILIKE.
		if want == 0 && q != "no such" && isASCII(q) {
			t.Errorf("q=%q: the fixture matches nothing", q)
		}
	}
}

func isASCII(s string) bool {
	for _, r := range s {
		if r > 127 {
			return false
		}
	}
	return true
}
