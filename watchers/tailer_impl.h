/*
 * tailer_impl — what tailer.c, tailer_watch.c and tailer_save.c share.
 * Not for use outside watchers/tailer*.c.
 *
 * It names struct tailer and the rest without including tailer.h: tailer.c
 * includes this, and an include back would be a circle (issue 21).  Each
 * file that reads the structs includes tailer.h itself.
 */
#ifndef WATCHERS_TAILER_IMPL_H
#define WATCHERS_TAILER_IMPL_H

#include <uv.h>

#include "watchers/fstrust.h"

struct cursor;
struct tailer;
struct tailer_stat;

#define BACKEND_EVENTS	FSTRUST_EVENTS

/* What the read cycle is doing (tailer.op): one operation at a time. */
enum { OP_NONE, OP_PROBE, OP_READ, OP_DECIDE, OP_FEED, OP_HELD };

void	tailer_stat_path(const char *path, struct tailer_stat *ts);
void	tailer_log(const struct tailer *t, int prio, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
void	tailer_snapshot(const struct tailer *t, struct cursor *c);
void	tailer_kick(struct tailer *t);
void	tailer_on_poll_timer(uv_timer_t *h);
void	tailer_backend_poll(struct tailer *t, const char *why, int prio);
void	tailer_dir_watch_set(struct tailer *t, const struct tailer_stat *dir);
void	tailer_file_watch_set(struct tailer *t);
void	tailer_cycle_probe(struct tailer *t);
void	tailer_read_next(struct tailer *t);
void	tailer_save_request(struct tailer *t);
void	tailer_close_maybe_finish(struct tailer *t);

#endif
