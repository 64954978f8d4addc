/*
 * relay — commands carried to the game's open tab (see relay.h).
 */
#include <sys/random.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/log.h"
#include "daemon/relay.h"
#include "ledger/jscan.h"

/* What a page runtime can be asked: sloptimize.bench's long calls. */
static const char *const verbs[] = { "run", "capture", "census",
	"attribute", "repro", NULL };

static const char *const state_names[] = { "sent", "running", "done",
	"failed", "lost" };

void
relay_init(struct relay *r, int (*send)(void *, void *, const char *, size_t),
    void *arg)
{
	memset(r, 0, sizeof(*r));
	r->send = send;
	r->arg = arg;
	r->next_page = 1;
	r->next_job = 1;
}

static void
job_clear(struct relay_job *j)
{
	cJSON_Delete(j->progress);
	cJSON_Delete(j->result);
	memset(j, 0, sizeof(*j));
}

void
relay_free(struct relay *r)
{
	size_t	i;

	for (i = 0; i < RELAY_PAGES; i++)
		cJSON_Delete(r->pages[i].info);
	for (i = 0; i < RELAY_JOBS; i++)
		job_clear(&r->jobs[i]);
	memset(r->pages, 0, sizeof(r->pages));
}

static struct relay_page *
page_of(struct relay *r, const void *conn)
{
	size_t	i;

	for (i = 0; i < RELAY_PAGES; i++)
		if (r->pages[i].conn != NULL && r->pages[i].conn == conn)
			return &r->pages[i];
	return NULL;
}

static struct relay_page *
page_by_id(struct relay *r, unsigned id)
{
	size_t	i;

	for (i = 0; i < RELAY_PAGES; i++)
		if (r->pages[i].conn != NULL && r->pages[i].id == id)
			return &r->pages[i];
	return NULL;
}

static struct relay_job *
job_by_id(struct relay *r, uint64_t id)
{
	size_t	i;

	for (i = 0; id != 0 && i < RELAY_JOBS; i++)
		if (r->jobs[i].id == id)
			return &r->jobs[i];
	return NULL;
}

/* The command named "<id>-<key>", or NULL. */
static struct relay_job *
job_by_name(struct relay *r, const char *name)
{
	struct relay_job	*j;
	unsigned long long	 n;
	char			*end;

	if (name == NULL || *name < '1' || *name > '9')
		return NULL;
	errno = 0;
	n = strtoull(name, &end, 10);
	if (*end != '-' || errno != 0 || (j = job_by_id(r, n)) == NULL ||
	    strcmp(end + 1, j->key) != 0)
		return NULL;
	return j;
}

static int
finished(const struct relay_job *j)
{
	return j->state == RELAY_DONE || j->state == RELAY_FAILED ||
	    j->state == RELAY_LOST;
}

static void
job_finish(struct relay *r, struct relay_job *j, enum relay_state st,
    uint64_t now_ms)
{
	struct relay_page	*p = page_by_id(r, j->page);

	if (p != NULL && p->busy == j->id)
		p->busy = 0;
	j->state = st;
	j->done_ms = now_ms;
	if (st == RELAY_LOST)
		r->lost++;
	else
		r->answers++;
}

/* Forget what nobody will fetch: finished commands past RELAY_KEEP_MS,
 * unfinished ones nobody asked about for RELAY_IDLE_MS. */
static void
sweep(struct relay *r, uint64_t now_ms)
{
	struct relay_job	*j;
	struct relay_page	*p;
	size_t			 i;

	for (i = 0; i < RELAY_JOBS; i++) {
		j = &r->jobs[i];
		if (j->id == 0)
			continue;
		if (finished(j) ? now_ms - j->done_ms < RELAY_KEEP_MS :
		    now_ms - j->asked_ms < RELAY_IDLE_MS)
			continue;
		if (!finished(j) && (p = page_by_id(r, j->page)) != NULL &&
		    p->busy == j->id)
			p->busy = 0;
		log_info("relay: command %" PRIu64 " (%s) dropped: %s", j->id,
		    j->verb, finished(j) ? "its verb never fetched the answer" :
		    "its verb stopped asking");
		r->dropped++;
		job_clear(j);
	}
}

