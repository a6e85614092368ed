/* replay_main.c — run a fuzz target's corpus once, without libFuzzer.
 *
 *   build/check/fuzz/fuzz_NAME FILE|DIR...
 *
 * Linked with one fuzz/fuzz_NAME.c in place of libFuzzer's main (mk/check.mk
 * builds it with gcc, -DSK_FUZZING and ASan+UBSan): each file named, and each
 * regular file in each directory named, is read whole and given to
 * LLVMFuzzerTestOneInput once, in the order given (a directory's entries in
 * name order, so two runs replay the same sequence).  A crash or a sanitizer
 * report aborts with the file's name printed just before; a clean run prints
 * one line, "NAME: N inputs, B bytes", and exits 0 (no input at all: 1, a
 * replay of nothing proves nothing).  `make check` replays fuzz/seeds/ this
 * way: minutes of clang builds saved, the regressions the seeds hold still
 * caught.  Mutation is `make fuzz`'s job. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional in a target (fuzz_tls.c has one): libFuzzer calls it first. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static unsigned long n_inputs, n_bytes;

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 4096, len = 0;
	uint8_t *buf = malloc(cap);
	for (;;) {
		if (!buf) {
			fprintf(stderr, "replay: %s: out of memory\n", path);
			fclose(f);
			return -1;
		}
		len += fread(buf + len, 1, cap - len, f);
		if (len < cap)
			break;
		cap *= 2;
		uint8_t *nb = realloc(buf, cap);
		if (!nb)
			free(buf);
		buf = nb;
	}
	int err = ferror(f);
	fclose(f);
	if (err) {
		fprintf(stderr, "replay: %s: read error\n", path);
		free(buf);
		return -1;
	}
	/* Named before the call: if the target crashes, the last line on
	 * stderr says which input did it. */
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
	/* An exact-size copy, so ASan sees a read one byte past the input. */
	uint8_t *in = malloc(len ? len : 1);
	if (!in) {
		free(buf);
		return -1;
	}
	memcpy(in, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(in, len);
	free(in);
	n_inputs++;
	n_bytes += len;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **nn = realloc(names, cap * sizeof(*names));
			if (!nn)
				break;
			names = nn;
		}
		size_t len = strlen(e->d_name) + 1;
		if (!(names[n] = malloc(len)))
			break;
		memcpy(names[n++], e->d_name, len);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (rc == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode))
			rc = run_file(path);
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fprintf(argc < 2 ? stderr : stdout,
			"usage: %s FILE|DIR...\n"
			"Gives each file (each regular file of each DIR, in name order) to the\n"
			"fuzz target once; exits non-zero on an unreadable input, and the\n"
			"sanitizers abort on a bug.  fuzz/replay_main.c; make check runs it.\n",
			argv[0]);
		return argc < 2 ? 2 : 0;
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		if ((S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i])) != 0)
			return 1;
	}
	const char *name = strrchr(argv[0], '/');
	if (n_inputs == 0) {
		fprintf(stderr, "replay: no input in %s...: a replay of nothing proves nothing\n", argv[1]);
		return 1;
	}
	printf("%s: %lu inputs, %lu bytes\n", name ? name + 1 : argv[0], n_inputs, n_bytes);
	return 0;
}
