/*
 * footprint: the v2 key vectors, key derivation per type, the reading
 * rule (every record of schemas/footprint-vectors.json through the fold,
 * as page-runtime/footprint.js and tests/ledger/indep_fold.py read them), and
 * ISO-8601 times.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "ledger/footprint.h"
#include "ledger/jscan.h"
#include "ledger/ledger.h"

static const struct {
	const char	*id, *key;
} vectors[] = {
	{ "a64a6f58", "hitch|play|shader-compile|mat_hull@ship_#+mat_rock@ship_#|ctx:squad=duo,stance=helm" },
	{ "4fb3b53a", "hitch|-|long-script|no-script|ctx:" },
	{ "fc36b9b4", "hitch|play|long-script|crowdTick@/main.js|ctx:view=tps" },
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
	  "hitch|play|shader-compile|mat_hull@ship_#+mat_rock@ship_#|ctx:squad=duo,stance=helm" },
	{ "{\"type\":\"hitch\",\"classification\":[{\"guess\":\"long-script\"},{\"guess\":\"x\"}]}",
	  "hitch|-|long-script|no-script|ctx:" },
	/* v2: the sites a writer gave win over its minted pairs; a script
	 * named the browser's way keys a long-script hitch */
	{ "{\"type\":\"hitch\",\"sites\":[\"ShaderMaterial:glow_12@orb_3\"],"
	  "\"minted\":[\"glow_12@orb_3\"],\"classification\":{\"guess\":\"shader-compile\"}}",
	  "hitch|-|shader-compile|ShaderMaterial:glow_#@orb_#|ctx:" },
	{ "{\"type\":\"hitch\",\"script\":{\"name\":\"tick\",\"sourceURL\":"
	  "\"http://127.0.0.1:5173/src/a.js?t=1\"},\"classification\":{\"guess\":\"long-script\"}}",
	  "hitch|-|long-script|tick@/src/a.js|ctx:" },
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

/*
 * Every record of the shared vectors, folded alone: the id, the key and
 * the malformed count the reading rule gives (schemas/footprint-vectors.json;
 * the JS and Python readers check the same file).
 */
static void
footprint_vectors_file(void **state)
{
	FILE		*f;
	char		*text;
	long		 size;
	cJSON		*doc, *c;
	int		 n = 0;

	(void)state;
	f = fopen("schemas/footprint-vectors.json", "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	rewind(f);
	text = malloc((size_t)size + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
	text[size] = '\0';
	fclose(f);
	doc = cJSON_Parse(text);
	free(text);
	assert_non_null(doc);
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(doc, "design")) {
		const char	*key = cJSON_GetObjectItem(c, "key")->valuestring;
		char		 hex[9];

		footprint_hex(footprint_id(key, strlen(key)), hex);
		assert_string_equal(hex, cJSON_GetObjectItem(c, "id")->valuestring);
	}
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(doc, "records")) {
		struct ledger_opts	 o = { LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 0,
			NULL };
		struct ledger		*l = ledger_create(&o);
		struct ledger_event	 ev;
		struct ledger_counts	 k;
		char			*line;
		cJSON			*id = cJSON_GetObjectItem(c, "id");
		cJSON			*key = cJSON_GetObjectItem(c, "key");
		const char		*name = cJSON_GetObjectItem(c, "name")->valuestring;

		assert_non_null(l);
		line = cJSON_PrintUnformatted(cJSON_GetObjectItem(c, "record"));
		assert_non_null(line);
		memset(&ev, 0, sizeof(ev));
		assert_int_equal(ledger_fold_perf(l, line, strlen(line), 0, &ev), 0);
		free(line);
		if (cJSON_IsNull(id)) {
			if (ev.incident)
				fail_msg("%s: an incident %s", name, ev.id);
		} else {
			if (!ev.incident || strcmp(ev.id, id->valuestring) != 0)
				fail_msg("%s: id %s, the vectors say %s", name,
				    ev.id, id->valuestring);
			if (strcmp(ev.key, key->valuestring) != 0)
				fail_msg("%s: key %s, the vectors say %s", name,
				    ev.key, key->valuestring);
		}
		ledger_counts(l, &k);
		assert_int_equal(k.malformed_footprints,
		    cJSON_IsTrue(cJSON_GetObjectItem(c, "malformed")) ? 1 : 0);
		ledger_destroy(l);
		n++;
	}
	assert_true(n >= 40);
	cJSON_Delete(doc);
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
		cmocka_unit_test(footprint_vectors_file),
		cmocka_unit_test(footprint_no_derivation_for_other_types),
		cmocka_unit_test(footprint_key_is_bounded),
		cmocka_unit_test(footprint_hex_parse),
		cmocka_unit_test(iso_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