/* --- what pages say ------------------------------------------------------ */

static enum relay_msg
bad(struct relay *r, const char *why)
{
	r->bad++;
	log_debug("relay: a message ignored: %s", why);
	return RELAY_MSG_BAD;
}

/* What a page says, fit for one log line. */
static const char *
printable(const char *s, char *out, size_t cap)
{
	size_t	i;

	for (i = 0; s[i] != '\0' && i + 1 < cap; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	out[i] = '\0';
	return out;
}

static enum relay_msg
on_page(struct relay *r, void *conn, cJSON *m, size_t len, uint64_t now_ms)
{
	char			 shown[160];
	struct relay_page	*p = page_of(r, conn);
	const cJSON		*vis = cJSON_GetObjectItemCaseSensitive(m,
				    "visible");
	size_t			 i;

	if (len > RELAY_PAGE_MAX)
		return bad(r, "a page message past its bound");
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(m, "url")))
		return bad(r, "a page message without its url");
	if (p == NULL) {
		for (i = 0; i < RELAY_PAGES && p == NULL; i++)
			if (r->pages[i].conn == NULL)
				p = &r->pages[i];
		if (p == NULL) {
			r->refused++;
			log_warnx("relay: %d game pages are connected already; "
			    "another is not taken", RELAY_PAGES);
			return RELAY_MSG_BAD;
		}
		p->conn = conn;
		p->id = r->next_page++;
		p->at_ms = now_ms;
		p->busy = 0;
		log_info("relay: game page %u connected (%s)", p->id,
		    printable(cJSON_GetObjectItemCaseSensitive(m,
		    "url")->valuestring, shown, sizeof(shown)));
	}
	cJSON_DeleteItemFromObjectCaseSensitive(m, "type");
	cJSON_Delete(p->info);
	p->info = cJSON_Duplicate(m, 1);
	p->visible = !cJSON_IsFalse(vis);
	return RELAY_MSG_PAGE;
}

/*
 * Progress or an answer for the command conn runs: `id` its number;
 * progress an object (or NULL); for an answer `ok`, the page's error
 * text and `result` (consumed: kept for the verb, or freed).
 */
static enum relay_msg
work(struct relay *r, void *conn, double id, int answer, cJSON *progress,
    int ok, const char *err, cJSON *result, uint64_t now_ms)
{
	struct relay_page	*p = page_of(r, conn);
	struct relay_job	*j;
	enum relay_msg		 rc = RELAY_MSG_ANSWER;

	if (p == NULL)
		rc = bad(r, "progress or an answer from no registered page");
	else if (!(id >= 1 && id < 9007199254740992.0))	/* 2^53 */
		rc = bad(r, "progress or an answer without its command's id");
	else if ((j = job_by_id(r, (uint64_t)id)) == NULL ||
	    j->page != p->id || finished(j)) {
		/* a cancelled or dropped command's: nobody wants what it
		   says, and its answer frees the page */
		if (p->busy != (uint64_t)id)
			rc = bad(r, "progress or an answer for no command it "
			    "runs");
		else if (!answer)
			rc = RELAY_MSG_PROGRESS;
		else
			p->busy = 0;
	} else if (!answer) {
		j->heard_ms = now_ms;
		if (cJSON_IsObject(progress)) {
			cJSON_Delete(j->progress);
			j->progress = progress;
			progress = NULL;
		}
		if (j->state == RELAY_SENT)
			j->state = RELAY_RUNNING;
		rc = RELAY_MSG_PROGRESS;
	} else if (ok) {
		j->heard_ms = now_ms;
		j->result = result != NULL ? result : cJSON_CreateNull();
		result = NULL;
		job_finish(r, j, RELAY_DONE, now_ms);
	} else {
		j->heard_ms = now_ms;
		snprintf(j->error, sizeof(j->error), "%s", err != NULL &&
		    *err ? err : "the page failed without saying why");
		job_finish(r, j, RELAY_FAILED, now_ms);
	}
	cJSON_Delete(progress);
	cJSON_Delete(result);
	return rc;
}

