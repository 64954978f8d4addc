/*
 * sha256 — SHA-256 (FIPS 180-4), pure, for the bench's configHash
 * (ledger/verdict.h): two benches compare only when the hash of their
 * configuration is the same.  Not for secrets: no constant-time claims,
 * no wiping.
 */
#ifndef LEDGER_SHA256_H
#define LEDGER_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN	32
#define SHA256_HEX	65	/* 64 hex digits and the NUL */

struct sha256 {
	uint32_t	h[8];
	uint64_t	bytes;		/* fed so far */
	uint8_t		buf[64];	/* a block being filled */
	size_t		n;		/* bytes in buf */
};

/* Feed in any pieces: the digest is that of their concatenation.  These
 * cannot fail. */
void	sha256_init(struct sha256 *s);
void	sha256_update(struct sha256 *s, const void *p, size_t n);
void	sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN]);

/* The digest of p[0..n) as 64 lowercase hex digits and a NUL. */
void	sha256_hex(const void *p, size_t n, char out[SHA256_HEX]);

#endif
