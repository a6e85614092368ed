/* prom.h — the Prometheus text exposition format (version 0.0.4) for
 * skiff's counters: what `skiff serve --metrics` and the unikernel's
 * metrics= port answer to GET /metrics.
 *
 * Freestanding and allocation-free, so the hosted server and the unikernel
 * format the same text: the caller owns the buffer, the formatter only
 * appends.  Its input is the one enumeration every layer already has for
 * --stats, `fn(ctx, "name", value)` (http_app_stats, tcp_stats,
 * iface_stats, runner_stats, loop_stats, ...): prom_stat has that shape,
 * so the list of counters is never written twice.
 *
 * Names: a --stats name gets the prefix "skiff_", every character outside
 * [a-zA-Z0-9_] becomes '_' (a leading digit is impossible after the
 * prefix), and a counter ends in "_total": http.resp_200 is
 * skiff_http_resp_200_total.  Two tokens Prometheus' lint reads as unit
 * abbreviations are spelled out: "us" (eth.not_for_us: this host) becomes
 * "self", "ns" inside a name (nd.ns_rx: Neighbor Solicitations) becomes
 * "solicit", and a final "ns" (loop.spin_budget_ns: nanoseconds) becomes
 * "seconds", the value printed in seconds with nine decimals.  The few --stats values that are levels, not
 * counts (open connections, table sizes, the learned spin budget) are
 * gauges and keep their name: prom_stat_is_gauge lists them.
 *
 * Histograms (base/hist.h) become Prometheus histograms: cumulative
 * _bucket{le="2^k-1"} lines for a fixed set of powers of two, then +Inf,
 * _sum and _count.  An sk_hist bucket never straddles a power of two, so
 * each cumulative count is exact: the samples <= 2^k-1 (values are
 * integers: cycles).  The set is fixed so that every scrape has the same
 * series. */
#ifndef HTTP_PROM_H
#define HTTP_PROM_H

#include "../base/hist.h"
#include "../base/sk.h"

/* The Content-Type of the exposition. */
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Histogram bounds: le = 2^k - 1 for k in [PROM_HIST_K_MIN, PROM_HIST_K_MAX]. */
#define PROM_HIST_K_MIN 4
#define PROM_HIST_K_MAX 36

/* Appends into buf[0 .. cap).  Invariant: len <= cap, and len < cap
 * unless truncated (a line that did not fit is dropped whole, and every
 * later one too, so what is there is always whole lines). */
struct prom_out {
	char *buf;
	size_t cap;
	size_t len;
	bool truncated;
};

void prom_init(struct prom_out *o, char *buf, size_t cap);

/* One --stats counter or gauge, with its # HELP and # TYPE lines.  The
 * enumerations' callback shape: pass prom_stat and the struct prom_out. */
void prom_stat(void *ctx, const char *name, uint64_t value);

/* One histogram of integer samples (unit: what the samples count, e.g.
 * "cycles"), named skiff_NAME_UNIT with its # HELP. */
void prom_hist(struct prom_out *o, const char *name, const char *unit, const char *help,
	       const struct sk_hist *h);

/* ---- the metrics page as a handler of the app engine (http/app.h):
 * the sites runtimes' `metrics;` route, hosted and in the unikernel ---- */

struct http_app_req;
/* Every counter stats() gives, rendered at the request into buf (cap
 * bytes), which the answer is sent from: so one page at a time, and a
 * second scrape meanwhile gets 503.  GET and HEAD; other methods 405.
 * The owner sets buf, cap, stats and ctx; busy is the handler's. */
struct prom_page {
	char *buf;
	size_t cap;
	void (*stats)(void *ctx, void (*fn)(void *fctx, const char *name, uint64_t v), void *fctx);
	void *ctx;
	bool busy;
};
/* An http_app_handler_fn; page: the struct prom_page. */
int prom_page_handle(struct http_app_req *r, void *page);

/* ---- GET /metrics: the one route, for every server of it ----
 * (host/admin.c on a kernel socket; the engine's metrics route is
 * prom_page_handle above) */

struct http_req;
/* The answer to the request head in buf[0, len), parsed with the HTTP
 * parser (http/parser.h) into *scratch: 0 while the head is incomplete
 * and buf not full (`full`: no more room: 431); else the status: 200 for
 * GET or HEAD of /metrics (a query is ignored), 404 another path, 405
 * another method, 400/431/... a bad head.  *head: a HEAD (no body). */
int prom_route(struct http_req *scratch, const uint8_t *buf, size_t len, bool full, bool *head);
/* The body of a non-200 answer (a line of text). */
const char *prom_status_body(int status);
/* The response head (Connection: close; Content-Type PROM_CONTENT_TYPE
 * for 200, text/plain otherwise; Allow for 405) into out: its length, 0
 * if cap is too small.  PROM_HEAD_MAX is always enough. */
#define PROM_HEAD_MAX 256
size_t prom_http_head(char *out, size_t cap, int status, size_t body_len);

/* Whether a --stats name is a level (gauge) rather than a count. */
bool prom_stat_is_gauge(const char *name);

/* The exposition name of a --stats name into out (NUL-terminated): its
 * length, or 0 if it does not fit in cap. */
size_t prom_name(char *out, size_t cap, const char *stat, bool counter);

#endif
