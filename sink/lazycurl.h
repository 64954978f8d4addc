/*
 * lazycurl — libcurl, loaded the first time something talks to ClickHouse.
 *
 * Why not link it: libcurl brings its whole TLS and auth stack (OpenSSL,
 * krb5, LDAP, libssh2, nghttp2, …) into every process that links it, some
 * 7 MB of resident pages with libnotify's glib, in a daemon whose target
 * is 32 MB on a 1 GB ledger (docs/performance.md) — and only the sink
 * (--sink, the `sink` verbs, `--team`) needs HTTP.  So neither program
 * links libcurl: lazycurl_load() dlopen()s it by its SONAME and fills one
 * table with the functions clickhouse.c calls.  The types and constants
 * still come from <curl/curl.h> (pkg-config --cflags), and every slot is
 * declared with __typeof__ of the real prototype, so a call through the
 * table is checked as a direct call would be.
 *
 * What the table drops: curl's typecheck-gcc macros, which wrap
 * curl_easy_setopt/getinfo by name; the members are named without the
 * curl_ prefix so those macros do not expand on them.
 *
 * Process-wide by nature (a dlopen handle is): a library loaded once stays
 * loaded for the life of the process (libcurl cannot be unloaded safely
 * after curl_global_init), and the table is read-only from then on.  A
 * failed load is not remembered: the next call tries again, so a library
 * installed while the daemon runs is found without a restart.
 */
#ifndef SINK_LAZYCURL_H
#define SINK_LAZYCURL_H

#include <errno.h>
#include <stddef.h>

#include <curl/curl.h>

#ifndef ELIBACC
#define ELIBACC	ENOENT		/* systems without it (macOS) */
#endif

/* The SONAME the headers belong to: libcurl4-openssl-dev's libcurl4. */
#ifdef __APPLE__
#define LAZYCURL_SONAME	"libcurl.4.dylib"
#else
#define LAZYCURL_SONAME	"libcurl.so.4"
#endif

struct lazycurl {
	__typeof__(curl_global_init)		*global_init;
	__typeof__(curl_free)			*free;
	__typeof__(curl_easy_init)		*easy_init;
	__typeof__(curl_easy_setopt)		*easy_setopt;
	__typeof__(curl_easy_getinfo)		*easy_getinfo;
	__typeof__(curl_easy_perform)		*easy_perform;
	__typeof__(curl_easy_cleanup)		*easy_cleanup;
	__typeof__(curl_easy_strerror)		*easy_strerror;
	__typeof__(curl_multi_init)		*multi_init;
	__typeof__(curl_multi_setopt)		*multi_setopt;
	__typeof__(curl_multi_add_handle)	*multi_add_handle;
	__typeof__(curl_multi_remove_handle)	*multi_remove_handle;
	__typeof__(curl_multi_perform)		*multi_perform;
	__typeof__(curl_multi_poll)		*multi_poll;
	__typeof__(curl_multi_info_read)	*multi_info_read;
	__typeof__(curl_multi_socket_action)	*multi_socket_action;
	__typeof__(curl_multi_assign)		*multi_assign;
	__typeof__(curl_multi_cleanup)		*multi_cleanup;
};

/*
 * Load libcurl (once; thread-safe) and run curl_global_init.  0 with *out
 * the table, or -ELIBACC with one sentence in err naming the library and
 * dlerror()'s reason (not found, not an ELF file, a function missing),
 * and *out NULL.  Blocks on the disk the first time: call it at start-up,
 * in a CLI verb, or on the thread pool — not from a loop callback.
 */
int	lazycurl_load(const struct lazycurl **out, char *err, size_t cap);

#endif
