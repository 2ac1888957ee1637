package invoices

import "net/http"

type Handler struct{ store *Store }

func (h *Handler) Export(w http.ResponseWriter, r *http.Request) {
	if err := exportCustomer(h.store, r.FormValue("customer")); err != nil {
		http.Error(w, "export failed", http.StatusInternalServerError)
	}
}
