/*
 * lazycurl — libcurl through dlopen (see lazycurl.h).
 *
 * The one piece of process-wide state in the sink: the handle and the
 * table, filled once under a mutex.  Once `fn` is set it never changes,
 * so callers keep the pointer they were given and call through it from
 * any thread without the lock.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "sink/lazycurl.h"

static struct {
	pthread_mutex_t		 mu;
	void			*handle;
	struct lazycurl		 fn;
} lazy = { PTHREAD_MUTEX_INITIALIZER, NULL, { 0 } };

/* Every slot of the table, by the name libcurl exports. */
#define SLOT(name, member) { name, offsetof(struct lazycurl, member) }
static const struct {
	const char	*name;
	size_t		 off;
} slots[] = {
	SLOT("curl_global_init", global_init),
	SLOT("curl_free", free),
	SLOT("curl_easy_init", easy_init),
	SLOT("curl_easy_setopt", easy_setopt),
	SLOT("curl_easy_getinfo", easy_getinfo),
	SLOT("curl_easy_perform", easy_perform),
	SLOT("curl_easy_cleanup", easy_cleanup),
	SLOT("curl_easy_strerror", easy_strerror),
	SLOT("curl_multi_init", multi_init),
	SLOT("curl_multi_setopt", multi_setopt),
	SLOT("curl_multi_add_handle", multi_add_handle),
	SLOT("curl_multi_remove_handle", multi_remove_handle),
	SLOT("curl_multi_perform", multi_perform),
	SLOT("curl_multi_poll", multi_poll),
	SLOT("curl_multi_info_read", multi_info_read),
	SLOT("curl_multi_socket_action", multi_socket_action),
	SLOT("curl_multi_assign", multi_assign),
	SLOT("curl_multi_cleanup", multi_cleanup),
};
#undef SLOT

/* Called with the lock held and nothing loaded yet. */
static int
lazycurl_open(char *err, size_t cap)
{
	struct lazycurl	 fn;
	const char	*why;
	void		*h, *sym;
	size_t		 i;
	CURLcode	 cc;

	/*
	 * RTLD_NOW: a function missing in libcurl's own dependencies fails
	 * here, with a message, and not later as a crash in the middle of a
	 * request.  RTLD_LOCAL: nothing of the TLS stack leaks into the
	 * global namespace where another library could bind to it.
	 */
	dlerror();
	if ((h = dlopen(LAZYCURL_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		why = dlerror();
		snprintf(err, cap, "cannot load libcurl (%s), which the sink "
		    "needs: %s", LAZYCURL_SONAME, why != NULL ? why :
		    "unknown error");
		return -ELIBACC;
	}
	memset(&fn, 0, sizeof(fn));
	for (i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
		dlerror();
		if ((sym = dlsym(h, slots[i].name)) == NULL) {
			why = dlerror();
			snprintf(err, cap, "cannot load libcurl (%s), which "
			    "the sink needs: no %s (%s)", LAZYCURL_SONAME,
			    slots[i].name, why != NULL ? why : "NULL");
			dlclose(h);
			return -ELIBACC;
		}
		/* POSIX: a function pointer and a void * share a
		 * representation (dlsym's contract) */
		memcpy((char *)&fn + slots[i].off, &sym, sizeof(sym));
	}
	if ((cc = fn.global_init(CURL_GLOBAL_DEFAULT)) != CURLE_OK) {
		snprintf(err, cap, "libcurl (%s) did not start: %s",
		    LAZYCURL_SONAME, fn.easy_strerror(cc));
		/* kept open: curl_global_init may have half-run */
		lazy.handle = h;
		return -ELIBACC;
	}
	lazy.fn = fn;
	lazy.handle = h;
	return 0;
}

int
lazycurl_load(const struct lazycurl **out, char *err, size_t cap)
{
	int	rc = 0;

	*out = NULL;
	pthread_mutex_lock(&lazy.mu);
	if (lazy.fn.global_init == NULL) {
		if (lazy.handle != NULL)
			snprintf(err, cap, "libcurl (%s) did not start "
			    "(curl_global_init failed)", LAZYCURL_SONAME);
		rc = lazy.handle != NULL ? -ELIBACC : lazycurl_open(err, cap);
	}
	if (rc == 0)
		*out = &lazy.fn;
	pthread_mutex_unlock(&lazy.mu);
	return rc;
}
