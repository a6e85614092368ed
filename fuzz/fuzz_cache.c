/* fuzz_cache.c — the cache engine (http/cache.h) on arbitrary bytes.
 * Input: [n][n bytes of field text][ops...].  The text is read as a
 * Cache-Control value, an Expires date and a Vary list (exact-size copies:
 * ASan catches a read past them), and is also the Cache-Control and Vary of
 * some responses below.  Each op byte then drives a small cache (a few
 * chunks, so eviction is constant): lookups that hold read references,
 * fills begun, headed, fed, ended and aborted in any order, releases,
 * purges, time moving on.  Checks: http_cache_check after every op; a HIT
 * body reads back whole and as it was written (each fill writes bytes
 * derived from its key); a held reference stays readable across
 * eviction.  Build: make build/fuzz/fuzz_cache. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/cache.h"
#include "http/cache_policy.h"
#include "http/date.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t mem[12 * 1024 + 2048];
static const char *const targets[4] = {"/a", "/b", "/c?x", "/d"};

struct fill_slot {
	struct http_cache_entry *f;
	unsigned key;
	bool headed;
	uint64_t written;
};

static void body_check(struct http_cache *c, struct http_cache_entry *e, unsigned key)
{
	struct http_cache_iter it;
	const uint8_t *p;
	size_t n;
	uint64_t total = 0;
	for (bool more = http_cache_body_first(c, e, &it, &p, &n); more;
	     more = http_cache_body_next(c, &it, &p, &n)) {
		for (size_t i = 0; i < n; i++)
			CHECK(p[i] == (uint8_t)('a' + key + (total + i) % 7));
		total += n;
	}
	CHECK(total == http_cache_body_len(e));
	struct http_cache_fiter fi;
	const char *nm, *v;
	unsigned nf = 0;
	for (bool more = http_cache_field_first(c, e, &fi, &nm, &v); more;
	     more = http_cache_field_next(c, &fi, &nm, &v))
		nf++;
	CHECK(nf == http_cache_nfields(e));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t tn = data[0];
	if (tn > size - 1)
		tn = size - 1;
	char *text = malloc(tn ? tn : 1);
	if (!text)
		abort();
	memcpy(text, data + 1, tn);
	const uint8_t *ops = data + 1 + tn;
	size_t nops = size - 1 - tn;

	/* The parsers on the text alone. */
	struct http_cc cc;
	http_cc_init(&cc);
	http_cc_add(&cc, (const uint8_t *)text, tn);
	CHECK(!(cc.flags & HTTP_CC_MAX_AGE) || cc.max_age <= HTTP_CC_DELTA_MAX);
	uint64_t t;
	(void)http_date_parse((const uint8_t *)text, tn, &t);
	struct http_cache_field rf = {"Accept-Encoding", 15, text, tn};
	struct http_cache_req vr = {HTTP_GET, "h", 1, "/", 1, &rf, 1};
	char vbuf[1024];
	int vl = http_cache_vary_value(&vr, "accept-encoding", 15, vbuf, sizeof(vbuf));
	CHECK(vl == -1 || (vl >= 1 && (size_t)vl <= sizeof(vbuf) && vbuf[0] == 'P'));
	struct http_cache_info info;
	http_cache_info_init(&info);
	http_cache_info_add(&info, "Cache-Control", 13, text, tn);
	http_cache_info_add(&info, "Expires", 7, text, tn);
	http_cache_info_add(&info, "Vary", 4, text, tn);
	(void)http_cache_lifetime(&info, 1000);

	/* The engine. */
	struct http_cache c;
	struct http_cache_config cfg;
	http_cache_config_default(&cfg);
	cfg.chunk_size = 1024;
	cfg.max_entry = 4096;
	CHECK(http_cache_init(&c, mem, sizeof(mem), &cfg) == 0);
	struct {
		struct http_cache_entry *e;
		unsigned key;
	} refs[8];
	unsigned nrefs = 0;
	struct fill_slot fills[4];
	unsigned nfills = 0;
	uint64_t now = 1700000000;
	static const uint16_t statuses[] = {200, 304, 404, 206, 500, 301};
	for (size_t k = 0; k < nops; k++) {
		uint8_t b = ops[k], arg = (uint8_t)(b >> 3);
		unsigned key = arg % 4;
		/* Request fields: an encoding variant, maybe no-cache. */
		struct http_cache_field qf[2] = {
			{"Accept-Encoding", 15, (arg & 4) ? "gzip" : "br", (arg & 4) ? 4u : 2u},
			{"Cache-Control", 13, (arg & 16) ? "no-cache" : "max-stale=5",
			 (arg & 16) ? 8u : 11u},
		};
		struct http_cache_req rq = {HTTP_GET, "example.com", 11, targets[key],
					    strlen(targets[key]), qf, (arg & 8) ? 2u : 1u};
		switch (b & 7) {
		case 0: { /* lookup */
			struct http_cache_lookup lk;
			enum http_cache_result r = http_cache_lookup(&c, &rq, now, &lk);
			if (r == HTTP_CACHE_HIT) {
				body_check(&c, lk.entry, key);
				if (nrefs < 8)
					refs[nrefs++].e = lk.entry, refs[nrefs - 1].key = key;
				else
					http_cache_release(&c, lk.entry);
			}
			CHECK((r == HTTP_CACHE_PENDING) == (lk.fill != NULL));
			break;
		}
		case 1: /* begin */
			if (nfills < 4) {
				struct http_cache_entry *f = http_cache_begin(&c, &rq, now);
				if (f)
					fills[nfills++] = (struct fill_slot){f, key, false, 0};
			}
			break;
		case 2: { /* head */
			if (!nfills)
				break;
			struct fill_slot *s = &fills[arg % nfills];
			if (s->headed)
				break;
			rq.target = targets[s->key];
			rq.target_len = strlen(targets[s->key]);
			struct http_cache_field hf[4] = {
				{"Cache-Control", 13, "max-age=30", 10},
				{"ETag", 4, "\"e\"", 3},
				{"Vary", 4, "Accept-Encoding", 15},
				{"X", 1, "y", 1},
			};
			if (arg & 8)
				hf[0] = (struct http_cache_field){"Cache-Control", 13, text, tn};
			if (arg & 16)
				hf[2] = (struct http_cache_field){"Vary", 4, text, tn};
			struct http_cache_resp rs = {statuses[(arg >> 2) % 6], hf, 4};
			struct http_cache_entry *out = NULL;
			enum http_cache_fill_result r = http_cache_head(&c, s->f, &rq, &rs, now, &out);
			if (r == HTTP_CACHE_FILL_OK)
				s->headed = true;
			else {
				if (r == HTTP_CACHE_FILL_REFRESHED) {
					CHECK(out != NULL);
					body_check(&c, out, s->key);
					http_cache_release(&c, out);
				}
				*s = fills[--nfills];
			}
			break;
		}
		case 3: { /* body */
			if (!nfills)
				break;
			struct fill_slot *s = &fills[arg % nfills];
			if (!s->headed)
				break;
			uint8_t piece[700];
			size_t n = (size_t)(arg % 4) * 233 + 1;
			for (size_t i = 0; i < n; i++)
				piece[i] = (uint8_t)('a' + s->key + (s->written + i) % 7);
			if (http_cache_body(&c, s->f, piece, n) == HTTP_CACHE_FILL_OK)
				s->written += n;
			else
				*s = fills[--nfills];
			break;
		}
		case 4: /* end */
			if (nfills) {
				unsigned i = arg % nfills;
				(void)http_cache_end(&c, fills[i].f, now);
				fills[i] = fills[--nfills];
			}
			break;
		case 5: /* abort */
			if (nfills) {
				unsigned i = arg % nfills;
				http_cache_abort(&c, fills[i].f);
				fills[i] = fills[--nfills];
			}
			break;
		case 6: /* release */
			if (nrefs) {
				unsigned i = arg % nrefs;
				body_check(&c, refs[i].e, refs[i].key);
				http_cache_release(&c, refs[i].e);
				refs[i] = refs[--nrefs];
			}
			break;
		case 7:
			if (arg & 1)
				(void)http_cache_purge(&c, "example.com", 11, targets[key],
						       strlen(targets[key]));
			else
				now += arg;
			break;
		}
		CHECK(http_cache_check(&c) == 0);
	}
	for (unsigned i = 0; i < nrefs; i++) {
		body_check(&c, refs[i].e, refs[i].key);
		http_cache_release(&c, refs[i].e);
	}
	for (unsigned i = 0; i < nfills; i++)
		http_cache_abort(&c, fills[i].f);
	CHECK(http_cache_check(&c) == 0);
	/* Everything released and aborted: only stored entries hold chunks. */
	CHECK(c.st.bytes > 0 || c.st.entries == 0);
	free(text);
	return 0;
}
