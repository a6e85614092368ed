/* serve_files.c — the files behind `skiff serve --root DIR`.
 *
 * The tree is found by the walk `skiff vm --root` packs from
 * (host/site_tree.h: regular files only, no symbolic links followed, no
 * dotfiles), so both forms serve the same set.  Files are MAPPED, not read
 * into the heap: a file of FC_SMALL bytes or more is mmap'ed read-only and
 * its descriptor closed at once, so a tree larger than RAM can be served,
 * memory is the page cache's to manage, and the open-file count stays at
 * the walk's (one per directory level), whatever the tree's size.  Smaller
 * files are copied into one arena per tree: a mapping costs a VMA and a
 * page each (vm.max_map_count is 65530 by default), and those bytes are
 * few.  Serving a file is then a hash lookup and a slice pointing at its
 * bytes: no open, stat or read per request, and the server's writev sends
 * head and body together.
 *
 * sendfile (--stack linux, file_cache_keep_fds): there a mapped file also
 * KEEPS its descriptor (http_file.fd), so the kernel can send the body
 * from the page cache with sendfile(2) instead of copying it out of the
 * mapping.  Descriptors are a process-wide budget (every worker's cache
 * and every tree not yet unmapped draw from it), set by the caller well
 * below the open-files limit that connections need: past it a file is
 * mapped only, as before, and its bodies go by writev.  A kept descriptor
 * is closed with its tree's mapping (struct fc_tree), when no output can
 * name it any more.  Files in the arena have none (their bytes are few,
 * and go behind the head in the same writev).  skiff's own stack never
 * asks for descriptors.
 *
 * Nothing outside DIR can be served, by construction: the table holds only
 * what the walk found, each file is opened component by component with
 * O_NOFOLLOW (site_open), and the server looks paths up only after
 * percent-decoding them and refusing "." and ".." segments (http/target.c).
 *
 * Reloading (SIGHUP; file_cache_reload): a whole new tree is built beside
 * the current one and replaces it for every lookup from then on; a tree
 * that fails to build leaves the current one in place.  The old tree is
 * RETIRED, not freed: responses already queued may still point into its
 * mappings (struct fc_tree says when each part is given back).
 *
 * A file truncated in place while mapped (`cp` over it does that) leaves
 * pages past its new end that raise SIGBUS when read.  The kernel's own
 * copy (writev on --stack linux) just fails with EFAULT, sendfile(2) stops
 * short at the new end (loop.h: -ECONNABORTED), and the server closes that
 * connection; skiff's stack copies in user space, so the
 * handler below (fc_sigbus) puts a page of zeros over the missing one if
 * the address is inside one of our mappings: the response in flight is
 * completed with zeros at its promised length instead of the process
 * dying, and files.truncated_pages counts it.  Any other SIGBUS is a bug
 * and still kills the process.  SIGHUP (or rename-into-place deploys)
 * gives clients the new bytes.
 *
 * What the files handler's semantics need (http/file.h) comes with each
 * tree: a file's mtime (Last-Modified, the derived ETag) and its type
 * (http/mime.c); an entry per directory (is_dir: "/dir" is a 301, "/dir/"
 * without an index.html a 403); "x.gz"/"x.br" beside "x" linked as x's
 * precompressed siblings (pointers within the same tree, so they retire
 * with it). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../http/file_answer.h"
#include "../http/mime.h"
#include "serve_files.h"
#include "../archive/site_archive.h"
#include "site_tree.h"

#define FC_SMALL 16384u  /* below this a file is copied, from it on mapped */
#define FC_MAX_PATH (SAR_MAX_NAME + 16)

struct fc_entry {
	char *path; /* "/a/b.html", owned (taken from the walk's list) */
	size_t plen;
	uint64_t hash;
	struct http_file file;
	void *map;     /* the file's mapping, or NULL (empty, or in the arena) */
	size_t maplen;
	/* file.fd > 0: the file's descriptor, kept for sendfile (one of the
	 * budget's), closed with the mapping (tree_unmap). */
};

