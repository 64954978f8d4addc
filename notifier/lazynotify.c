/*
 * lazynotify — libnotify through dlopen (see lazynotify.h).
 *
 * The one piece of process-wide state in the notifier: the handle and the
 * table, filled once under a mutex.  Once `fn` is set it never changes,
 * so a caller keeps the pointer it was given and calls through it from
 * any thread without the lock.
 */
#ifdef HAVE_LIBNOTIFY

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "notifier/lazynotify.h"

static struct {
	pthread_mutex_t		 mu;
	int			 loaded;
	struct lazynotify	 fn;
} lazy = { PTHREAD_MUTEX_INITIALIZER, 0, { 0 } };

#define SLOT(name, member) { name, offsetof(struct lazynotify, member) }
static const struct {
	const char	*name;
	size_t		 off;
} slots[] = {
	SLOT("notify_init", init),
	SLOT("notify_uninit", uninit),
	SLOT("notify_is_initted", is_initted),
	SLOT("notify_get_server_info", get_server_info),
	SLOT("notify_notification_new", notification_new),
	SLOT("notify_notification_update", notification_update),
	SLOT("notify_notification_set_app_name", notification_set_app_name),
	SLOT("notify_notification_set_urgency", notification_set_urgency),
	SLOT("notify_notification_show", notification_show),
	SLOT("g_main_context_iteration", g_main_context_iteration),
	SLOT("g_bus_get_sync", g_bus_get_sync),
	SLOT("g_object_unref", g_object_unref),
	SLOT("g_clear_error", g_clear_error),
	SLOT("g_free", g_free),
	SLOT("g_utf8_make_valid", g_utf8_make_valid),
	SLOT("g_markup_escape_text", g_markup_escape_text),
};
#undef SLOT

/* Called with the lock held and nothing loaded yet. */
static int
lazynotify_open(char *err, size_t cap)
{
	struct lazynotify	 fn;
	const char		*why;
	void			*h, *sym;
	size_t			 i;

	/* RTLD_NOW: a missing function fails here with a message, not as a
	 * crash in the middle of a bubble; RTLD_LOCAL: glib stays out of the
	 * global namespace. */
	dlerror();
	if ((h = dlopen(LAZYNOTIFY_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		why = dlerror();
		snprintf(err, cap, "cannot load libnotify (%s), which desktop "
		    "notifications need: %s", LAZYNOTIFY_SONAME,
		    why != NULL ? why : "unknown error");
		return -ELIBACC;
	}
	memset(&fn, 0, sizeof(fn));
	for (i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
		dlerror();
		if ((sym = dlsym(h, slots[i].name)) == NULL) {
			why = dlerror();
			snprintf(err, cap, "cannot load libnotify (%s), which "
			    "desktop notifications need: no %s (%s)",
			    LAZYNOTIFY_SONAME, slots[i].name,
			    why != NULL ? why : "NULL");
			dlclose(h);
			return -ELIBACC;
		}
		/* POSIX: dlsym's void * holds a function pointer */
		memcpy((char *)&fn + slots[i].off, &sym, sizeof(sym));
	}
	lazy.fn = fn;
	lazy.loaded = 1;
	return 0;
}

int
lazynotify_load(const struct lazynotify **out, char *err, size_t cap)
{
	int	rc = 0;

	*out = NULL;
	pthread_mutex_lock(&lazy.mu);
	if (!lazy.loaded)
		rc = lazynotify_open(err, cap);
	if (rc == 0)
		*out = &lazy.fn;
	pthread_mutex_unlock(&lazy.mu);
	return rc;
}

#else	/* no libnotify backend: nothing to load, and ISO C wants a
	   declaration in every translation unit */
typedef int lazynotify_none;
#endif
