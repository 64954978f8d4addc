/*
 * lazynotify — libnotify (and the few glib, gobject and gio functions
 * desktop.c calls), loaded the first time desktop bubbles are wanted.
 *
 * Why not link it: libnotify pulls in glib, gobject, gio, gmodule,
 * gdk-pixbuf, libpng, libjpeg… — pages every sloptimize and sloptimized
 * would map (with libcurl some 7 MB of RSS, docs/performance.md) though
 * only a daemon with desktop notifications on ever shows a bubble.  So
 * neither program links it: lazynotify_load() dlopen()s libnotify by its
 * SONAME and fills one table.  The glib functions are looked up through
 * the same handle — dlsym searches a handle's own dependencies, and
 * libnotify depends on exactly the glib desktop.c must agree with.
 * Headers (types, enums, GError's layout) still come from pkg-config, and
 * every slot has __typeof__ of the real prototype.
 *
 * Process-wide by nature: once loaded it stays (glib cannot be unloaded),
 * the table is read-only from then on, and a failed load is not
 * remembered, so the desktop's retry finds a library installed later.
 * Only in builds with the libnotify backend (HAVE_LIBNOTIFY).
 */
#ifndef NOTIFIER_LAZYNOTIFY_H
#define NOTIFIER_LAZYNOTIFY_H

#include <errno.h>
#include <stddef.h>

/* lazynotify_load's "cannot load" (macOS has no ELIBACC) */
#ifndef ELIBACC
#define ELIBACC	ENOENT
#endif

#ifdef HAVE_LIBNOTIFY

#include <libnotify/notify.h>

#define LAZYNOTIFY_SONAME	"libnotify.so.4"

struct lazynotify {
	__typeof__(notify_init)			*init;
	__typeof__(notify_uninit)		*uninit;
	__typeof__(notify_is_initted)		*is_initted;
	__typeof__(notify_get_server_info)	*get_server_info;
	__typeof__(notify_notification_new)	*notification_new;
	__typeof__(notify_notification_update)	*notification_update;
	__typeof__(notify_notification_set_app_name) *notification_set_app_name;
	__typeof__(notify_notification_set_urgency) *notification_set_urgency;
	__typeof__(notify_notification_show)	*notification_show;
	/* glib, gobject, gio */
	__typeof__(g_main_context_iteration)	*g_main_context_iteration;
	__typeof__(g_bus_get_sync)		*g_bus_get_sync;
	__typeof__(g_object_unref)		*g_object_unref;
	__typeof__(g_clear_error)		*g_clear_error;
	__typeof__(g_free)			*g_free;
	__typeof__(g_utf8_make_valid)		*g_utf8_make_valid;
	__typeof__(g_markup_escape_text)	*g_markup_escape_text;
};

/*
 * Load libnotify (once; thread-safe).  0 with *out the table, or -ELIBACC
 * with one sentence in err naming the library and dlerror()'s reason, and
 * *out NULL.  Blocks on the disk the first time: desktop.c calls it from
 * its worker on the thread pool, doctor from the CLI.
 */
int	lazynotify_load(const struct lazynotify **out, char *err, size_t cap);

#endif	/* HAVE_LIBNOTIFY */
#endif
