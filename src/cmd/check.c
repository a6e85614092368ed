/* check.c — `skiff check FILE`: validate a configuration file, as `nginx -t`.
 *
 * The parser (conf/sites_conf.h) checks the syntax and the meaning; here
 * the checks that need the system: each `files` folder is a directory,
 * each `tls CERT KEY` pair loads into an OpenSSL server context (then
 * freed), each log's folder exists.  Relative paths in the file are
 * relative to the file's folder, as the parser joins them.
 *
 * Exit 0 with "skiff: FILE: configuration ok (N sites, M listeners)" on
 * stdout; 1 with "FILE:LINE:COL: message" on stderr; 2 on a usage error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../host/cli.h"
#include "../conf/sites_conf.h"
#include "../tls/tls_engine.h"

/* Files larger than this are refused (a configuration is a few KiB). */
#define CHECK_FILE_MAX (16u << 20)

static void usage(FILE *f)
{
	fprintf(f, "usage: skiff check [--help] FILE\n\n"
		   "Validate a configuration file (docs/config.md), as nginx -t: the syntax and\n"
		   "the meaning (every site has a listener and a route, tls listeners have\n"
		   "certificates, a name once per listener, one handler per route), then that\n"
		   "each 'files' folder is a directory, each 'tls CERT KEY' pair loads and each\n"
		   "log's folder exists.  Relative paths are relative to FILE's folder.\n\n"
		   "Exit 0 and \"skiff: FILE: configuration ok (N sites, M listeners)\" on stdout;\n"
		   "1 and \"FILE:LINE:COL: message\" on stderr; 2 on a usage error.\n\n"
		   "  -h, --help  this text\n");
}

/* Reads the whole file into a malloc'd buffer; NULL with errno. */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		errno = 0;
		size_t r = fread(buf + n, 1, cap - n, f);
		int e = errno;
		n += r;
		if (n < cap) {
			if (ferror(f)) {
				free(buf);
				buf = NULL;
				errno = e ? e : EIO; /* EISDIR for a folder */
			}
			break;
		}
		if (cap >= CHECK_FILE_MAX) {
			free(buf);
			buf = NULL;
			errno = EFBIG;
			break;
		}
		char *nb = realloc(buf, cap * 2);
		if (!nb)
			free(buf);
		buf = nb;
		cap *= 2;
	}
	fclose(f);
	*len = n;
	return buf;
}

static int report(const char *file, struct sconf_pos pos, const char *msg)
{
	fprintf(stderr, "%s:%u:%u: %s\n", file, pos.line, pos.col, msg);
	return 1;
}

/* The folder part of path ("." when it has none). */
static void dir_of(const char *path, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		snprintf(out, cap, ".");
		return;
	}
	size_t n = (size_t)(slash - path);
	if (n == 0)
		n = 1; /* "/x.conf": the root */
	snprintf(out, cap, "%.*s", (int)n, path);
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A log file's folder exists (the file itself is created when opened). */
static int check_log(const char *file, struct sconf_pos pos, const char *what, const char *path)
{
	char d[SCONF_PATH_MAX + 2], msg[3 * SCONF_PATH_MAX];
	dir_of(path, d, sizeof(d));
	if (is_dir(d))
		return 0;
	snprintf(msg, sizeof(msg), "%s %s: the folder %s does not exist", what, path, d);
	return report(file, pos, msg);
}

int cmd_check(int argc, char **argv)
{
	const char *file = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--") && i + 1 < argc && !file) {
			file = argv[++i];
			continue;
		}
		if (a[0] == '-' && a[1])
			cli_usage_error("check", "unknown option '%s'", a);
		if (file)
			cli_usage_error("check", "one FILE only ('%s' and '%s')", file, a);
		file = a;
	}
	if (!file)
		cli_usage_error("check", "give the configuration FILE to check");

	size_t len;
	char *text = read_file(file, &len);
	if (!text) {
		fprintf(stderr, "skiff check: %s: %s\n", file, strerror(errno));
		return 1;
	}
	char dir[SCONF_PATH_MAX + 2];
	dir_of(file, dir, sizeof(dir));
	/* "x.conf" in the working folder: paths as written. */
	const char *join = strcmp(dir, ".") ? dir : "";
	size_t asize = sites_conf_arena_bound(len);
	void *arena = malloc(asize);
	struct sconf c;
	struct sconf_err err;
	if (!arena) {
		fprintf(stderr, "skiff check: %s: out of memory (%zu bytes)\n", file, asize);
		free(text);
		return 1;
	}
	int rc = 0;
	if (sites_conf_parse(text, len, join, arena, asize, &c, &err) < 0) {
		rc = report(file, err.pos, err.msg);
		goto out;
	}
	char msg[SCONF_PATH_MAX + 256];
	for (unsigned i = 0; i < c.nsites && !rc; i++) {
		const struct sconf_site *s = &c.sites[i];
		for (unsigned k = 0; k < s->nroutes && !rc; k++) {
			const struct sconf_route *r = &s->routes[k];
			if (r->kind != SCONF_FILES || is_dir(r->root))
				continue;
			struct stat st;
			if (stat(r->root, &st) == 0)
				snprintf(msg, sizeof(msg), "route '%s' of site '%s': files %s: not a folder",
					 r->path, s->names[0], r->root);
			else
				snprintf(msg, sizeof(msg), "route '%s' of site '%s': files %s: %s", r->path,
					 s->names[0], r->root, strerror(errno));
			rc = report(file, r->pos, msg);
		}
		if (s->cert && !rc) {
			char e[256];
			struct tls_ctx *t = tls_openssl_server(s->cert, s->key, NULL, e, sizeof(e));
			if (!t) {
				snprintf(msg, sizeof(msg), "site '%s': tls %s %s: %s", s->names[0], s->cert,
					 s->key, e);
				rc = report(file, s->pos, msg);
			} else {
				tls_openssl_free(t);
			}
		}
	}
	if (!rc && c.access_log)
		rc = check_log(file, c.access_log_pos, "access_log", c.access_log);
	if (!rc && c.error_log)
		rc = check_log(file, c.error_log_pos, "error_log", c.error_log);
	if (!rc)
		printf("skiff: %s: configuration ok (%u site%s, %u listener%s)\n", file, c.nsites,
		       c.nsites == 1 ? "" : "s", c.nlisten, c.nlisten == 1 ? "" : "s");
out:
	free(arena);
	free(text);
	return rc;
}
