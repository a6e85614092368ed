/* links.c — a URL shortener, a JSON API on http/app.h (docs/app.md).
 *   POST /links  {"url": "https://..."}: 201 {"id": "1f", "short": "/l/1f"}; 400, 413, 507
 *   GET  /l/ID   302 to the URL (Location); 404
 *   GET  /stats  {"links": N, "hits": N, "top": [{"id": "1f", "hits": N}, ...]}
 * Every error answer is JSON, the engine's own too.  make app APP="links.c store.c" */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/app.h"
#include "store.h"

/* A JSON answer, formatted on the stack: http_app_write copies it. */
static int reply(struct http_app_req *r, int status, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -1; /* the engine answers 500 */
	http_app_header(r, "Content-Type", "application/json");
	http_app_stream(r, status, (uint64_t)n, NULL, NULL);
	http_app_write(r, buf, (size_t)n); /* an empty output buffer takes 1 KiB */
	return http_app_end(r);
}

static char *skip_ws(char *p) { return p + strspn(p, " \t\r\n"); }

/* A JSON string after its opening quote at p, unescaped in place (no
 * \uXXXX: not in a URL of ours): its start; *end past its closing quote. */
static char *json_string(char *p, char **end, size_t *len)
{
	static const char esc[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
	char *s = p, *o = p;
	for (; *p != '"'; p++) {
		const char *e = NULL;
		if ((unsigned char)*p < 0x20 || /* the body's end, or a control */
		    (*p == '\\' && (!*++p || !(e = strchr(esc, *p)) || (e - esc) % 2)))
			return NULL;
		*o++ = e ? e[1] : *p;
	}
	*end = p + 1;
	*len = (size_t)(o - s);
	return s;
}

/* {"url": "...", ...}, every member a string: the url, or NULL. */
static char *json_url(char *p, size_t *len)
{
	char *url = NULL, *k, *v;
	size_t kl, vl;
	if (*(p = skip_ws(p)) != '{')
		return NULL;
	for (p = skip_ws(p + 1); *p != '}';) {
		if (*p != '"' || !(k = json_string(p + 1, &p, &kl)) || *(p = skip_ws(p)) != ':' ||
		    *(p = skip_ws(p + 1)) != '"' || !(v = json_string(p + 1, &p, &vl)))
			return NULL;
		if (kl == 3 && !memcmp(k, "url", 3))
			url = v, *len = vl;
		if (*(p = skip_ws(p)) == ',' && *(p = skip_ws(p + 1)) != '"')
			return NULL; /* "," then "}" */
		else if (*p != '"' && *p != '}')
			return NULL;
	}
	return *skip_ws(p + 1) == 0 ? url : NULL;
}

static void new_link(struct http_app_req *r, void *ctx, char *body, size_t len)
{
	(void)ctx, (void)len;
	size_t n = 0;
	char *url = json_url(body, &n);
	bool ok = url && ((n > 7 && !memcmp(url, "http://", 7)) || (n > 8 && !memcmp(url, "https://", 8)));
	for (size_t i = 0; ok && i < n; i++)
		ok = url[i] > ' ' && url[i] != 0x7f; /* no spaces, no controls */
	unsigned long id = ok ? store_add(url, n) : 0;
	if (!ok)
		reply(r, 400, "{\"error\": \"want {\\\"url\\\": \\\"http(s)://...\\\"}\"}\n");
	else if (!id)
		reply(r, 507, "{\"error\": \"the store is full\"}\n");
	else { /* a Location that does not fit makes the answer a 500: answer all the same */
		http_app_headerf(r, "Location", "/l/%lx", id);
		reply(r, 201, "{\"id\": \"%lx\", \"short\": \"/l/%lx\"}\n", id, id);
	}
}

static int post_links(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	return http_app_body_read(r, 0, new_link, NULL); /* skiff_app.body_size */
}

static int follow(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	char *end;
	const char *id = http_app_rest(r, NULL);
	unsigned long n = strtoul(id, &end, 16);
	const char *url = *id && *end == 0 ? store_follow(n) : NULL;
	if (!url)
		return reply(r, 404, "{\"error\": \"no such link\"}\n");
	/* A URL longer than the header area makes this the engine's 500
	 * (http.header_overflow), never a 302 without its Location. */
	http_app_headerf(r, "Location", "%s", url);
	return http_app_send(r, 302, "", 0);
}

static int stats(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	struct store_stats st;
	char top[256] = "";
	store_stats(&st);
	for (unsigned i = 0, n = 0; i < st.ntop; i++)
		n += (unsigned)snprintf(top + n, sizeof(top) - n, "%s{\"id\": \"%lx\", \"hits\": %lu}",
					i ? ", " : "", st.top_id[i], st.top_hits[i]);
	return reply(r, 200, "{\"links\": %lu, \"hits\": %lu, \"top\": [%s]}\n", st.links, st.hits,
		     top);
}

/* The engine's own answers (404, 405, 413, 500, 503, ...) as JSON too. */
static long json_error(void *ctx, int status, char *buf, size_t cap, const char **type)
{
	(void)ctx;
	*type = "application/json";
	return snprintf(buf, cap, "{\"error\": %d}\n", status);
}

static const struct http_app_route routes[] = {
	{HTTP_POST, "/links", false, post_links, NULL},
	{HTTP_GET, "/l/", true, follow, NULL},
	{HTTP_GET, "/stats", false, stats, NULL},
};

const struct http_app_def skiff_app = {
	.routes = routes, .nroutes = sizeof(routes) / sizeof(routes[0]), .name = "links",
	.body_size = 4096, /* a POST's JSON at most: 413 over it */
	.body_slots = 32,  /* bodies being read at once: 503 beyond */
	.error_answer = json_error,
};
