/* target.h — from a request-target to the path a file is looked up by.
 * Pure and freestanding: bytes in, bytes out, no state.
 *
 *   origin-form    "/a%20b.txt?q=1"            -> "/a b.txt"
 *   absolute-form  "http://host/a%20b.txt?q"   -> "/a b.txt"
 *                  "http://host", "http://host?q" -> "/"
 *
 * The query is cut off first, then every %XX is decoded, then the decoded
 * path is checked: the check runs on what a file system would see, so
 * "%2e%2e" is "..", and "%2f" is a '/' that separates segments.
 */
#ifndef HTTP_TARGET_H
#define HTTP_TARGET_H

#include "../base/sk.h"

/* Decode target t[0, n) into out[0, cap) as a NUL-terminated path and set
 * *len (without the NUL).  Returns 0, or the status to answer:
 *   400  no path (neither '/' nor "scheme://"), a '%' not followed by two
 *        hex digits, or a %00 (a NUL would cut the path short);
 *   404  a "." or ".." segment: no way up or sideways out of the root,
 *        whatever the encoding (refused, not resolved: the answer says
 *        "not here", never "there");
 *   414  the decoded path and its NUL do not fit in cap bytes.
 * On an error out holds garbage. */
int http_target_path(const uint8_t *t, size_t n, char *out, size_t cap, size_t *len);

#endif
