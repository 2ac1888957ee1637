// Declarations shared by walk.c and the Go side of the tree copy.
#ifndef VULNSCAN_SYNTAX_WALK_H
#define VULNSCAN_SYNTAX_WALK_H

#include <stdint.h>

// One copied node. The walk writes kept nodes in preorder; parent is the
// index of the nearest kept ancestor (-1 for the root).
typedef struct {
	uint32_t start, end;   // byte offsets
	uint32_t row, end_row; // 0-based rows of the first and the last byte
	int32_t parent;
	uint16_t symbol;       // grammar symbol (0xFFFF for ERROR)
	uint16_t field;        // field id under the parent, 0 when none
	uint32_t named;        // only read for symbols outside the table
} vs_node;

// Flags per grammar symbol, computed once on the Go side.
enum { VS_NAMED = 1, VS_PUNCT = 2 };

// Walk results.
enum { VS_DONE = 0, VS_MORE = 1, VS_TOO_DEEP = 2, VS_TOO_LARGE = 3, VS_NO_RUNTIME = 4, VS_NO_MEMORY = 5 };

typedef struct vs_walker vs_walker;

vs_walker *vs_walk_begin(void *tree, uint32_t max_depth, uint32_t max_nodes);
int vs_walk_next(vs_walker *w, const uint8_t *flags, uint32_t nflags, vs_node *out, uint32_t cap, uint32_t *written);
uint32_t vs_walk_count(const vs_walker *w);
void vs_walk_end(vs_walker *w);

#endif
