/*
 * cdp — Chrome DevTools Protocol messages as `--remote-debugging-pipe`
 * carries them: JSON objects, each followed by a NUL byte (the browser
 * reads on its fd 3 and writes on its fd 4).  Pure: bytes in, messages
 * out; the pipes and the calls are browser.c's.
 *
 * What comes from the browser is outside input: a message that is not a
 * JSON object, or is neither a response ({"id": N, "result"|"error"})
 * nor an event ({"method": "…", "params"}), is counted and skipped; one
 * longer than CDP_MESSAGE_MAX is skipped whole (memory stays bounded)
 * and counted.  Nothing ends the stream but its end.
 */
#ifndef BROWSER_CDP_H
#define BROWSER_CDP_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define CDP_MESSAGE_MAX	(32 << 20)

enum cdp_kind { CDP_RESPONSE, CDP_EVENT };

/* One message; its strings and items point into root. */
struct cdp_msg {
	enum cdp_kind	 kind;
	long		 id;		/* a response's */
	const cJSON	*result;	/* a response's result, or NULL */
	const char	*error;		/* a response's error.message, or NULL */
	long		 error_code;
	const char	*method;	/* an event's */
	const cJSON	*params;	/* an event's (NULL when absent) */
	const char	*session;	/* sessionId, or NULL */
	cJSON		*root;
};

/*
 * Classify one message's text p[0..n) (no NUL in it).  0 with *m (free
 * with cJSON_Delete(m->root)), or -EINVAL: not one of the two shapes.
 */
int	cdp_message_parse(const char *p, size_t n, struct cdp_msg *m);

typedef void (*cdp_msg_fn)(void *arg, const struct cdp_msg *m);

struct cdp_reader {
	char		*buf;		/* a message being gathered */
	size_t		 len, cap;
	int		 discarding;	/* inside one over CDP_MESSAGE_MAX */
	uint64_t	 messages;	/* handed on */
	uint64_t	 malformed;	/* skipped: not a message */
	uint64_t	 oversize;	/* skipped: too long */
};

void	cdp_reader_init(struct cdp_reader *r);
void	cdp_reader_free(struct cdp_reader *r);

/*
 * Feed bytes as they come, cut anywhere: fn is called for each whole
 * message, in order (m->root is freed after fn returns).  0, or -ENOMEM
 * (what was gathered is dropped and counted as malformed).
 */
int	cdp_reader_feed(struct cdp_reader *r, const char *p, size_t n,
	    cdp_msg_fn fn, void *arg);

/*
 * A call as the pipe wants it: {"id":id,"method":…,"params":…,
 * "sessionId":…} and the NUL, in *out (free it), *len counting the NUL.
 * params may be NULL ({} is sent); it is not consumed.  0 or -ENOMEM.
 */
int	cdp_call_text(long id, const char *method, const cJSON *params,
	    const char *session, char **out, size_t *len);

#endif
