/*
 * cdp — the pipe's message framing and shapes (cdp.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "browser/cdp.h"

int
cdp_message_parse(const char *p, size_t n, struct cdp_msg *m)
{
	const cJSON	*id, *method, *err, *s;
	cJSON		*root;

	memset(m, 0, sizeof(*m));
	if ((root = cJSON_ParseWithLength(p, n)) == NULL)
		return -EINVAL;
	if (!cJSON_IsObject(root))
		goto bad;
	id = cJSON_GetObjectItemCaseSensitive(root, "id");
	method = cJSON_GetObjectItemCaseSensitive(root, "method");
	s = cJSON_GetObjectItemCaseSensitive(root, "sessionId");
	if (s != NULL && !cJSON_IsString(s))
		goto bad;
	m->session = s ? s->valuestring : NULL;
	if (id != NULL) {
		/* ours are 1, 2, 3 …: anything else answers nothing we sent */
		if (!cJSON_IsNumber(id) || !isfinite(id->valuedouble) ||
		    id->valuedouble < 1 || id->valuedouble > 1e15 ||
		    id->valuedouble != floor(id->valuedouble))
			goto bad;
		m->kind = CDP_RESPONSE;
		m->id = (long)id->valuedouble;
		m->result = cJSON_GetObjectItemCaseSensitive(root, "result");
		err = cJSON_GetObjectItemCaseSensitive(root, "error");
		if (err != NULL) {
			const cJSON *msg = cJSON_GetObjectItemCaseSensitive(err,
			    "message");
			const cJSON *code = cJSON_GetObjectItemCaseSensitive(err,
			    "code");

			if (!cJSON_IsObject(err))
				goto bad;
			m->error = cJSON_IsString(msg) ? msg->valuestring :
			    "an error without a message";
			m->error_code = cJSON_IsNumber(code) &&
			    fabs(code->valuedouble) < 1e9 ?
			    (long)code->valuedouble : 0;
		} else if (!cJSON_IsObject(m->result))
			goto bad;
	} else if (cJSON_IsString(method) && method->valuestring[0] != '\0') {
		m->kind = CDP_EVENT;
		m->method = method->valuestring;
		m->params = cJSON_GetObjectItemCaseSensitive(root, "params");
		if (m->params != NULL && !cJSON_IsObject(m->params))
			goto bad;
	} else
		goto bad;
	m->root = root;
	return 0;
bad:
	cJSON_Delete(root);
	memset(m, 0, sizeof(*m));
	return -EINVAL;
}

void
cdp_reader_init(struct cdp_reader *r)
{
	memset(r, 0, sizeof(*r));
}

void
cdp_reader_free(struct cdp_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

static void
deliver(struct cdp_reader *r, const char *p, size_t n, cdp_msg_fn fn,
    void *arg)
{
	struct cdp_msg	m;

	if (cdp_message_parse(p, n, &m) != 0) {
		r->malformed++;
		return;
	}
	r->messages++;
	fn(arg, &m);
	cJSON_Delete(m.root);
}

int
cdp_reader_feed(struct cdp_reader *r, const char *p, size_t n, cdp_msg_fn fn,
    void *arg)
{
	const char	*end = p + n, *nul;

	while (p < end) {
		nul = memchr(p, '\0', (size_t)(end - p));
		size_t	take = (size_t)((nul ? nul : end) - p);

		if (r->discarding) {
			if (nul != NULL)
				r->discarding = 0;
		} else if (r->len + take > CDP_MESSAGE_MAX) {
			r->oversize++;
			r->len = 0;
			r->discarding = nul == NULL;
		} else if (nul != NULL && r->len == 0) {
			/* whole in this piece: no copy */
			deliver(r, p, take, fn, arg);
		} else {
			if (r->len + take > r->cap) {
				size_t	cap = r->cap ? r->cap : 4096;
				char	*b;

				while (cap < r->len + take)
					cap *= 2;
				if (cap > CDP_MESSAGE_MAX)
					cap = CDP_MESSAGE_MAX;
				if ((b = realloc(r->buf, cap)) == NULL) {
					r->malformed++;
					r->len = 0;
					r->discarding = nul == NULL;
					return -ENOMEM;
				}
				r->buf = b;
				r->cap = cap;
			}
			memcpy(r->buf + r->len, p, take);
			r->len += take;
			if (nul != NULL) {
				deliver(r, r->buf, r->len, fn, arg);
				r->len = 0;
			}
		}
		p += take + (nul != NULL);
	}
	return 0;
}

int
cdp_call_text(long id, const char *method, const cJSON *params,
    const char *session, char **out, size_t *len)
{
	cJSON	*o = cJSON_CreateObject();
	char	*s;

	*out = NULL;
	if (o == NULL)
		return -ENOMEM;
	cJSON_AddNumberToObject(o, "id", (double)id);
	cJSON_AddStringToObject(o, "method", method);
	cJSON_AddItemToObject(o, "params", params ?
	    cJSON_Duplicate(params, 1) : cJSON_CreateObject());
	if (session != NULL)
		cJSON_AddStringToObject(o, "sessionId", session);
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (s == NULL)
		return -ENOMEM;
	/* the NUL that ends the string is the message's end on the pipe */
	*len = strlen(s) + 1;
	*out = s;
	return 0;
}
