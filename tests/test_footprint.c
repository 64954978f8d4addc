/*
 * footprint: the six vectors of DESIGN §6, key derivation per type, the
 * reading rule, and ISO-8601 times.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ledger/footprint.h"
#include "ledger/jscan.h"

static const struct {
	const char	*id, *key;
} vectors[] = {
	{ "81e5eb9b", "hitch|play|shader-compile|mat_hull@ship_1+mat_rock@ship_3|ctx:squad=duo,stance=helm" },
	{ "16a7255f", "hitch|-|long-script|-|ctx:" },
	{ "d423dcef", "jitter|unit|snap|play|snap|horizontal|ctx:hull=elong-x,squad=duo,stance=helm" },
	{ "0ba16a4d", "jitter|camera|oscillation|play|follows-track|vertical|ctx:" },
	{ "68faa5c5", "usermark|match|texture-upload|ctx:view=fp" },
	{ "941f2650", "hitch|pl_ay|spawn-burst|x_y@z_w|ctx:a=b" },
};

static void
footprint_vectors(void **state)
{
	size_t	i;
	char	hex[9];

	(void)state;
	for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		footprint_hex(footprint_id(vectors[i].key,
		    strlen(vectors[i].key)), hex);
		assert_string_equal(hex, vectors[i].id);
	}
}

/* Records whose derived key must be exactly the vector's key. */
static const struct {
	const char	*record, *key;
} derive[] = {
	{ "{\"type\":\"hitch\",\"phase\":\"play\",\"ctx\":\"squad=duo,stance=helm\","
	  "\"minted\":[\"mat_rock@ship_3\",\"mat_hull@ship_1\",\"mat_rock@ship_3\"],"
	  "\"classification\":{\"guess\":\"shader-compile\",\"confidence\":\"medium\"}}",
	  "hitch|play|shader-compile|mat_hull@ship_1+mat_rock@ship_3|ctx:squad=duo,stance=helm" },
	{ "{\"type\":\"hitch\",\"classification\":[{\"guess\":\"long-script\"},{\"guess\":\"x\"}]}",
	  "hitch|-|long-script|-|ctx:" },
	{ "{\"type\":\"jitter\",\"track\":\"unit\",\"kind\":\"snap\",\"phase\":\"play\","
	  "\"jump\":[0.6,0.3,0],\"ctx\":\"hull=elong-x,squad=duo,stance=helm\","
	  "\"classification\":[{\"guess\":\"snap\"}]}",
	  "jitter|unit|snap|play|snap|horizontal|ctx:hull=elong-x,squad=duo,stance=helm" },
	{ "{\"type\":\"jitter\",\"track\":\"camera\",\"kind\":\"oscillation\",\"phase\":\"play\","
	  "\"jump\":[0.1,-0.5,0.2],\"classification\":[{\"guess\":\"follows-track\"}]}",
	  "jitter|camera|oscillation|play|follows-track|vertical|ctx:" },
	{ "{\"type\":\"usermark\",\"phase\":\"match\",\"ctx\":\"view=fp\",\"worst\":["
	  "{\"frameMs\":40,\"classification\":{\"guess\":\"texture-upload\"}},"
	  "{\"frameMs\":30,\"classification\":{\"guess\":\"other\"}}]}",
	  "usermark|match|texture-upload|ctx:view=fp" },
	{ "{\"type\":\"hitch\",\"phase\":\"pl|ay\",\"minted\":[\"x,y@z=w\"],\"ctx\":\"a=b\","
	  "\"classification\":{\"guess\":\"spawn-burst\"}}",
	  "hitch|pl_ay|spawn-burst|x_y@z_w|ctx:a=b" },
	/* a tie between |x| and |y| is horizontal */
	{ "{\"type\":\"jitter\",\"track\":\"unit\",\"kind\":\"snap\",\"jump\":[0.5,0.5,0]}",
	  "jitter|unit|snap|-|-|horizontal|ctx:" },
	/* usermark without worst, jitter without jump */
	{ "{\"type\":\"usermark\"}", "usermark|-|-|ctx:" },
	{ "{\"type\":\"jitter\"}", "jitter|-|-|-|-|horizontal|ctx:" },
};

