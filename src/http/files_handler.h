/* files_handler.h — a site's static files as a handler on the application
 * engine (app.h): what `skiff serve --root` answers, on the engine every
 * other handler runs on.  A router (http/sites.c) or an application's
 * route table gives it a path; the answer is decided by file_answer.c,
 * and sent by reference where the loop can (http_app_send_file).
 *
 *   static struct http_files site = {.lookup = my_lookup, .lookup_ctx = tree};
 *   {HTTP_APP_ANY, "/", true, http_files_handle, &site}
 *
 * What it answers: GET and HEAD (anything else 405 with Allow: GET,
 * HEAD) of "/" + http_app_rest(r), the part of the path after the route's
 * prefix (a rest that already starts with '/' is taken as it is):
 * 200, 206 (one range, or multipart/byteranges), 304, 412, 416, 404, 403
 * (a directory without index.html), 301 to the target as sent plus '/'
 * for a directory named without one, 414 for a Location too long; each
 * an ordinary answer that keeps the connection (files_handler_test.c
 * asserts every one).
 * Freestanding: base/ and http/ only.
 */
#ifndef HTTP_FILES_HANDLER_H
#define HTTP_FILES_HANDLER_H

#include "app.h"
#include "file.h"

struct http_files {
	http_lookup_fn lookup; /* required; see file.h */
	void *lookup_ctx;
	/* NULL, or the value of a Cache-Control line on every 200, 206 and
	 * 304 (the caller checks it, e.g. with http_cache_control_ok). */
	const char *cache_control;
};

#define HTTP_CACHE_CONTROL_MAX 256u

/* Is s a Cache-Control value the handler may send (1..HTTP_CACHE_CONTROL_MAX
 * bytes of VCHAR and SP, not starting or ending with SP)?  For the options
 * module, so a bad value stops the command line, not the server. */
bool http_cache_control_ok(const char *s);

/* An http_app_handler_fn; ctx is a struct http_files, read only (one may
 * serve every worker). */
int http_files_handle(struct http_app_req *r, void *ctx);

#endif
