/*
 * jscan — a validating JSON scanner for ledger lines.
 *
 * The fold must run at ≥ 1 GB/s, several times what building a cJSON
 * tree per line costs, so the hot path builds no tree: jscan_object()
 * checks one line against RFC 8259 (strict grammar, strict UTF-8, a depth
 * limit) and records where each top-level member's value lies.  Nested
 * values are looked up later with jscan_get()/jscan_at() (or their _in
 * variants, through the line's token index) on spans already known to be
 * valid.  How it is fast is in jscan.c and docs/performance.md.
 * Everything else in the project parses and builds JSON with cJSON.
 *
 * Spans point into the caller's buffer: they live as long as it does.
 * No allocation, except a jscan_shapes' remembered plans.
 */
#ifndef LEDGER_JSCAN_H
#define LEDGER_JSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "ledger/jscan_names.h"

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

struct jscan_index;

struct jscan_result {
	struct jspan	 f[F_NFIELDS];
	const char	*error;		/* why the line was refused, or NULL */
	size_t		 error_at;	/* byte offset of the fault in the line */
	/* Where every token of the line is, for the *_in lookups: set by
	 * jscan_object_shaped, valid until the next scan with the same
	 * jscan_shapes; NULL otherwise. */
	const struct jscan_index *index;
};

/*
 * Validate line[0..len) as exactly one JSON object (whitespace around it
 * allowed) and fill r->f[] with its interesting members (last duplicate
 * wins; a member not there has kind J_NONE, and the rest of its span is
 * not to be read).  Returns 0, or -1 with r->error set to a short static
 * reason.
 * Reads no byte outside line[0..len); thread-safe, no set-up needed.
 */
int	jscan_object(const char *line, size_t len, struct jscan_result *r);

/*
 * Lines of one writer mostly share a shape (the same members in the same
 * order, values aside), and the grammar's verdict depends on nothing else:
 * a caller that scans many lines keeps a struct jscan_shapes, and a line
 * whose shape it has seen costs no grammar check.  The same answers as
 * jscan_object.  A jscan_shapes belongs to one thread at a time.
 */
struct jscan_shapes;
struct jscan_shapes	*jscan_shapes_create(void);	/* NULL: no memory */
void			 jscan_shapes_destroy(struct jscan_shapes *);
int	jscan_object_shaped(struct jscan_shapes *sh, const char *line,
	    size_t len, struct jscan_result *r);

/* The reference scanner: the same answer (and the same reason) by one
 * byte-at-a-time pass.  jscan_object uses it to say why a line is
 * refused; tests compare the two. */
int	jscan_object_ref(const char *line, size_t len, struct jscan_result *r);

/* The block classifiers jscan_object can use: enum jscan_isa, in
 * jscan_names.h. */
/* 1 if `isa` can run here. */
int	jscan_isa_supported(enum jscan_isa isa);
/* jscan_object with a given classifier (an unsupported one falls back to
 * the reference scanner). */
int	jscan_object_isa(const char *line, size_t len, struct jscan_result *r,
	    enum jscan_isa isa);
/* The fast path alone: 0 and r->f[] filled when it accepts the line, -1
 * when it refuses it or does not take lines this long (no reason given:
 * jscan_object asks the reference scanner then).  It takes lines of up to
 * JSCAN_FAST_MAX_LEN bytes and JSCAN_FAST_MAX_TOKENS tokens: each
 * structural character, each quote, each run of other bytes outside
 * strings. */
#define JSCAN_FAST_MAX_LEN	8192
#define JSCAN_FAST_MAX_TOKENS	512
int	jscan_object_fast(const char *line, size_t len, struct jscan_result *r,
	    enum jscan_isa isa);

/* Member `name` of a valid object span; kind J_NONE if absent or if `obj`
 * is not an object. */
struct jspan	jscan_get(struct jspan obj, const char *name);
/* Several members in one pass: out[i] is member names[i] (n <= 8). */
void		jscan_getn(struct jspan obj, const char *const *names,
		    struct jspan *out, size_t n);
/*
 * The same lookups on spans of r's line, walking its token index instead
 * of its bytes when r has one (a member costs a few compares however big
 * the values it steps over); the same answers either way.
 */
void		jscan_getn_in(const struct jscan_result *r, struct jspan obj,
		    const char *const *names, struct jspan *out, size_t n);
struct jspan	jscan_get_in(const struct jscan_result *r, struct jspan obj,
		    const char *name);
struct jspan	jscan_at_in(const struct jscan_result *r, struct jspan arr,
		    size_t i);
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

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlong form,
 * no surrogate, nothing past U+10FFFF), 1 for ASCII, or 0: the scanner's
 * own rule, for writers that must emit valid JSON text (the MCP server). */
int	jscan_utf8_len(const unsigned char *p, const unsigned char *end);

/*
 * Does the number p[0..n) — grammatical, as both scanners have checked —
 * round to a finite double?  1 or 0 (docs/json.md: a number beyond a
 * double's range, 1e999999, is refused like bad grammar).  Only a number
 * with an exponent or 200 digits or more can be out of range; both
 * scanners ask only then.
 */
int	jscan_number_fits(const char *p, size_t n);

#endif
