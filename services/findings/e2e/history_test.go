package e2e

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestHistory: the audit trail of a finding through the API, paginated,
// with who (user and key id prefix), what (before → after), why and the
// batch of a bulk change.
func TestHistory(t *testing.T) {
	t.Parallel()
	o := newOrg(t, "auto")
	other := newOrg(t, "auto")
	scanID := newScan(t, o, "https://github.example.com/acme/history.git")
	got := report(t, scanID, fnd("h1", "high"), fnd("h2", "medium"))
	id, canonical := got[0], got[1]

	require.Equal(t, 200, do(t, "PATCH", "/findings/"+id, o.WriteKey, map[string]any{"state": "true_positive", "reason": "reproduced"}).Status)
	require.Equal(t, 200, do(t, "PATCH", "/findings/"+id, o.WriteKey, map[string]any{"severity": "critical", "severity_reason": "internet facing"}).Status)
	require.Equal(t, 200, do(t, "PATCH", "/findings/"+id, o.WriteKey, map[string]any{"duplicate_of": canonical, "reason": "same sink"}).Status)
	r := do(t, "POST", "/findings/bulk", o.WriteKey, map[string]any{"ids": []string{id}, "duplicate_of": nil, "reason": "not the same after all"})
	require.Equal(t, 200, r.Status, "%s", r.Body)
	batch := r.JSON()["batch_id"].(string)

	type entry struct {
		field, from, to, reason string
		batch                   bool
	}
	want := []entry{
		{"state", "open", "true_positive", "reproduced", false},
		{"severity", "high", "critical", "internet facing", false},
		{"state", "true_positive", "resolved", "same sink", false},
		{"duplicate_of", "", canonical, "same sink", false},
		{"state", "resolved", "open", "not the same after all", true},
		{"duplicate_of", canonical, "", "not the same after all", true},
	}
	var all []map[string]any
	for page := 1; ; page++ {
		h := do(t, "GET", fmt.Sprintf("/findings/%s/history?limit=4&page=%d", id, page), o.ReadKey, nil)
		require.Equal(t, 200, h.Status, "%s", h.Body)
		m := h.JSON()
		require.EqualValues(t, len(want), m["total"])
		require.EqualValues(t, page, m["page"])
		require.EqualValues(t, 4, m["limit"])
		data := m["data"].([]any)
		for _, d := range data {
			all = append(all, d.(map[string]any))
		}
		if page*4 >= len(want) {
			break
		}
	}
	require.Len(t, all, len(want))
	orNil := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	for i, w := range want {
		e := all[i]
		require.Equal(t, w.field, e["field"], "entry %d", i)
		require.Equal(t, orNil(w.from), e["from"], "entry %d", i)
		require.Equal(t, orNil(w.to), e["to"], "entry %d", i)
		require.Equal(t, w.reason, e["reason"], "entry %d", i)
		require.Equal(t, "api", e["source"])
		require.NotEmpty(t, e["created_at"])
		if w.batch {
			require.Equal(t, batch, e["batch_id"])
		} else {
			require.Nil(t, e["batch_id"])
		}
		a := e["actor"].(map[string]any)
		require.Equal(t, "api_key", a["type"])
		require.Equal(t, o.UserID, a["user_id"])
		require.NotEmpty(t, a["username"])
		require.Equal(t, o.WriteKeyID[:8], a["api_key_id_prefix"])
		require.Nil(t, a["integration"])
	}

	empty := do(t, "GET", "/findings/"+canonical+"/history", o.ReadKey, nil)
	require.Equal(t, 200, empty.Status)
	require.EqualValues(t, 0, empty.JSON()["total"])
	require.Empty(t, empty.JSON()["data"])
	require.EqualValues(t, 15, empty.JSON()["limit"])

	requireError(t, do(t, "GET", "/findings/"+id+"/history", other.ReadKey, nil), 404, "Finding not found")
	requireError(t, do(t, "GET", "/findings/"+uuid.NewString()+"/history", o.ReadKey, nil), 404, "Finding not found")
	requireError(t, do(t, "GET", "/findings/nope/history", o.ReadKey, nil), 400, "id")
	requireError(t, do(t, "GET", "/findings/"+id+"/history?limit=101", o.ReadKey, nil), 400, "limit")
	requireError(t, do(t, "GET", "/findings/"+id+"/history?page=0", o.ReadKey, nil), 400, "page")
}