static enum relay_msg
on_work(struct relay *r, void *conn, cJSON *m, int answer, uint64_t now_ms)
{
	const cJSON	*id = cJSON_GetObjectItemCaseSensitive(m, "id");

	return work(r, conn, cJSON_IsNumber(id) ? id->valuedouble : 0, answer,
	    answer ? NULL : cJSON_DetachItemFromObjectCaseSensitive(m,
	    "progress"), cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m,
	    "ok")), cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m,
	    "error")), answer ? cJSON_DetachItemFromObjectCaseSensitive(m,
	    "result") : NULL, now_ms);
}

/*
 * A large answer (a frame as PNG is megabytes) is not made into a tree on
 * the loop: the project's scanner checks the whole message (strict JSON,
 * at well over a GB/s) and finds its members, and the result is kept as
 * the bytes it came in, handed on as they are (cJSON's raw item).  What
 * the scanner refuses (its depth bound, an escape it is strict about) is
 * read the ordinary way instead: RELAY_MSG_BAD + 1 says so.
 */
#define RAW_NOT_TAKEN	((enum relay_msg)(RELAY_MSG_BAD + 1))

static enum relay_msg
answer_raw(struct relay *r, void *conn, const char *msg, size_t len,
    uint64_t now_ms)
{
	struct jscan_result	 jr;
	struct jspan		 m, res;
	char			*text, err[sizeof(((struct relay_job *)0)->error)];
	double			 id = 0;
	cJSON			*result = NULL;

	while (len > 0 && (*msg == ' ' || *msg == '\t' || *msg == '\n' ||
	    *msg == '\r'))
		msg++, len--;
	while (len > 0 && (msg[len - 1] == ' ' || msg[len - 1] == '\t' ||
	    msg[len - 1] == '\n' || msg[len - 1] == '\r'))
		len--;
	if (len > UINT32_MAX || jscan_object(msg, len, &jr) != 0)
		return RAW_NOT_TAKEN;
	m = (struct jspan){ msg, (uint32_t)len, J_OBJECT, 0 };
	if (!jscan_eq(jscan_get(m, "type"), "answer"))
		return RAW_NOT_TAKEN;
	(void)jscan_num(jscan_get(m, "id"), &id);
	if (jscan_get(m, "ok").kind != J_TRUE) {
		if (jscan_str(jscan_get(m, "error"), err, sizeof(err)) < 0)
			err[0] = '\0';
		return work(r, conn, id, 1, NULL, 0, err, NULL, now_ms);
	}
	res = jscan_get(m, "result");
	if (res.kind != J_NONE) {
		if ((text = malloc((size_t)res.n + 1)) == NULL)
			return RAW_NOT_TAKEN;
		memcpy(text, res.p, res.n);
		text[res.n] = '\0';
		result = cJSON_CreateRaw(text);
		free(text);
		if (result == NULL)
			return RAW_NOT_TAKEN;
	}
	return work(r, conn, id, 1, NULL, 1, NULL, result, now_ms);
}

enum relay_msg
relay_receive(struct relay *r, void *conn, const char *msg, size_t len,
    uint64_t now_ms)
{
	cJSON		*m;
	const char	*type;
	enum relay_msg	 rc;

	sweep(r, now_ms);
	if (len > RELAY_PAGE_MAX &&
	    (rc = answer_raw(r, conn, msg, len, now_ms)) != RAW_NOT_TAKEN)
		return rc;
	if ((m = cJSON_ParseWithLength(msg, len)) == NULL ||
	    !cJSON_IsObject(m)) {
		cJSON_Delete(m);
		return bad(r, "not a JSON object");
	}
	type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m,
	    "type"));
	if (type == NULL)
		rc = bad(r, "no type");
	else if (strcmp(type, "page") == 0)
		rc = on_page(r, conn, m, len, now_ms);
	else if (strcmp(type, "progress") == 0)
		rc = on_work(r, conn, m, 0, now_ms);
	else if (strcmp(type, "answer") == 0)
		rc = on_work(r, conn, m, 1, now_ms);
	else
		rc = bad(r, "a type the relay does not know");
	cJSON_Delete(m);
	return rc;
}

