/*
 * footprint — identity of a cause (DESIGN §6, footprint v2:
 * docs/footprint-v2.md), plus the small
 * text helpers the key needs: FNV-1a 32, separator scrubbing, ISO-8601
 * times.  Pure functions, no allocation.
 */
#ifndef LEDGER_FOOTPRINT_H
#define LEDGER_FOOTPRINT_H

#include <stddef.h>
#include <stdint.h>

#include "jscan.h"

#define FOOTPRINT_VERSION	2
#define FOOTPRINT_KEY_MAX	4096	/* keys longer than this are cut */

/* The bounds of a v2 hitch's cause field, in bytes (docs/footprint-v2.md);
 * page-runtime/footprint.js has the same. */
#define FOOTPRINT_SITE_IN	4096	/* of each string, what is looked at */
#define FOOTPRINT_SITE_MAX	48	/* one site, normalised */
#define FOOTPRINT_SITES_MAX	120	/* the sites joined */
#define FOOTPRINT_SITES_IN	128	/* strings looked at */
#define FOOTPRINT_SCRIPT_NAME_MAX 48	/* a script's function name */
#define FOOTPRINT_SCRIPT_FILE_MAX 64	/* its file: the path's last bytes */

/*
 * FNV-1a, the project's one non-cryptographic hash: 32 bits for ids
 * (footprints, the state directory's name, checksums), 64 bits where
 * collisions must be rarer (the cursor's window hash, ETags).  _more
 * continues a running hash started at FNV1A32_INIT / FNV1A64_INIT.
 */
#define FNV1A32_INIT	2166136261u
#define FNV1A64_INIT	0xcbf29ce484222325ull
uint32_t	fnv1a32(const void *data, size_t len);
uint32_t	fnv1a32_more(uint32_t h, const void *data, size_t len);
uint64_t	fnv1a64(const void *data, size_t len);
uint64_t	fnv1a64_more(uint64_t h, const void *data, size_t len);

/*
 * CRC-32C (Castagnoli) of data, continuing `crc` (0 to start): the SSE4.2
 * instruction where there is one (some 8 GB/s), a table elsewhere.  For
 * hashing whole files fast: the checkpoint's trailer, and the prefix a
 * cursor or a checkpoint stands on (project/filemark.h).
 */
uint32_t	crc32c_more(uint32_t crc, const void *data, size_t len);
/* The same by the table alone: what a machine without the instruction
 * computes (the tests hold the two equal). */
uint32_t	crc32c_sw(uint32_t crc, const void *data, size_t len);

/* id of a v2 key: FNV-1a 32 of "v2:" + key */
uint32_t	footprint_id(const char *key, size_t len);
/* 8 lowercase hex digits + NUL */
void		footprint_hex(uint32_t id, char out[9]);
/* Parse exactly 8 hex digits (either case).  0 or -1. */
int		footprint_parse_hex(const char *s, size_t n, uint32_t *id);

/* Replace | , = \n \r \t with '_' in place. */
void		footprint_scrub(char *s);

/*
 * Derive the v2 key of a record from its top-level members (as found by
 * jscan_object).  Returns the key length (cut at FOOTPRINT_KEY_MAX-1), or
 * -1 if the type has no derivation (not hitch, usermark or jitter).
 */
struct jscan_result;
int		footprint_derive(const struct jscan_result *r, char *key,
		    size_t cap);

/* The top classification guess of a `classification` value (one object or
 * a ranked array); J_NONE if there is none. */
struct jspan	footprint_top_class(struct jspan cls);

/*
 * ISO-8601 date-time to milliseconds since the epoch.  Accepts
 * YYYY-MM-DDTHH:MM[:SS[.fff…]] followed by Z, ±HH:MM or ±HHMM (a space may
 * stand for the T).  Returns 0 or -1.
 */
int		iso_parse_ms(const char *s, size_t n, int64_t *ms);
/* Milliseconds to "YYYY-MM-DDTHH:MM:SS.mmmZ" (24 chars + NUL). */
void		iso_format_ms(int64_t ms, char out[32]);

#endif
