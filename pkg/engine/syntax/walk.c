// The tree copy's C half: one walk over a tree-sitter tree per call, so the
// Go side pays one cgo transition per buffer of nodes instead of several per
// node.
//
// The tree-sitter runtime is compiled into the program by the Go binding
// (github.com/smacker/go-tree-sitter); its functions are declared here as in
// that version's api.h. They are weak references because cgo links this
// package's C code on its own once to find its dynamic imports, before the
// binding's objects are present; in the program they resolve to the binding's
// definitions, and vs_walk_begin refuses to run if they did not.

#include <stdbool.h>
#include <stdlib.h>

#include "walk.h"

typedef struct TSTree TSTree;
typedef struct TSLanguage TSLanguage;

typedef struct {
	uint32_t row;
	uint32_t column;
} TSPoint;

typedef struct {
	uint32_t context[4];
	const void *id;
	const TSTree *tree;
} TSNode;

typedef struct {
	const void *tree;
	const void *id;
	uint32_t context[3];
} TSTreeCursor;

#define WEAK __attribute__((weak))

extern TSNode ts_tree_root_node(const TSTree *self) WEAK;
extern uint16_t ts_node_symbol(TSNode self) WEAK;
extern bool ts_node_is_named(TSNode self) WEAK;
extern uint32_t ts_node_start_byte(TSNode self) WEAK;
extern uint32_t ts_node_end_byte(TSNode self) WEAK;
extern TSPoint ts_node_start_point(TSNode self) WEAK;
extern TSPoint ts_node_end_point(TSNode self) WEAK;
extern TSTreeCursor ts_tree_cursor_new(TSNode node) WEAK;
extern void ts_tree_cursor_delete(TSTreeCursor *self) WEAK;
extern TSNode ts_tree_cursor_current_node(const TSTreeCursor *self) WEAK;
extern uint16_t ts_tree_cursor_current_field_id(const TSTreeCursor *self) WEAK;
extern bool ts_tree_cursor_goto_first_child(TSTreeCursor *self) WEAK;
extern bool ts_tree_cursor_goto_next_sibling(TSTreeCursor *self) WEAK;
extern bool ts_tree_cursor_goto_parent(TSTreeCursor *self) WEAK;

struct vs_walker {
	TSTreeCursor cur;
	uint32_t max_depth, max_nodes;
	uint32_t depth;   // cursor depth, counting every node, kept or not
	uint32_t count;   // nodes kept so far
	int pending;      // the cursor's current node is not yet written
	int finished;
	int32_t *kept;    // by depth: index of the nearest kept node at or above it
};

static bool runtime_linked(void) {
	return ts_tree_root_node && ts_node_symbol && ts_node_is_named && ts_node_start_byte &&
	       ts_node_end_byte && ts_node_start_point && ts_node_end_point && ts_tree_cursor_new &&
	       ts_tree_cursor_delete && ts_tree_cursor_current_node && ts_tree_cursor_current_field_id &&
	       ts_tree_cursor_goto_first_child && ts_tree_cursor_goto_next_sibling && ts_tree_cursor_goto_parent;
}

static void fill(vs_node *r, TSNode n, uint16_t sym, uint16_t field, int32_t parent) {
	r->start = ts_node_start_byte(n);
	r->end = ts_node_end_byte(n);
	r->row = ts_node_start_point(n).row;
	// the row of the last byte: a node that ends with a newline ends on the
	// line the newline closes, not on the next one
	TSPoint ep = ts_node_end_point(n);
	r->end_row = (ep.column == 0 && r->end > r->start && ep.row > 0) ? ep.row - 1 : ep.row;
	r->parent = parent;
	r->symbol = sym;
	r->field = field;
	r->named = ts_node_is_named(n);
}

vs_walker *vs_walk_begin(void *tree, uint32_t max_depth, uint32_t max_nodes) {
	if (!runtime_linked() || !tree) {
		return NULL;
	}
	vs_walker *w = calloc(1, sizeof *w);
	if (!w) {
		return NULL;
	}
	w->kept = malloc(((size_t)max_depth + 2) * sizeof *w->kept);
	if (!w->kept) {
		free(w);
		return NULL;
	}
	w->cur = ts_tree_cursor_new(ts_tree_root_node((const TSTree *)tree));
	w->max_depth = max_depth;
	w->max_nodes = max_nodes;
	return w;
}

uint32_t vs_walk_count(const vs_walker *w) { return w->count; }

void vs_walk_end(vs_walker *w) {
	if (!w) {
		return;
	}
	ts_tree_cursor_delete(&w->cur);
	free(w->kept);
	free(w);
}

// vs_walk_next writes up to cap nodes to out and returns VS_MORE when the
// buffer filled before the walk ended. flags holds VS_NAMED and VS_PUNCT by
// grammar symbol; symbols past nflags (ERROR) ask the node. Every named node
// is kept, and an anonymous token only when the grammar gives it a field name
// and it is not punctuation; the root is always kept. Depth counts every node
// on the cursor's path, kept or not.
int vs_walk_next(vs_walker *w, const uint8_t *flags, uint32_t nflags, vs_node *out, uint32_t cap, uint32_t *written) {
	uint32_t n = 0;
	*written = 0;
	if (w->finished) {
		return VS_DONE;
	}
	if (w->count == 0) { // the root
		if (cap == 0) {
			return VS_MORE;
		}
		TSNode root = ts_tree_cursor_current_node(&w->cur);
		fill(&out[n++], root, ts_node_symbol(root), 0, -1);
		w->count = 1;
		w->kept[0] = 0;
		if (!ts_tree_cursor_goto_first_child(&w->cur)) {
			w->finished = 1;
			*written = n;
			return VS_DONE;
		}
		w->depth = 1;
		w->pending = 1;
	}
	for (;;) {
		if (w->pending) {
			TSNode node = ts_tree_cursor_current_node(&w->cur);
			uint16_t sym = ts_node_symbol(node);
			uint8_t fl = sym < nflags ? flags[sym] : (ts_node_is_named(node) ? VS_NAMED : 0);
			uint16_t field = (fl & VS_PUNCT) ? 0 : ts_tree_cursor_current_field_id(&w->cur);
			int32_t parent = w->kept[w->depth - 1];
			w->kept[w->depth] = parent;
			if ((fl & VS_NAMED) || field != 0) {
				if (n == cap) {
					*written = n;
					return VS_MORE;
				}
				if (w->count >= w->max_nodes) {
					w->count++;
					*written = n;
					return VS_TOO_LARGE;
				}
				fill(&out[n], node, sym, field, parent);
				w->kept[w->depth] = (int32_t)w->count;
				n++;
				w->count++;
			}
			w->pending = 0;
		}
		if (ts_tree_cursor_goto_first_child(&w->cur)) {
			if (w->depth >= w->max_depth) {
				*written = n;
				return VS_TOO_DEEP;
			}
			w->depth++;
			w->pending = 1;
			continue;
		}
		for (;;) {
			if (ts_tree_cursor_goto_next_sibling(&w->cur)) {
				w->pending = 1;
				break;
			}
			if (!ts_tree_cursor_goto_parent(&w->cur) || --w->depth == 0) {
				w->finished = 1;
				*written = n;
				return VS_DONE;
			}
		}
	}
}