/* One generation of the tree: what one walk found, mapped.  Lifetime:
 *   CURRENT  cache->cur: every lookup answers from it.
 *   RETIRED  replaced by a reload; on cache->retired.  Connections may
 *            still hold slices of its bytes (an output batch not yet
 *            written) or a pointer to one of its struct http_file (an
 *            answer deferred until a request body has been read).
 *   UNMAPPED once the server has no unsent output and no unprocessed
 *            input anywhere, and the loop holds no body by reference
 *            (loop_refs_held; file_cache_quiesce with no_output), no
 *            slice can point into it (nor name its kept descriptors, which
 *            a sendfile slice reads): the mappings, the kept descriptors
 *            (file.fd) and the arena go, and
 *            each descriptor is pointed at an empty body, so a deferred
 *            answer that still reads one stays inside valid memory.
 *   FREED    once the server has no connection at all (no_conns): the
 *            descriptors go too.
 * So the bytes of a retired tree live until the responses that use them
 * are written, and its few bytes of descriptors until the connections
 * that might hold one are gone. */
struct fc_tree {
	uint64_t gen;           /* 1 for the first load, +1 per reload */
	struct fc_entry *e;
	size_t n;
	size_t ndirs;           /* of the n entries, directories (tree_dirs) */
	uint64_t bytes;         /* the files' sizes */
	uint64_t mapped;        /* bytes of them mapped (the rest in small) */
	size_t nmaps;
	size_t nfds;            /* descriptors kept for sendfile */
	uint8_t *small;         /* the arena of files below FC_SMALL */
	char *vals;             /* the entries' validators (http_file_prepare),
				 * one allocation; kept until FREED: a deferred
				 * answer of an UNMAPPED tree still sends them */
	uint32_t *table;        /* open addressing: index + 1, 0 = empty */
	size_t tmask;
	bool unmapped;
	struct fc_tree *next;   /* on cache->retired */
};

struct file_cache {
	char *dir;
	struct fc_tree *cur;
	struct fc_tree *retired; /* newest first */
	uint64_t gen;
	char key[FC_MAX_PATH];
	volatile uint64_t sigbus_pages; /* pages the SIGBUS handler patched */
};

/* The cache whose mappings the SIGBUS handler may patch: the faulting
 * thread's own (serve --workers: one cache per worker, each reloaded only
 * by its own thread).  SIGBUS from a read of a mapping is delivered to the
 * thread that read, in the middle of its own copy, never during its own
 * reload or quiesce: so a thread-local pointer needs no lock. */
static _Thread_local struct file_cache *sigbus_fc;

/* Descriptors every cache of the process may still keep for sendfile
 * (file_cache_keep_fds); 0: none is kept.  Workers load and unmap their
 * trees on their own threads: atomic. */
static long fc_fds_left;
/* At most this many in one tree: a reload must find room beside the tree
 * it replaces, and each worker's tree beside the others'. */
static size_t fc_fds_per_tree;

void file_cache_keep_fds(size_t total, size_t per_tree)
{
	__atomic_store_n(&fc_fds_left, (long)(total > LONG_MAX / 2 ? LONG_MAX / 2 : total),
			 __ATOMIC_RELAXED);
	fc_fds_per_tree = per_tree;
}

