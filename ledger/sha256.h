/*
 * sha256 — SHA-256 (FIPS 180-4), the project's one cryptographic hash:
 * the identity of a golden frame in goldens.jsonl (docs/gate.md) and of a
 * bench's configuration (configHash).  Pure, no allocation, no I/O.
 *
 * One call for bytes in memory (sha256), or a context fed in pieces
 * (sha256_init / _update / _final) for data that is made as it is hashed.
 */
#ifndef LEDGER_SHA256_H
#define LEDGER_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN	32		/* bytes of a digest */
#define SHA256_HEX	65		/* 64 lowercase hex digits + NUL */

struct sha256_ctx {
	uint32_t	h[8];
	uint64_t	bytes;		/* fed so far */
	uint8_t		block[64];	/* the block being filled */
	size_t		fill;
};

void	sha256_init(struct sha256_ctx *c);
void	sha256_update(struct sha256_ctx *c, const void *data, size_t len);
/* The digest into out; the context is then spent (init it again). */
void	sha256_final(struct sha256_ctx *c, uint8_t out[SHA256_LEN]);

/* The digest of data[0..len) into out.  Cannot fail. */
void	sha256(const void *data, size_t len, uint8_t out[SHA256_LEN]);

/* A digest as 64 lowercase hex digits and a NUL. */
void	sha256_hex(const uint8_t d[SHA256_LEN], char out[SHA256_HEX]);

#endif
