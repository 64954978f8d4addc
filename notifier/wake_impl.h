/*
 * wake_impl — what wake.c (the rule, the line, the text it is built with)
 * and wake_tally.c (the tally, the limits, the summary lines) share.  Not
 * for use outside notifier/wake*.c.
 */
#ifndef NOTIFIER_WAKE_IMPL_H
#define NOTIFIER_WAKE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* Not wake.h: wake.c includes this, and an include back would be a
 * circle (issue 21).  The tally's footprint is only named here. */
struct wake_tally_fp;

#define TIMES	"\xc3\x97"		/* U+00D7 MULTIPLICATION SIGN */
#define ELLIPSIS "\xe2\x80\xa6"		/* U+2026 */

enum { T_HITCH, T_USERMARK, T_JITTER, T_OTHER, T_NTYPES };
/* "hitch", "usermark", "jitter", "other": T_* in wake lines */
extern const char *const wake_type_names[T_NTYPES];
#define ARROW	" \xe2\x86\x92 "		/* " → " */

/*
 * A bounded string: appends that do not fit are cut at a UTF-8 boundary
 * and the builder stays full.  cap excludes the NUL.
 */
struct sb {
	char	*buf;
	size_t	 cap;
	size_t	 len;
};

const char *wake_str(const char *s);
int	wake_type_index(const char *type);
void	wake_sb_init(struct sb *sb, char *buf, size_t size);
void	wake_sb_put(struct sb *sb, const char *s, size_t n);
void	wake_sb_puts(struct sb *sb, const char *s);
void	wake_sb_printf(struct sb *sb, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	wake_sb_token(struct sb *sb, const char *s);
void	wake_sb_clock(struct sb *sb, int64_t ms, int with_date);
int	wake_same_local_day(int64_t a, int64_t b);
void	wake_json_str_or_null(cJSON *o, const char *name, const char *s);
void	wake_json_time_or_null(cJSON *o, const char *name, int64_t ms);
size_t	wake_list_fit(const struct wake_tally_fp *const *l, size_t n,
	    size_t room);
size_t	wake_list_text(struct sb *sb, const struct wake_tally_fp *const *l,
	    size_t n, size_t k);

#endif
