/*
 * sha256: the FIPS 180-2 / NIST example vectors (the empty message,
 * "abc", the 448- and 896-bit messages, a million 'a'), the padding
 * boundaries (55, 56, 57, 63, 64, 65, 119, 120 bytes, digests from
 * Python's hashlib), and a message fed in two pieces at every split
 * point giving the digest of the whole.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ledger/sha256.h"

static void
hex_of(const void *p, size_t n, char out[SHA256_HEX])
{
	uint8_t	d[SHA256_LEN];

	sha256(p, n, d);
	sha256_hex(d, out);
}

static void
sha256_nist_vectors(void **state)
{
	static const struct {
		const char	*msg, *hex;
	} v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
		  "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
		  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
	};
	char	hex[SHA256_HEX];
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		hex_of(v[i].msg, strlen(v[i].msg), hex);
		assert_string_equal(hex, v[i].hex);
	}
}

static void
sha256_million_a(void **state)
{
	struct sha256_ctx	c;
	char			chunk[1000], hex[SHA256_HEX];
	uint8_t			d[SHA256_LEN];
	int			i;

	(void)state;
	memset(chunk, 'a', sizeof(chunk));
	sha256_init(&c);
	for (i = 0; i < 1000; i++)
		sha256_update(&c, chunk, sizeof(chunk));
	sha256_final(&c, d);
	sha256_hex(d, hex);
	assert_string_equal(hex,
	    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void
sha256_padding_boundaries(void **state)
{
	static const struct {
		size_t		 n;
		const char	*hex;
	} v[] = {
		{ 55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b" },
		{ 56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27" },
		{ 57, "35df609437dcfea3279283ab79fd554e2bf78f8f7ae2de532d8ee300b09e8f73" },
		{ 63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055" },
		{ 64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241" },
		{ 65, "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e" },
		{ 119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e" },
		{ 120, "7836b787757e95e58b3ca5aec90b1b004e8deba1e50e9675af9cabf1a13a04b5" },
	};
	uint8_t	m[128];
	char	hex[SHA256_HEX];
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(m); i++)
		m[i] = (uint8_t)(i * 7 + 3);
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		hex_of(m, v[i].n, hex);
		assert_string_equal(hex, v[i].hex);
	}
}

static void
sha256_pieces_are_the_whole(void **state)
{
	struct sha256_ctx	c;
	uint8_t			m[200], whole[SHA256_LEN], d[SHA256_LEN];
	size_t			i, cut, cut2;

	(void)state;
	for (i = 0; i < sizeof(m); i++)
		m[i] = (uint8_t)(i * 31 + 1);
	sha256(m, sizeof(m), whole);
	for (cut = 0; cut <= sizeof(m); cut++) {
		cut2 = cut + (sizeof(m) - cut) / 3;
		sha256_init(&c);
		sha256_update(&c, m, cut);
		sha256_update(&c, m + cut, cut2 - cut);
		sha256_update(&c, m + cut2, sizeof(m) - cut2);
		sha256_final(&c, d);
		assert_memory_equal(d, whole, sizeof(d));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sha256_nist_vectors),
		cmocka_unit_test(sha256_million_a),
		cmocka_unit_test(sha256_padding_boundaries),
		cmocka_unit_test(sha256_pieces_are_the_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
