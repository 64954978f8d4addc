/*
 * http: the blob writer the folds' answers are streamed into.  Streamed
 * and made compact on the way in, the catalogue and the timeline must be
 * byte for byte what the daemon served before as one printed tree
 * (cJSON_PrintUnformatted of ledger_*_json), so their ETags do not move;
 * a writer told to stop stops the render.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include <libwebsockets.h>

#include "daemon/http.h"
#include "ledger/ledger.h"

#define NOW_MS	1790000000000LL	/* 2026-09-21, after every fixture */

/* Fold a fixture (and its .fixes.jsonl, when there is one). */
static struct ledger *
fold_fixture(const char *name)
{
	struct ledger_opts	 o = { LEDGER_NO_TIME, LEDGER_NO_TIME, 0, 1,
				    NULL };
	struct ledger		*l = ledger_create(&o);
	char			 path[256], *line = NULL;
	size_t			 cap = 0;
	ssize_t			 n;
	uint64_t		 off;
	FILE			*f;
	int			 pass;

	assert_non_null(l);
	for (pass = 0; pass < 2; pass++) {
		snprintf(path, sizeof(path), "tests/fixtures/%s%s", name,
		    pass == 0 ? ".fixes.jsonl" : ".jsonl");
		if ((f = fopen(path, "r")) == NULL) {
			assert_int_equal(pass, 0);	/* fixes are optional */
			continue;
		}
		for (off = 0; (n = getline(&line, &cap, f)) > 0;
		    off += (uint64_t)n) {
			size_t	len = (size_t)n;

			if (line[len - 1] == '\n')
				len--;
			if (pass == 0)
				(void)ledger_fold_fix(l, line, len, off);
			else
				(void)ledger_fold_perf(l, line, len, off, NULL);
		}
		fclose(f);
	}
	free(line);
	return l;
}

static void
assert_same_bytes(cJSON *tree, struct http_blob *b)
{
	char	*txt = cJSON_PrintUnformatted(tree);

	assert_non_null(txt);
	assert_non_null(b);
	/* the blob ends with the newline every answer has */
	assert_int_equal(b->len, strlen(txt) + 1);
	assert_memory_equal(b->data + LWS_PRE, txt, strlen(txt));
	assert_int_equal(b->data[LWS_PRE + b->len - 1], '\n');
	free(txt);
	cJSON_Delete(tree);
}

/* Streamed into the writer: the bytes of the printed tree, for the
 * catalogue whole and filtered, and for the timeline. */
static void
http_streamed_answers_are_the_printed_trees(void **state)
{
	static const char *const fixtures[] = { "basic", "automated",
		"empty", "fix-status", "gaps", "heartbeats-only",
		"judged-fixed", "judged-pending", "judged-regressed",
		"malformed", "no-at", "strings-as-numbers", "unknown", NULL };
	struct ledger_query	 q = { NULL, "open", 2 };
	struct http_blob_writer	 w;
	struct http_blob	*b;
	struct ledger		*l;
	size_t			 i;
	int			 k;

	(void)state;
	for (i = 0; fixtures[i] != NULL; i++) {
		l = fold_fixture(fixtures[i]);
		for (k = 0; k < 3; k++) {
			http_blob_writer_init(&w, 1, NULL);
			assert_int_equal(k == 2 ? ledger_history_write(l, 12,
			    NOW_MS, NULL, http_blob_put, &w) :
			    ledger_issues_write(l, k ? &q : NULL, NOW_MS, NULL,
			    http_blob_put, &w), 0);
			b = http_blob_writer_finish(&w, 1);
			assert_same_bytes(k == 2 ? ledger_history_json(l, 12,
			    NOW_MS) : ledger_issues_json(l, k ? &q : NULL,
			    NOW_MS), b);
			http_blob_unref(b);
		}
		ledger_destroy(l);
	}
}

/* Layout is whitespace outside strings: inside one nothing is touched,
 * an escaped quote does not end it, and it may span pieces. */
static void
http_minify_keeps_strings_whole(void **state)
{
	static const char *const pieces[] = { "{\n\t\"a b\":\t\"x \\\" ",
		"\\\\\", \"c\"", ":\t[1, 2, {\n\t}],\n\t\"d\":\t\"\\\\\"\n}" };
	struct http_blob_writer	 w;
	struct http_blob	*b;
	size_t			 i;
	const char		*want = "{\"a b\":\"x \\\" \\\\\",\"c\":[1,2,{}],"
				    "\"d\":\"\\\\\"}";

	(void)state;
	http_blob_writer_init(&w, 1, NULL);
	for (i = 0; i < 3; i++)
		assert_int_equal(http_blob_put(&w, pieces[i],
		    strlen(pieces[i])), 0);
	b = http_blob_writer_finish(&w, 0);
	assert_non_null(b);
	assert_int_equal(b->len, strlen(want));
	assert_memory_equal(b->data + LWS_PRE, want, strlen(want));
	assert_int_equal(b->refs, 1);
	http_blob_unref(b);
	/* an empty writer is an empty blob */
	http_blob_writer_init(&w, 0, NULL);
	b = http_blob_writer_finish(&w, 1);
	assert_non_null(b);
	assert_int_equal(b->len, 1);
	http_blob_unref(b);
}

/* A writer told to stop refuses the next piece, and the render stops
 * there with its error. */
static void
http_writer_stops_when_told(void **state)
{
	struct http_blob_writer	 w;
	atomic_int		 stop;
	struct ledger		*l = fold_fixture("basic");

	(void)state;
	atomic_init(&stop, 1);
	http_blob_writer_init(&w, 1, &stop);
	assert_int_equal(http_blob_put(&w, "{}", 2), -ECANCELED);
	assert_int_equal(ledger_issues_write(l, NULL, NOW_MS, NULL,
	    http_blob_put, &w), -ECANCELED);
	http_blob_writer_free(&w);
	atomic_store(&stop, 0);
	http_blob_writer_init(&w, 1, &stop);
	assert_int_equal(ledger_issues_write(l, NULL, NOW_MS, NULL,
	    http_blob_put, &w), 0);
	http_blob_writer_free(&w);
	ledger_destroy(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(http_streamed_answers_are_the_printed_trees),
		cmocka_unit_test(http_minify_keeps_strings_whole),
		cmocka_unit_test(http_writer_stops_when_told),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
