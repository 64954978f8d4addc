/*
 * jscan — a validating, allocation-free JSON scanner for ledger lines.
 *
 * The fold must run at ≥ 500 MB/s, about twice what building a cJSON tree
 * per line costs, so the hot path does not build trees: jscan_object()
 * checks one line against RFC 8259 (strict grammar, strict UTF-8, a depth
 * limit) and records where each top-level member's value lies.  Nested
 * values are looked up later with jscan_get()/jscan_at() on spans that
 * are already known to be valid, which is cheap because they are small.
 * Everything else in the project parses and builds JSON with cJSON.
 *
 * Spans point into the caller's buffer: they live as long as it does.
 */
#ifndef LEDGER_JSCAN_H
#define LEDGER_JSCAN_H

#include <stddef.h>
#include <stdint.h>

enum jkind {
	J_NONE = 0,	/* absent */
	J_STRING,	/* p/n cover the raw bytes between the quotes */
	J_NUMBER,
	J_TRUE,
	J_FALSE,
	J_NULL,
	J_OBJECT,	/* p/n cover the braces too */
	J_ARRAY
};

struct jspan {
	const char	*p;
	uint32_t	 n;
	uint8_t		 kind;
	uint8_t		 escaped;	/* string holds a backslash escape */
};

#define JSCAN_MAX_DEPTH	128

/* Top-level member names the fold looks at; everything else is validated
 * and passed over. */
enum jfield {
	F_TYPE, F_AT, F_PHASE, F_CTX, F_BUILD, F_AUTOMATED, F_FOOTPRINT,
	F_FRAMEMS, F_CLASSIFICATION, F_MINTED, F_WORST, F_JUMP, F_TRACK,
	F_KIND, F_UNITS, F_FRAME, F_RENDER, F_MEMORY, F_NOTE, F_NFIELDS
};

struct jscan_result {
	struct jspan	 f[F_NFIELDS];
	const char	*error;		/* why the line was refused, or NULL */
	size_t		 error_at;	/* byte offset of the fault in the line */
};

/*
 * Validate line[0..len) as exactly one JSON object (whitespace around it
 * allowed) and fill r->f[] with its interesting members (last duplicate
 * wins).  Returns 0, or -1 with r->error set to a short static reason.
 */
int	jscan_object(const char *line, size_t len, struct jscan_result *r);

/* Member `name` of a valid object span; kind J_NONE if absent or if `obj`
 * is not an object. */
struct jspan	jscan_get(struct jspan obj, const char *name);
/* Several members in one pass: out[i] is member names[i] (n <= 8). */
void		jscan_getn(struct jspan obj, const char *const *names,
		    struct jspan *out, size_t n);
/* Element `i` of a valid array span; J_NONE if out of range. */
struct jspan	jscan_at(struct jspan arr, size_t i);
/* Iterate a valid array: *pos starts at 0; returns J_NONE at the end. */
struct jspan	jscan_next(struct jspan arr, size_t *pos);

/*
 * Decode a string span into buf (NUL-terminated, at most cap-1 bytes,
 * truncated at a UTF-8 boundary).  Returns the decoded length, or -1 if
 * the span is not a string.  Numbers and literals are copied verbatim.
 */
int	jscan_str(struct jspan s, char *buf, size_t cap);
/* A number, or a string holding exactly one number ("12.5").  Returns 0
 * and sets *out, or -1. */
int	jscan_num(struct jspan s, double *out);
/* Does a string span equal the C string exactly? */
int	jscan_eq(struct jspan s, const char *lit);

#endif