/* Take one descriptor from the budget: true if there was one. */
static bool fds_take(void)
{
	long n = __atomic_load_n(&fc_fds_left, __ATOMIC_RELAXED);
	while (n > 0)
		if (__atomic_compare_exchange_n(&fc_fds_left, &n, n - 1, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return true;
	return false;
}
static uintptr_t fc_pagesize; /* set before the handler is installed */

static bool tree_has(const struct fc_tree *t, uintptr_t a)
{
	for (size_t i = 0; t && !t->unmapped && i < t->n; i++) {
		uintptr_t m = (uintptr_t)t->e[i].map;
		if (m && a >= m && a - m < t->e[i].maplen)
			return true;
	}
	return false;
}

static void fc_sigbus(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	uintptr_t a = (uintptr_t)si->si_addr;
	bool ours = si->si_code == BUS_ADRERR && sigbus_fc && tree_has(sigbus_fc->cur, a);
	for (const struct fc_tree *t = sigbus_fc ? sigbus_fc->retired : NULL; !ours && t; t = t->next)
		ours = tree_has(t, a);
	if (ours) {
		uintptr_t page = a & ~(fc_pagesize - 1);
		void *z = mmap((void *)page, fc_pagesize, PROT_READ,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (z != MAP_FAILED) {
			sigbus_fc->sigbus_pages++;
			return; /* the faulting read runs again, on zeros */
		}
	}
	signal(sig, SIG_DFL); /* not ours: die of it as before */
}

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return h;
}

static void tree_unmap(struct fc_tree *t)
{
	for (size_t i = 0; i < t->n; i++) {
		struct fc_entry *e = &t->e[i];
		if (e->map)
			munmap(e->map, e->maplen);
		if (e->file.fd > 0) {
			close(e->file.fd);
			__atomic_add_fetch(&fc_fds_left, 1, __ATOMIC_RELAXED);
		}
		e->file.fd = 0;
		e->map = NULL;
		e->file.data = (const uint8_t *)"";
		e->file.len = 0;
	}
	free(t->small);
	t->small = NULL;
	t->nfds = 0;
	t->unmapped = true;
}

static void tree_free(struct fc_tree *t)
{
	if (!t)
		return;
	tree_unmap(t);
	for (size_t i = 0; i < t->n; i++)
		free(t->e[i].path);
	free(t->e);
	free(t->table);
	free(t->vals);
	free(t);
}

static int read_at(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* Map (or copy into the arena at *small_at) the file of e. */
static int load_one(const struct site_list *l, struct fc_tree *t, struct fc_entry *e,
		    size_t *small_at, size_t small_cap, char *err, size_t errlen)
{
	int fd = site_open(l, e->path);
	struct stat st;
	/* Mapped or in the arena, the bytes stay until the tree is UNMAPPED,
	 * which waits for the loop to hold no reference (serve.c). */
	e->file.pinned = true;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		/* Vanished or changed type since the walk: not served. */
		if (fd >= 0)
			close(fd);
		e->file.len = 0;
		e->file.data = NULL;
		return 1;
	}
	size_t len = (size_t)st.st_size;
	int rc = 0;
	if (len == 0) {
		e->file.data = (const uint8_t *)"";
	} else if (len >= FC_SMALL || *small_at + len > small_cap) {
		/* (A small file that grew since the walk, past the arena's
		 * room, is mapped too.) */
		void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			snprintf(err, errlen, "cannot map %s (%zu bytes): %s%s", e->path, len,
				 strerror(errno),
				 errno == ENOMEM ? " (too many mappings? see vm.max_map_count)" : "");
			rc = -1;
		} else {
			e->map = m;
			e->maplen = len;
			e->file.data = m;
			t->mapped += len;
			t->nmaps++;
			/* Kept for sendfile while the budget lasts.  Blocking
			 * again (site_open opened it O_NONBLOCK, for the type
			 * check): sendfile must wait for a page the cache lacks
			 * as a read of the mapping would, never say EAGAIN,
			 * which would look like a full socket. */
			if (fd > 0 && t->nfds < fc_fds_per_tree && fds_take()) {
				if (fcntl(fd, F_SETFL, 0) == 0) {
					e->file.fd = fd;
					t->nfds++;
					fd = -1;
				} else {
					__atomic_add_fetch(&fc_fds_left, 1, __ATOMIC_RELAXED);
				}
			}
		}
	} else if (read_at(fd, t->small + *small_at, len) < 0) {
		snprintf(err, errlen, "cannot read %s: %s", e->path, strerror(errno));
		rc = -1;
	} else {
		e->file.data = t->small + *small_at;
		*small_at += len;
	}
	if (fd >= 0)
		close(fd);
	e->file.len = len;
	e->file.mtime = st.st_mtime > 0 ? (int64_t)st.st_mtime : 0;
	t->bytes += len;
	return rc;
}

static const struct fc_entry *find(const struct fc_tree *t, const char *path, size_t len);

static void table_put(struct fc_tree *t, size_t i)
{
	size_t j = t->e[i].hash & t->tmask;
	while (t->table[j])
		j = (j + 1) & t->tmask;
	t->table[j] = (uint32_t)i + 1;
}

/* An is_dir entry for every directory a file is in (the root excepted:
 * the server knows it is one).  The entries array has room (tree_load). */
static int tree_dirs(struct fc_tree *t)
{
	size_t nfiles = t->n;
	for (size_t i = 0; i < nfiles; i++) {
		const char *p = t->e[i].path;
		for (size_t k = 1; k < t->e[i].plen; k++) {
			if (p[k] != '/' || find(t, p, k))
				continue;
			struct fc_entry *d = &t->e[t->n];
			if (!(d->path = malloc(k + 1)))
				return -1;
			memcpy(d->path, p, k);
			d->path[k] = 0;
			d->plen = k;
			d->hash = fnv1a(d->path, k);
			d->file = (struct http_file){.ctype = HTTP_MIME_DEFAULT, .is_dir = true};
			table_put(t, t->n++);
			t->ndirs++;
		}
	}
	return 0;
}

/* "x.gz" / "x.br" beside a file "x": x's precompressed siblings (they
 * stay servable under their own names too). */
static void tree_siblings(struct fc_tree *t)
{
	for (size_t i = 0; i < t->n; i++) {
		struct fc_entry *s = &t->e[i];
		bool gz = s->plen > 3 && !memcmp(s->path + s->plen - 3, ".gz", 3);
		bool br = s->plen > 3 && !memcmp(s->path + s->plen - 3, ".br", 3);
		if (s->file.is_dir || (!gz && !br))
			continue;
		struct fc_entry *b = (struct fc_entry *)find(t, s->path, s->plen - 3);
		if (!b || b->file.is_dir)
			continue;
		if (gz)
			b->file.gz = &s->file;
		else
			b->file.br = &s->file;
	}
}

static struct fc_tree *tree_load(const char *dir, uint64_t gen, char *err, size_t errlen)
{
	struct site_list l;
	if (site_list_load(&l, dir, err, errlen) < 0)
		return NULL;
	struct fc_tree *t = calloc(1, sizeof(*t));
	size_t small_cap = 0;
	for (size_t i = 0; i < l.n; i++)
		if (l.f[i].size < FC_SMALL)
			small_cap += (size_t)l.f[i].size;
	/* Room for the directories too: at most one per '/' of each path
	 * after the first (tree_dirs adds the ones that exist). */
	size_t ndir_max = 0;
	for (size_t i = 0; i < l.n; i++)
		for (size_t k = 1; k < l.f[i].plen; k++)
			ndir_max += l.f[i].path[k] == '/';
	size_t tsize = 16;
	while (tsize < 2 * (l.n + ndir_max))
		tsize *= 2;
	if (!t || !(t->e = calloc(l.n + ndir_max ? l.n + ndir_max : 1, sizeof(*t->e))) ||
	    !(t->small = malloc(small_cap ? small_cap : 1)) ||
	    !(t->table = calloc(tsize, sizeof(*t->table)))) {
		snprintf(err, errlen, "out of memory for %zu files", l.n);
		tree_free(t);
		site_list_free(&l);
		return NULL;
	}
	t->gen = gen;
	t->tmask = tsize - 1;
	size_t small_at = 0;
	int rc = 0;
	for (size_t i = 0; i < l.n && rc == 0; i++) {
		struct fc_entry *e = &t->e[t->n];
		e->path = l.f[i].path;
		e->plen = l.f[i].plen;
		l.f[i].path = NULL; /* the tree owns it now */
		t->n++;
		int r = load_one(&l, t, e, &small_at, small_cap, err, errlen);
		if (r < 0) {
			rc = -1;
		} else if (r > 0) {
			free(e->path); /* gone since the walk */
			t->n--;
		} else {
			e->hash = fnv1a(e->path, e->plen);
			e->file.ctype = http_mime_type(e->path, e->plen);
		}
	}
	site_list_free(&l);
	if (rc < 0) {
		tree_free(t);
		return NULL;
	}
	/* Each file's validators, once per load, in one arena. */
	size_t vlen = 0;
	for (size_t i = 0; i < t->n; i++)
		vlen += http_file_prepare_len(&t->e[i].file);
	if (!(t->vals = malloc(vlen ? vlen : 1))) {
		snprintf(err, errlen, "out of memory for the validators of %zu files", t->n);
		tree_free(t);
		return NULL;
	}
	for (size_t i = 0, at = 0; i < t->n; i++)
		at += http_file_prepare(&t->e[i].file, t->vals + at);
	for (size_t i = 0; i < t->n; i++) {
		size_t j = t->e[i].hash & t->tmask;
		while (t->table[j])
			j = (j + 1) & t->tmask;
		t->table[j] = (uint32_t)i + 1;
	}
	if (tree_dirs(t) < 0) {
		snprintf(err, errlen, "out of memory for the directories");
		tree_free(t);
		return NULL;
	}
	tree_siblings(t);
	return t;
}

static const struct fc_entry *find(const struct fc_tree *t, const char *path, size_t len)
{
	uint64_t h = fnv1a(path, len);
	for (size_t i = h & t->tmask;; i = (i + 1) & t->tmask) {
		uint32_t k = t->table[i];
		if (!k)
			return NULL;
		const struct fc_entry *e = &t->e[k - 1];
		if (e->hash == h && e->plen == len && !memcmp(e->path, path, len))
			return e;
	}
}

/* The files handler asks a directory's index.html itself
 * (http/file_answer.c); the
 * trailing '/' case stays for other callers. */
const struct http_file *file_cache_lookup(void *ctx, const char *path, size_t len)
{
	struct file_cache *fc = ctx;
	if (len && path[len - 1] == '/') {
		/* A directory: its index.html. */
		if (len + 10 > sizeof(fc->key))
			return NULL;
		memcpy(fc->key, path, len);
		memcpy(fc->key + len, "index.html", 10);
		path = fc->key;
		len += 10;
	}
	const struct fc_entry *e = find(fc->cur, path, len);
	return e ? &e->file : NULL;
}

struct file_cache *file_cache_load(const char *dir, char *err, size_t errlen)
{
	struct file_cache *fc = calloc(1, sizeof(*fc));
	if (!fc || !(fc->dir = strdup(dir))) {
		free(fc);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	fc->cur = tree_load(dir, ++fc->gen, err, errlen);
	if (!fc->cur) {
		free(fc->dir);
		free(fc);
		return NULL;
	}
	fc_pagesize = (uintptr_t)sysconf(_SC_PAGESIZE);
	struct sigaction sa = {.sa_sigaction = fc_sigbus, .sa_flags = SA_SIGINFO};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	sigbus_fc = fc;
	return fc;
}

void file_cache_bind_thread(struct file_cache *fc)
{
	sigbus_fc = fc;
}

int file_cache_reload(struct file_cache *fc, char *err, size_t errlen)
{
	struct fc_tree *t = tree_load(fc->dir, fc->gen + 1, err, errlen);
	if (!t)
		return -1;
	fc->gen++;
	fc->cur->next = fc->retired;
	fc->retired = fc->cur;
	fc->cur = t;
	return 0;
}

void file_cache_quiesce(struct file_cache *fc, bool no_output, bool no_conns)
{
	if (!fc->retired || !no_output)
		return;
	if (no_conns) {
		while (fc->retired) {
			struct fc_tree *t = fc->retired;
			fc->retired = t->next;
			tree_free(t);
		}
		return;
	}
	for (struct fc_tree *t = fc->retired; t; t = t->next)
		if (!t->unmapped)
			tree_unmap(t);
}

void file_cache_info(const struct file_cache *fc, struct file_cache_info *fi)
{
	*fi = (struct file_cache_info){
		.gen = fc->gen, .files = fc->cur->n - fc->cur->ndirs, .bytes = fc->cur->bytes,
		.mapped = fc->cur->mapped, .maps = fc->cur->nmaps, .fds = fc->cur->nfds,
		.truncated_pages = fc->sigbus_pages,
	};
	for (const struct fc_tree *t = fc->retired; t; t = t->next)
		t->unmapped ? fi->retired_unmapped++ : fi->retired_mapped++;
}

void file_cache_free(struct file_cache *fc)
{
	if (!fc)
		return;
	if (sigbus_fc == fc)
		sigbus_fc = NULL;
	file_cache_quiesce(fc, true, true);
	tree_free(fc->cur);
	free(fc->dir);
	free(fc);
}