static void
footprint_derive_per_type(void **state)
{
	size_t			i;
	struct jscan_result	r;
	char			key[FOOTPRINT_KEY_MAX];

	(void)state;
	for (i = 0; i < sizeof(derive) / sizeof(derive[0]); i++) {
		assert_int_equal(jscan_object(derive[i].record,
		    strlen(derive[i].record), &r), 0);
		assert_true(footprint_derive(&r, key, sizeof(key)) > 0);
		assert_string_equal(key, derive[i].key);
	}
}

static void
footprint_no_derivation_for_other_types(void **state)
{
	const char		*rec = "{\"type\":\"heartbeat\"}";
	struct jscan_result	r;
	char			key[64];

	(void)state;
	assert_int_equal(jscan_object(rec, strlen(rec), &r), 0);
	assert_int_equal(footprint_derive(&r, key, sizeof(key)), -1);
}

static void
footprint_key_is_bounded(void **state)
{
	char			rec[20000], key[256];
	struct jscan_result	r;
	size_t			n;

	(void)state;
	n = (size_t)snprintf(rec, sizeof(rec), "{\"type\":\"hitch\",\"ctx\":\"");
	memset(rec + n, 'a', 10000);
	strcpy(rec + n + 10000, "\"}");
	assert_int_equal(jscan_object(rec, strlen(rec), &r), 0);
	assert_int_equal(footprint_derive(&r, key, sizeof(key)), 255);
	assert_int_equal(strlen(key), 255);
}

static void
footprint_hex_parse(void **state)
{
	uint32_t	v;

	(void)state;
	assert_int_equal(footprint_parse_hex("81E5eb9b", 8, &v), 0);
	assert_true(v == 0x81e5eb9b);
	assert_int_equal(footprint_parse_hex("81e5eb9", 7, &v), -1);
	assert_int_equal(footprint_parse_hex("81e5eb9g", 8, &v), -1);
}

static void
iso_round_trip(void **state)
{
	int64_t	ms;
	char	out[32];

	(void)state;
	assert_int_equal(iso_parse_ms("2026-09-01T09:00:35.714Z", 24, &ms), 0);
	iso_format_ms(ms, out);
	assert_string_equal(out, "2026-09-01T09:00:35.714Z");
	assert_int_equal(iso_parse_ms("2026-09-01T11:00:35.7+02:00", 27, &ms), 0);
	iso_format_ms(ms, out);
	assert_string_equal(out, "2026-09-01T09:00:35.700Z");
	assert_int_equal(iso_parse_ms("2026-09-01T09:00Z", 17, &ms), 0);
	iso_format_ms(ms, out);
	assert_string_equal(out, "2026-09-01T09:00:00.000Z");
	assert_int_equal(iso_parse_ms("1969-12-31T23:59:59.999Z", 24, &ms), 0);
	assert_true(ms == -1);
	iso_format_ms(ms, out);
	assert_string_equal(out, "1969-12-31T23:59:59.999Z");
	assert_int_equal(iso_parse_ms("2026-13-01T09:00:00Z", 20, &ms), -1);
	assert_int_equal(iso_parse_ms("2026-09-01T09:00:00", 19, &ms), -1);
	assert_int_equal(iso_parse_ms("yesterday", 9, &ms), -1);
	assert_int_equal(iso_parse_ms("2026-09-01T09:00:00.Z", 21, &ms), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(footprint_vectors),
		cmocka_unit_test(footprint_derive_per_type),
		cmocka_unit_test(footprint_no_derivation_for_other_types),
		cmocka_unit_test(footprint_key_is_bounded),
		cmocka_unit_test(footprint_hex_parse),
		cmocka_unit_test(iso_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