void
relay_too_big(struct relay *r, void *conn, uint64_t now_ms)
{
	struct relay_page	*p = page_of(r, conn);
	struct relay_job	*j;

	r->bad++;
	if (p == NULL || (j = job_by_id(r, p->busy)) == NULL)
		return;
	snprintf(j->error, sizeof(j->error), "the page's answer was larger "
	    "than the relay takes (%u MiB)", RELAY_MSG_MAX >> 20);
	job_finish(r, j, RELAY_FAILED, now_ms);
}

void
relay_gone(struct relay *r, void *conn, uint64_t now_ms)
{
	struct relay_page	*p = page_of(r, conn);
	struct relay_job	*j;

	if (p == NULL)
		return;
	if ((j = job_by_id(r, p->busy)) != NULL && !finished(j)) {
		snprintf(j->error, sizeof(j->error), "the page was closed or "
		    "loaded again before it answered");
		job_finish(r, j, RELAY_LOST, now_ms);
	}
	log_info("relay: game page %u disconnected", p->id);
	cJSON_Delete(p->info);
	memset(p, 0, sizeof(*p));
}

/* --- what verbs ask -------------------------------------------------------- */

static const char *
page_url(const struct relay_page *p)
{
	const char	*u = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(p->info, "url"));

	return u != NULL ? u : "";
}

static cJSON *
page_json(const struct relay_page *p, uint64_t now_ms)
{
	cJSON	*o = p->info ? cJSON_Duplicate(p->info, 1) :
		    cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	/* the daemon's words, whatever the page said */
	cJSON_DeleteItemFromObjectCaseSensitive(o, "id");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "connectedMs");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "busy");
	cJSON_AddNumberToObject(o, "id", p->id);
	cJSON_AddNumberToObject(o, "connectedMs", (double)(now_ms - p->at_ms));
	if (p->busy != 0)
		cJSON_AddNumberToObject(o, "busy", (double)p->busy);
	return o;
}

/* The page a command goes to: the one named, else the newest visible
 * one, else the newest (which the caller then refuses as hidden). */
static struct relay_page *
pick(struct relay *r, const cJSON *want, unsigned *pages)
{
	struct relay_page	*best = NULL, *p;
	size_t			 i;
	int			 named = cJSON_IsNumber(want);
	/* compared as a double: a number no page id can be (negative,
	 * fractional, past UINT_MAX) names no page, where converting it
	 * to unsigned would be undefined */
	double			 w = named ? want->valuedouble : 0;

	*pages = 0;
	for (i = 0; i < RELAY_PAGES; i++) {
		p = &r->pages[i];
		if (p->conn == NULL)
			continue;
		(*pages)++;
		if (named) {
			if ((double)p->id == w)
				best = p;
			continue;
		}
		if (best == NULL || (p->visible && !best->visible) ||
		    (p->visible == best->visible && p->id > best->id))
			best = p;
	}
	return best;
}

