/* hpack_peer.c — skiff's HPACK (src/h2/hpack.h) on stdin and stdout, so
 * that another implementation can talk to it (tests/hpack_interop.py drives
 * it against python3-hpack).  One connection's worth of state per run:
 * blocks share one dynamic table, in order.
 *
 *   hpack_peer decode [--limit N] [--max-fields N] [--max-list N]
 *       stdin: one header block per line, in hex.
 *       stdout per block: "ok N" (or "elist N": over the list bounds, N
 *       fields kept) then N lines "NAME VALUE FLAG", NAME and VALUE in hex
 *       ("." when empty), FLAG "n" for a never-indexed field, else "-";
 *       or "err CODE NAME" (CODE: hpack.h's error, NAME its words).
 *   hpack_peer encode [--limit N] [--peer-limit N] [--huffman auto|never|always]
 *       stdin: fields "NAME VALUE FLAG" (hex, "." when empty; FLAG "n"
 *       never indexed, "x" not indexed, "-" the encoder's choice), each
 *       block ended by a line "end"; a line "peer-limit N" between blocks
 *       is the peer's new SETTINGS_HEADER_TABLE_SIZE.
 *       stdout per block: the block in hex, one line.
 * Exit status: 0, or 2 on a usage or input-format error (named on stderr).
 * Build: make build/test/hpack_peer (mk/h2.mk). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2/hpack.h"

#define LIMIT_MAX (1u << 16)
#define LINE_MAX_LEN (1u << 20)

static void usage(FILE *f)
{
	fputs("usage: hpack_peer decode [--limit N] [--max-fields N] [--max-list N]\n"
	      "       hpack_peer encode [--limit N] [--peer-limit N] [--huffman auto|never|always]\n"
	      "skiff's HPACK (RFC 7541) on stdin/stdout, for interop tests against\n"
	      "other implementations (tests/hpack_interop.py).\n"
	      "decode: one block per stdin line in hex; per block \"ok N\" or \"elist N\"\n"
	      "  then N lines \"NAME VALUE FLAG\" (hex, '.' when empty; FLAG n: never\n"
	      "  indexed, else -), or \"err CODE NAME\".\n"
	      "encode: lines \"NAME VALUE FLAG\" (FLAG n: never indexed, x: not indexed,\n"
	      "  -: any), \"end\" after each block, \"peer-limit N\" between blocks; per\n"
	      "  block one line of hex.\n"
	      "--limit N       our table limit (default 4096, at most 65536)\n"
	      "--max-fields N  decode: the list's field bound (default 1024)\n"
	      "--max-list N    decode: the list's RFC 9113 6.5.2 size bound (default 1 MiB)\n"
	      "--peer-limit N  encode: the peer's SETTINGS_HEADER_TABLE_SIZE at start\n"
	      "--huffman MODE  encode: auto (when shorter, default), never, always\n",
	      f);
}

static void die(const char *what)
{
	fprintf(stderr, "hpack_peer: %s\n", what);
	exit(2);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Hex (or "." for empty) of length n into out; returns the byte count. */
static size_t unhex(const char *s, size_t n, uint8_t *out, size_t cap)
{
	if (n == 1 && s[0] == '.')
		return 0;
	if (n % 2 || n / 2 > cap)
		die("bad hex field");
	for (size_t i = 0; i < n; i += 2) {
		int hi = hexval(s[i]), lo = hexval(s[i + 1]);
		if (hi < 0 || lo < 0)
			die("bad hex digit");
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return n / 2;
}

static void put_hex(const uint8_t *p, size_t n)
{
	if (!n)
		putchar('.');
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
}

static uint32_t num(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || v > 0xffffffffu)
		die("bad number");
	return (uint32_t)v;
}

static char line[LINE_MAX_LEN];

static int run_decode(uint32_t limit, uint32_t max_fields, uint32_t max_list)
{
	static uint8_t bytes[HPACK_TABLE_BYTES(LIMIT_MAX)], tmp[HPACK_DEC_TMP_BYTES(LIMIT_MAX)];
	static struct hpack_entry ents[HPACK_TABLE_ENTRIES(LIMIT_MAX)];
	static uint8_t blk[LINE_MAX_LEN / 2], buf[1u << 20];
	static struct hpack_field fields[1024];
	struct hpack_dec d;
	if (max_fields > SK_ARRAY_LEN(fields))
		die("--max-fields above 1024");
	if (hpack_dec_init(&d, limit, bytes, sizeof(bytes), ents, SK_ARRAY_LEN(ents), tmp, sizeof(tmp)))
		die("cannot set up the decoder");
	struct hpack_list l = { .fields = fields, .max_fields = max_fields, .buf = buf,
				.buf_cap = sizeof(buf), .max_list = max_list };
	while (fgets(line, sizeof(line), stdin)) {
		size_t n = strcspn(line, "\r\n");
		size_t len = n ? unhex(line, n, blk, sizeof(blk)) : 0;
		int rc = hpack_decode(&d, blk, len, &l);
		if (hpack_table_check(&d.t))
			die("table invariant broken");
		if (rc != HPACK_OK && rc != HPACK_ELIST) {
			printf("err %d %s\n", rc, hpack_err_str(rc));
		} else {
			printf("%s %u\n", rc == HPACK_OK ? "ok" : "elist", l.n_fields);
			for (uint32_t i = 0; i < l.n_fields; i++) {
				put_hex(fields[i].name, fields[i].name_len);
				putchar(' ');
				put_hex(fields[i].value, fields[i].value_len);
				printf(" %s\n", fields[i].flags & HPACK_FIELD_NEVER_INDEXED ? "n" : "-");
			}
		}
		fflush(stdout);
	}
	return 0;
}

