/* hello.c — the smallest application on http/app.h: GET / answers a
 * greeting, GET /hello/NAME greets NAME.  docs/app.md builds it up. */
#include "http/app.h"

static int hello(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	static const char msg[] = "Hello from a skiff application.\n";
	http_app_header(r, "Content-Type", "text/plain; charset=utf-8");
	/* msg is static: it outlives the request, as http_app_send asks. */
	return http_app_send(r, 200, msg, sizeof(msg) - 1);
}

/* GET /hello/NAME: the part after the prefix is the route's parameter.
 * The answer is streamed from a copy inside the request's own output
 * buffer (http_app_write copies), so nothing needs to outlive the call. */
static int hello_name(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	size_t n;
	const char *name = http_app_rest(r, &n);
	if (n == 0 || n > 200)
		return http_app_send(r, 400, "a name of 1..200 bytes, please\n", 31);
	http_app_header(r, "Content-Type", "text/plain; charset=utf-8");
	int rc = http_app_stream(r, 200, 7 + n + 2, NULL, NULL);
	if (rc < 0)
		return rc;
	/* 209 bytes always fit an empty output buffer (out_size >= 2 KiB). */
	http_app_write(r, "Hello, ", 7);
	http_app_write(r, name, n);
	http_app_write(r, "!\n", 2);
	return http_app_end(r);
}

static const struct http_app_route routes[] = {
	{HTTP_GET, "/", false, hello, NULL},
	{HTTP_GET, "/hello/", true, hello_name, NULL},
};

const struct http_app_def skiff_app = {.routes = routes, .nroutes = SK_ARRAY_LEN(routes),
				      .name = "hello", .workers = true};