static unsigned
refuse(const char **code, char *why, size_t cap, unsigned status,
    const char *c, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static unsigned
refuse(const char **code, char *why, size_t cap, unsigned status,
    const char *c, const char *fmt, ...)
{
	va_list	ap;

	*code = c;
	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
	return status;
}

static unsigned
cancel(struct relay *r, const cJSON *id, cJSON **out, const char **code,
    char *why, size_t cap)
{
	struct relay_job	*j;
	struct relay_page	*p;
	char			 msg[96];
	int			 n;

	if ((j = job_by_name(r, cJSON_GetStringValue(id))) == NULL)
		return refuse(code, why, cap, 404, "not_found", "no such "
		    "command");
	if (!finished(j) && (p = page_by_id(r, j->page)) != NULL) {
		/* the page stays busy until it answers: a bench under way
		   cannot be stopped half-way, and a second must not start */
		n = snprintf(msg, sizeof(msg), "{\"type\":\"cancel\",\"id\":%"
		    PRIu64 "}", j->id);
		(void)r->send(r->arg, p->conn, msg, (size_t)n);
	}
	job_clear(j);
	*out = cJSON_CreateObject();
	cJSON_AddNumberToObject(*out, "v", 1);
	cJSON_AddBoolToObject(*out, "cancelled", 1);
	return 200;
}

unsigned
relay_post(struct relay *r, const char *body, size_t len, uint64_t now_ms,
    cJSON **out, const char **code, char *why, size_t cap)
{
	cJSON			*b, *cmd = NULL, *pg;
	const cJSON		*verb, *opts;
	struct relay_page	*p;
	struct relay_job	*j = NULL;
	char			*text, name[40];
	unsigned char		 key[8];
	unsigned		 status, pages;
	size_t			 i;

	*out = NULL;
	sweep(r, now_ms);
	if ((b = cJSON_ParseWithLength(body ? body : "", len)) == NULL ||
	    !cJSON_IsObject(b)) {
		cJSON_Delete(b);
		return refuse(code, why, cap, 400, "invalid_json", "the body is "
		    "not a JSON object");
	}
	if (cJSON_GetObjectItemCaseSensitive(b, "cancel") != NULL) {
		status = cancel(r, cJSON_GetObjectItemCaseSensitive(b,
		    "cancel"), out, code, why, cap);
		cJSON_Delete(b);
		return status;
	}
	verb = cJSON_GetObjectItemCaseSensitive(b, "verb");
	opts = cJSON_GetObjectItemCaseSensitive(b, "options");
	for (i = 0; cJSON_IsString(verb) && verbs[i] != NULL; i++)
		if (strcmp(verbs[i], verb->valuestring) == 0)
			break;
	if (!cJSON_IsString(verb) || verbs[i] == NULL) {
		cJSON_Delete(b);
		return refuse(code, why, cap, 400, "invalid_command", "verb is "
		    "one of run, capture, census, attribute, repro");
	}
	if (opts != NULL && !cJSON_IsObject(opts)) {
		cJSON_Delete(b);
		return refuse(code, why, cap, 400, "invalid_command", "options "
		    "is an object");
	}
	p = pick(r, cJSON_GetObjectItemCaseSensitive(b, "page"), &pages);
	if (p == NULL) {
		cJSON_Delete(b);
		return pages == 0 ? refuse(code, why, cap, 404, "no_page", "no "
		    "game page is connected to the daemon: open the game (its "
		    "dev server with the sloptimize plugin), or pass --launch") :
		    refuse(code, why, cap, 404, "no_page", "no game page has "
		    "that id");
	}
	if (!p->visible) {
		cJSON_Delete(b);
		return refuse(code, why, cap, 409, "page_hidden", "the game's "
		    "tab (%s) is hidden, and a browser draws no frames for a "
		    "hidden tab: bring it to the front, or pass --launch",
		    page_url(p));
	}
	if (p->busy != 0) {
		cJSON_Delete(b);
		return refuse(code, why, cap, 409, "page_busy", "the game's tab "
		    "(%s) is still running command %" PRIu64 "; wait for it, "
		    "or pass --launch", page_url(p), p->busy);
	}
	for (i = 0; i < RELAY_JOBS && j == NULL; i++)
		if (r->jobs[i].id == 0)
			j = &r->jobs[i];
	if (j == NULL) {
		r->refused++;
		cJSON_Delete(b);
		return refuse(code, why, cap, 503, "busy", "%d commands wait "
		    "to be fetched; retry", RELAY_JOBS);
	}
	if (getrandom(key, sizeof(key), GRND_NONBLOCK) != (ssize_t)sizeof(key)) {
		cJSON_Delete(b);
		return refuse(code, why, cap, 503, "busy", "no random bytes for "
		    "the command's name yet; retry");
	}
	j->id = r->next_job++;
	for (i = 0; i < sizeof(key); i++)
		snprintf(j->key + 2 * i, 3, "%02x", key[i]);
	j->state = RELAY_SENT;
	j->page = p->id;
	snprintf(j->verb, sizeof(j->verb), "%s", verb->valuestring);
	snprintf(j->url, sizeof(j->url), "%s", page_url(p));
	j->at_ms = j->heard_ms = j->asked_ms = now_ms;

	cmd = cJSON_CreateObject();
	cJSON_AddStringToObject(cmd, "type", "command");
	cJSON_AddNumberToObject(cmd, "id", (double)j->id);
	cJSON_AddStringToObject(cmd, "verb", j->verb);
	cJSON_AddItemToObject(cmd, "options", opts != NULL ?
	    cJSON_Duplicate(opts, 1) : cJSON_CreateObject());
	text = cJSON_PrintUnformatted(cmd);
	cJSON_Delete(cmd);
	cJSON_Delete(b);
	if (text == NULL || r->send(r->arg, p->conn, text, strlen(text)) != 0) {
		free(text);
		job_clear(j);
		return refuse(code, why, cap, 503, "busy", "the command could "
		    "not be queued to the page; retry");
	}
	free(text);
	p->busy = j->id;
	r->commands++;
	*out = cJSON_CreateObject();
	cJSON_AddNumberToObject(*out, "v", 1);
	snprintf(name, sizeof(name), "%" PRIu64 "-%s", j->id, j->key);
	cJSON_AddStringToObject(*out, "id", name);
	if ((pg = page_json(p, now_ms)) != NULL)
		cJSON_AddItemToObject(*out, "page", pg);
	cJSON_AddNumberToObject(*out, "pages", pages);
	return 202;
}

unsigned
relay_get(struct relay *r, const char *id, uint64_t now_ms, cJSON **out)
{
	struct relay_job	*j;
	cJSON			*o;

	*out = NULL;
	sweep(r, now_ms);
	if ((j = job_by_name(r, id)) == NULL)
		return 404;
	j->asked_ms = now_ms;
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "v", 1);
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddStringToObject(o, "verb", j->verb);
	cJSON_AddStringToObject(o, "state", state_names[j->state]);
	cJSON_AddNumberToObject(o, "page", j->page);
	cJSON_AddStringToObject(o, "url", j->url);
	cJSON_AddNumberToObject(o, "ageMs", (double)(now_ms - j->at_ms));
	/* how long since the page last said anything of this command: a
	   page whose main thread hangs stops saying it */
	cJSON_AddNumberToObject(o, "quietMs", (double)(now_ms - j->heard_ms));
	if (j->progress != NULL)
		cJSON_AddItemToObject(o, "progress", cJSON_Duplicate(j->progress,
		    1));
	if (j->state == RELAY_DONE) {
		cJSON_AddItemToObject(o, "result", j->result);
		j->result = NULL;
	} else if (j->state == RELAY_FAILED || j->state == RELAY_LOST)
		cJSON_AddStringToObject(o, "error", j->error);
	if (finished(j))
		job_clear(j);
	*out = o;
	return 200;
}

