/*
 * jscan_prim — the byte-level pieces the scanner's files share: the SWAR
 * byte masks, UTF-8 and \u escape checks, whitespace, and which member
 * of the fold a name is.  Header-only and static inline: they sit in the
 * scanner's hottest loops, where a call would cost more than they do.
 *
 * The ground floor of the scanner: jscan.c (the reference scanner),
 * jscan_get.c (lookups) and jscan_fast.c (the fast path) all include it,
 * and it includes nothing of theirs, only the enums of jscan_names.h.
 * Not for use outside ledger/jscan*.c: the short names (ws, hex4, ONES)
 * are the scanner's own.
 */
#ifndef LEDGER_JSCAN_PRIM_H
#define LEDGER_JSCAN_PRIM_H

#include <stdint.h>
#include <string.h>

#include "ledger/jscan_names.h"

/* LEDGER_PORTABLE builds the plain-C paths only, as on other machines. */
#if defined(__x86_64__) && !defined(LEDGER_PORTABLE)
#include <immintrin.h>
#define JSCAN_X86	1
#endif

#define ONES	0x0101010101010101ull
#define HIGHS	0x8080808080808080ull

/* Length of the valid UTF-8 sequence at p (lead byte >= 0x80), or 0. */
static inline int
utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned char	c = p[0];
	int		n, i;
	uint32_t	cp;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (end - p < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

static inline int
hex4(const char *p, uint32_t *out)
{
	uint32_t	v = 0;
	int		i;

	for (i = 0; i < 4; i++) {
		char	c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else {
			*out = 0;	/* always written: callers on validated
					   spans need not check */
			return -1;
		}
	}
	*out = v;
	return 0;
}

/* Top-level member names the fold reads: by length, then by the bytes,
 * which the compiler turns into a few word compares. */
#define IS(lit)	(memcmp(p, lit, sizeof(lit) - 1) == 0)
static inline int
field_of(const char *p, uint32_t n)
{
	switch (n) {
	case 2:
		return IS("at") ? F_AT : -1;
	case 3:
		return IS("ctx") ? F_CTX : -1;
	case 4:
		return IS("type") ? F_TYPE : IS("jump") ? F_JUMP :
		    IS("kind") ? F_KIND : IS("note") ? F_NOTE : -1;
	case 5:
		switch (p[0]) {
		case 'b': return IS("build") ? F_BUILD : -1;
		case 'f': return IS("frame") ? F_FRAME : -1;
		case 'p': return IS("phase") ? F_PHASE : -1;
		case 's': return IS("sites") ? F_SITES : -1;
		case 't': return IS("track") ? F_TRACK : -1;
		case 'u': return IS("units") ? F_UNITS : -1;
		case 'w': return IS("worst") ? F_WORST : -1;
		default: return -1;
		}
	case 6:
		return IS("minted") ? F_MINTED : IS("render") ? F_RENDER :
		    IS("memory") ? F_MEMORY : IS("script") ? F_SCRIPT :
		    IS("regime") ? F_REGIME : IS("window") ? F_WINDOW : -1;
	case 7:
		return IS("frameMs") ? F_FRAMEMS : -1;
	case 9:
		return IS("automated") ? F_AUTOMATED :
		    IS("footprint") ? F_FOOTPRINT : -1;
	case 14:
		return IS("classification") ? F_CLASSIFICATION : -1;
	default:
		return -1;
	}
}
#undef IS

/* Past the JSON whitespace at p. */
static inline const char *
ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

#endif
