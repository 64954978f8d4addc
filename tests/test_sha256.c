/*
 * sha256: the FIPS 180-4 examples (NIST's "SHA256.pdf" and the million
 * a's), and the same digest however the input is cut into pieces.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ledger/sha256.h"

static const struct {
	const char	*in, *hex;
} vectors[] = {
	{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
	  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
	/* 55, 56 and 64 bytes: the padding's edge cases */
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	  "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	  "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	  "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
};

static void
sha256_vectors(void **state)
{
	char	hex[SHA256_HEX];
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		sha256_hex(vectors[i].in, strlen(vectors[i].in), hex);
		assert_string_equal(hex, vectors[i].hex);
	}
}

static void
sha256_million_a(void **state)
{
	struct sha256	 s;
	uint8_t		 d[SHA256_LEN];
	char		 chunk[1000];
	static const uint8_t want[SHA256_LEN] = {
		0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92, 0x81, 0xa1,
		0xc7, 0xe2, 0x84, 0xd7, 0x3e, 0x67, 0xf1, 0x80, 0x9a, 0x48,
		0xa4, 0x97, 0x20, 0x0e, 0x04, 0x6d, 0x39, 0xcc, 0xc7, 0x11,
		0x2c, 0xd0
	};
	int		 i;

	(void)state;
	memset(chunk, 'a', sizeof(chunk));
	sha256_init(&s);
	for (i = 0; i < 1000; i++)
		sha256_update(&s, chunk, sizeof(chunk));
	sha256_final(&s, d);
	assert_memory_equal(d, want, SHA256_LEN);
}

/* Cut the 112-byte vector at every pair of points: one digest. */
static void
sha256_pieces(void **state)
{
	const char	*in = vectors[3].in;
	size_t		 n = strlen(in), i, j;
	struct sha256	 s;
	uint8_t		 d[SHA256_LEN], whole[SHA256_LEN];

	(void)state;
	sha256_init(&s);
	sha256_update(&s, in, n);
	sha256_final(&s, whole);
	for (i = 0; i <= n; i++)
		for (j = i; j <= n; j += 7) {
			sha256_init(&s);
			sha256_update(&s, in, i);
			sha256_update(&s, in + i, j - i);
			sha256_update(&s, in + j, n - j);
			sha256_final(&s, d);
			assert_memory_equal(d, whole, SHA256_LEN);
		}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sha256_vectors),
		cmocka_unit_test(sha256_million_a),
		cmocka_unit_test(sha256_pieces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