cJSON *
relay_pages_json(const struct relay *r, uint64_t now_ms)
{
	cJSON		*o = cJSON_CreateObject(), *a, *pg;
	const struct relay_page *order[RELAY_PAGES];
	size_t		 i, k, n = 0;

	cJSON_AddNumberToObject(o, "v", 1);
	a = cJSON_AddArrayToObject(o, "pages");
	for (i = 0; i < RELAY_PAGES; i++) {
		if (r->pages[i].conn == NULL)
			continue;
		/* newest first: insertion by id, RELAY_PAGES is small */
		for (k = n; k > 0 && order[k - 1]->id < r->pages[i].id; k--)
			order[k] = order[k - 1];
		order[k] = &r->pages[i];
		n++;
	}
	for (i = 0; i < n; i++)
		if ((pg = page_json(order[i], now_ms)) != NULL)
			cJSON_AddItemToArray(a, pg);
	return o;
}

void
relay_status_json(const struct relay *r, cJSON *o)
{
	cJSON	*s = cJSON_AddObjectToObject(o, "relay");
	size_t	 i, pages = 0, jobs = 0;

	for (i = 0; i < RELAY_PAGES; i++)
		pages += r->pages[i].conn != NULL;
	for (i = 0; i < RELAY_JOBS; i++)
		jobs += r->jobs[i].id != 0;
	cJSON_AddNumberToObject(s, "pages", (double)pages);
	cJSON_AddNumberToObject(s, "commandsKept", (double)jobs);
	cJSON_AddNumberToObject(s, "commands", (double)r->commands);
	cJSON_AddNumberToObject(s, "answers", (double)r->answers);
	cJSON_AddNumberToObject(s, "lost", (double)r->lost);
	cJSON_AddNumberToObject(s, "dropped", (double)r->dropped);
	cJSON_AddNumberToObject(s, "refused", (double)r->refused);
	cJSON_AddNumberToObject(s, "badMessages", (double)r->bad);
}
