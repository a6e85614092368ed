/* mime.h — the media type of a file by its name's extension, for the
 * Content-Type of static files.  One table for every source of files (the
 * hosted file cache, the unikernel's archive), pure and freestanding.
 *
 * It covers what a web site serves (nginx's mime.types for web content,
 * and what browsers expect since: .mjs, .webmanifest, .avif, .jxl, .opus,
 * .otf/.ttf, .map, .md, ...).  Text types carry "; charset=utf-8" (a site
 * written today is UTF-8, and a browser guessing otherwise garbles it).
 * Where the registry moved on from nginx 1.22's table, the registry wins:
 * .js is text/javascript (RFC 9239), not application/javascript.
 */
#ifndef HTTP_MIME_H
#define HTTP_MIME_H

#include "../base/sk.h"

#define HTTP_MIME_DEFAULT "application/octet-stream"

/* The type for a file named name[0, n) (a path is fine: only what follows
 * the last '.' after the last '/' counts, case-insensitively).  No
 * extension, a dot file (".htaccess") or an unknown one: HTTP_MIME_DEFAULT.
 * The result is a static string. */
const char *http_mime_type(const char *name, size_t n);

/* For tests: the table is sorted by extension and has no duplicates;
 * returns the number of entries, or -(index of the first bad one) - 1. */
int http_mime_check(void);

#endif