static int run_encode(uint32_t limit, int64_t peer_limit, uint8_t huff)
{
	static uint8_t bytes[HPACK_TABLE_BYTES(LIMIT_MAX)];
	static struct hpack_entry ents[HPACK_TABLE_ENTRIES(LIMIT_MAX)];
	static uint8_t out[1u << 20], name[LINE_MAX_LEN / 2], value[LINE_MAX_LEN / 2];
	struct hpack_enc e;
	if (hpack_enc_init(&e, limit, bytes, sizeof(bytes), ents, SK_ARRAY_LEN(ents)))
		die("cannot set up the encoder");
	e.huff = huff;
	if (peer_limit >= 0)
		hpack_enc_set_peer_limit(&e, (uint32_t)peer_limit);
	size_t pos = 0;
	bool begun = false;
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\r\n")] = 0;
		if (!strcmp(line, "end")) {
			if (!begun && hpack_enc_begin(&e, out, sizeof(out), &pos))
				die("block too large");
			put_hex(out, pos);
			putchar('\n');
			fflush(stdout);
			pos = 0;
			begun = false;
			continue;
		}
		if (!strncmp(line, "peer-limit ", 11)) {
			if (begun)
				die("peer-limit inside a block");
			hpack_enc_set_peer_limit(&e, num(line + 11));
			continue;
		}
		char *sp1 = strchr(line, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
		if (!sp1 || !sp2 || strlen(sp2 + 1) != 1)
			die("want NAME VALUE FLAG");
		size_t nl = unhex(line, (size_t)(sp1 - line), name, sizeof(name));
		size_t vl = unhex(sp1 + 1, (size_t)(sp2 - sp1 - 1), value, sizeof(value));
		unsigned flags = sp2[1] == 'n' ? HPACK_ENC_NEVER_INDEX : sp2[1] == 'x' ? HPACK_ENC_NO_INDEX : 0;
		if (!begun) {
			if (hpack_enc_begin(&e, out, sizeof(out), &pos))
				die("block too large");
			begun = true;
		}
		if (hpack_enc_field(&e, out, sizeof(out), &pos, name, nl, value, vl, flags))
			die("block too large");
		if (hpack_table_check(&e.t))
			die("table invariant broken");
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *mode = argv[1];
	uint32_t limit = HPACK_DEFAULT_TABLE_SIZE, max_fields = 1024, max_list = 1u << 20;
	int64_t peer_limit = -1;
	uint8_t huff = HPACK_HUFF_AUTO;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if (i + 1 >= argc) {
			usage(stderr);
			return 2;
		}
		const char *v = argv[++i];
		if (!strcmp(argv[i - 1], "--limit"))
			limit = num(v);
		else if (!strcmp(argv[i - 1], "--max-fields"))
			max_fields = num(v);
		else if (!strcmp(argv[i - 1], "--max-list"))
			max_list = num(v);
		else if (!strcmp(argv[i - 1], "--peer-limit"))
			peer_limit = num(v);
		else if (!strcmp(argv[i - 1], "--huffman"))
			huff = !strcmp(v, "never") ? HPACK_HUFF_NEVER : !strcmp(v, "always") ? HPACK_HUFF_ALWAYS
			     : !strcmp(v, "auto") ? HPACK_HUFF_AUTO : (die("--huffman: auto, never or always"), 0);
		else {
			fprintf(stderr, "hpack_peer: unknown option %s\n", argv[i - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (limit > LIMIT_MAX)
		die("--limit above 65536");
	if (!strcmp(mode, "decode"))
		return run_decode(limit, max_fields, max_list);
	if (!strcmp(mode, "encode"))
		return run_encode(limit, peer_limit, huff);
	fprintf(stderr, "hpack_peer: unknown mode %s\n", mode);
	usage(stderr);
	return 2;
}
