/* vm.c — `skiff vm`: boot the unikernel (build/skiff-uk.elf) under QEMU.
 *
 * It only assembles a QEMU command line and runs it: the PVH entry takes
 * -kernel directly (no firmware disk, no bootloader), virtio-net is modern
 * only (disable-legacy=on, no option ROM: iPXE would add seconds), the
 * serial console is this terminal, and isa-debug-exit carries the guest's
 * exit code out.  Host forwards of user networking bind 127.0.0.1 only.
 *
 * --machine microvm: QEMU's microvm machine instead of pc, Firecracker's
 * device model (docs/microvm.md): no PCI and no ACPI; virtio-net is a
 * virtio-mmio device, named to the guest on its command line.
 *
 * --root DIR: DIR is packed into a site archive (cmd/site_pack.h) in a
 * temporary file (TMPDIR, else /tmp), given to QEMU as -initrd (for a PVH
 * ELF kernel QEMU loads it at the top of low RAM, page-aligned, and its
 * PVH option ROM lists it as the first module in the start info), and
 * removed when QEMU has exited.  The guest serves the files from it.
 *
 * --config FILE: the file is parsed here with the guest's parser (an error
 * is FILE:LINE:COL: message, exit 1, before QEMU starts) and packed with
 * its `files` folders (a site archive each) and its PEM files into one
 * bundle module (archive/site_bundle.h); each listener's ADDR:PORT on the
 * host is forwarded to the guest's PORT (uk/uk_sites.c serves them;
 * docs/unikernel.md "skiff vm --config").
 *
 * Exit status: the guest's code (QEMU exits with 2*code+1; we undo that).
 * QEMU's own failures also end in status 1, the same as a guest exit 0, so
 * QEMU's stderr passes through a pipe: status 1 with an error line on it
 * (not a "warning:") is a QEMU failure and exits 1.  A guest that resets
 * (triple fault; -no-reboot turns it into a QEMU exit 0) exits 1 too. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../archive/site_bundle.h"
#include "../base/sk.h"
#include "../conf/sites_conf.h"
#include "../host/cli.h"
#include "site_pack.h"
#include "../uk/tls_bundle.h"

static bool module_loaded(const char *name)
{
	char path[128];
	snprintf(path, sizeof(path), "/sys/module/%s", name);
	struct stat st;
	if (stat(path, &st) == 0)
		return true;
	FILE *f = fopen("/proc/modules", "r");
	if (!f)
		return false;
	char line[256];
	size_t len = strlen(name);
	bool found = false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, name, len) && line[len] == ' ';
	fclose(f);
	return found;
}

/* Hardware KVM or nothing: PVM's /dev/kvm emulates an unmodified guest at
 * about 1 us per instruction, far slower than TCG (issue 6). */
static bool kvm_usable(const char **why)
{
	if (access("/dev/kvm", R_OK | W_OK) != 0) {
		*why = "no usable /dev/kvm";
		return false;
	}
	if (module_loaded("kvm_pvm")) {
		*why = "/dev/kvm is PVM (kvm_pvm), slower than TCG";
		return false;
	}
	if (!module_loaded("kvm_intel") && !module_loaded("kvm_amd")) {
		*why = "neither kvm_intel nor kvm_amd is loaded";
		return false;
	}
	*why = "hardware KVM";
	return true;
}

/* The image's default place, relative to this binary so that it holds
 * wherever the tree is unpacked or installed (DESTDIR, any PREFIX):
 * beside it (build/skiff and build/skiff-uk.elf), else where `make install`
 * puts it (PREFIX/bin/skiff and PREFIX/lib/skiff/skiff-uk.elf; lib, not
 * share, because the image is x86-64 code).  The first that is readable,
 * else the first, for the error message. */
static const char *const image_leaves[] = {"skiff-uk.elf", "../lib/skiff/skiff-uk.elf"};
/* --proxy: the reverse proxy's image (uk/uk_proxy.c), in the same places. */
static const char *const proxy_leaves[] = {"skiff-proxy-uk.elf", "../lib/skiff/skiff-proxy-uk.elf"};

static void default_image(char *out, size_t size, bool proxy)
{
	const char *const *leaves = proxy ? proxy_leaves : image_leaves;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash = n > 0 ? memrchr(exe, '/', (size_t)n) : NULL;

	if (slash == NULL) {
		snprintf(out, size, "build/%s", leaves[0]);
		return;
	}
	for (size_t i = 0; i < SK_ARRAY_LEN(image_leaves); i++) {
		char path[PATH_MAX], *real;
		int len = snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - exe), exe,
				   leaves[i]);
		if (len <= 0 || (size_t)len >= sizeof(path) || access(path, R_OK) != 0)
			continue;
		/* The path without "bin/..": it is printed, and QEMU shows it. */
		real = realpath(path, NULL);
		snprintf(out, size, "%s", real ? real : path);
		free(real);
		return;
	}
	snprintf(out, size, "%.*s/%s", (int)(slash - exe), exe, leaves[0]);
}

static volatile sig_atomic_t child_pid;
/* Ctrl-C (SIGINT) stops the guest as its shutdown port does: a
 * datagram "exit 0 stats" to the host side of that port's forward (user
 * networking), so the guest drains, prints its counters and exits 0.  A
 * second signal, or a guest still running VM_STOP_GRACE_S later, stops
 * QEMU.  -1: no such forward (a TAP): the signal goes to QEMU. */
#define VM_STOP_GRACE_S 30
/* The guest's shutdown port when the words name none (UDP; the guest's
 * echo is on 7). */
#define VM_CTL_GUEST_PORT 65533u
static int ctl_fd = -1;
static struct sockaddr_in ctl_addr;
static volatile sig_atomic_t stop_asked;
static struct timespec stop_at;

static void forward_signal(int sig)
{
	if (child_pid <= 0)
		return;
	if (sig == SIGINT && stop_asked) {
		/* The same Ctrl-C may come twice (a terminal signals the whole
		 * foreground group: `timeout` in it forwards its copy): a second
		 * within a second is that one, not the user's second. */
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - stop_at.tv_sec < 1 ||
		    (now.tv_sec - stop_at.tv_sec == 1 && now.tv_nsec < stop_at.tv_nsec))
			return;
	}
	if (sig != SIGINT || ctl_fd < 0 || stop_asked) {
		kill((pid_t)child_pid, sig == SIGINT || sig == SIGALRM ? SIGTERM : sig);
		return;
	}
	stop_asked = 1;
	clock_gettime(CLOCK_MONOTONIC, &stop_at);
	static const char say[] = "\nskiff vm: stopping the guest (drain, counters); again to stop "
				  "QEMU at once\n";
	ssize_t w = write(2, say, sizeof(say) - 1);
	(void)w;
	static const char msg[] = "exit 0 stats";
	sendto(ctl_fd, msg, sizeof(msg) - 1, 0, (const struct sockaddr *)&ctl_addr, sizeof(ctl_addr));
	alarm(VM_STOP_GRACE_S);
}

/* A free UDP port on 127.0.0.1 for the shutdown port's forward: 0 if none. */
static unsigned free_udp_port(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	unsigned port = 0;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &al) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* Run argv with stderr through a pipe (relayed as is); return the wait
 * status and whether QEMU printed an error (a line that is not a warning). */
static int run_qemu(char **argv, bool *qemu_error)
{
	int pfd[2];
	if (pipe(pfd) < 0) {
		perror("skiff vm: pipe");
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("skiff vm: fork");
		return -1;
	}
	if (pid == 0) {
		if (ctl_fd >= 0) {
			/* Ctrl-C is ours to turn into the guest's shutdown: QEMU
			 * in a process group of its own does not get the
			 * terminal's SIGINT, nor its input (the guest reads none
			 * from its console). */
			setpgid(0, 0);
			int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
			if (nul >= 0)
				dup2(nul, 0);
		}
		prctl(PR_SET_PDEATHSIG, SIGTERM); /* never outlive skiff vm */
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		execvp(argv[0], argv);
		fprintf(stderr, "skiff vm: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	child_pid = pid;
	close(pfd[1]);
	struct sigaction sa = {.sa_handler = forward_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);

	FILE *in = fdopen(pfd[0], "r");
	char line[1024];
	*qemu_error = false;
	while (in) {
		if (!fgets(line, sizeof(line), in)) {
			if (ferror(in) && errno == EINTR) {
				clearerr(in);
				continue;
			}
			break;
		}
		if (strstr(line, "etc/sercon-port"))
			continue; /* our own fw_cfg item: QEMU's naming warning is noise */
		fputs(line, stderr);
		if (!strstr(line, "warning:"))
			*qemu_error = true;
	}
	if (in)
		fclose(in);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

/* A PEM file for the guest, whole, into buf (at most TLS_BUNDLE_MAX_FILE);
 * what names it in messages ("--tls-cert", or the file's "F:L:C: tls"). */
static int read_pem(const char *what, const char *path, char *buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "skiff vm: %s %s: %s\n", what, path, strerror(errno));
		return -1;
	}
	size_t n = fread(buf, 1, TLS_BUNDLE_MAX_FILE + 1, f);
	bool bad = ferror(f);
	fclose(f);
	if (bad || n == 0 || n > TLS_BUNDLE_MAX_FILE || !memmem(buf, n, "-----BEGIN ", 11)) {
		fprintf(stderr, "skiff vm: %s %s: not a PEM file of at most %u KiB\n", what, path,
			TLS_BUNDLE_MAX_FILE >> 10);
		return -1;
	}
	*len = n;
	return 0;
}

/* The TLS files and their footer after whatever the module holds. */
static int append_tls(int fd, const char *cert, const char *key)
{
	static char c[TLS_BUNDLE_MAX_FILE + 1], k[TLS_BUNDLE_MAX_FILE + 1];
	size_t cl, kl;
	if (read_pem("--tls-cert", cert, c, &cl) < 0 || read_pem("--tls-key", key, k, &kl) < 0)
		return -1;
	uint8_t foot[TLS_BUNDLE_FOOTER];
	tls_bundle_footer(foot, (uint32_t)cl, (uint32_t)kl);
	if (lseek(fd, 0, SEEK_END) < 0 || write(fd, c, cl) != (ssize_t)cl ||
	    write(fd, k, kl) != (ssize_t)kl || write(fd, foot, sizeof(foot)) != (ssize_t)sizeof(foot)) {
		fprintf(stderr, "skiff vm: writing the TLS files into the module: %s\n", strerror(errno));
		return -1;
	}
	memset(k, 0, sizeof(k));
	return 0;
}

/* ---- --config FILE (archive/site_bundle.h) ---- */

#define CONF_FILE_MAX (1u << 20) /* as `skiff serve --config`: a larger file is refused */

/* The file read and parsed, as the guest will parse it. */
struct vm_conf {
	const char *path;
	char *text;
	size_t len;
	char dir[SCONF_PATH_MAX]; /* what relative paths are joined with */
	void *arena;
	struct sconf c;
};

/* Read and parse the file with the parser the guest runs.  A file that
 * does not parse: "FILE:LINE:COL: message", as `skiff check` prints it. */
static int conf_load(const char *path, struct vm_conf *vc)
{
	vc->path = path;
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "skiff vm: --config %s: %s\n", path, strerror(errno));
		return -1;
	}
	vc->text = malloc(CONF_FILE_MAX + 1);
	size_t n = vc->text ? fread(vc->text, 1, CONF_FILE_MAX + 1, f) : 0;
	bool bad = ferror(f);
	fclose(f);
	if (!vc->text || bad || n > CONF_FILE_MAX) {
		fprintf(stderr, "skiff vm: --config %s: %s\n", path,
			!vc->text ? "out of memory" : bad ? "cannot read" : "larger than 1 MiB");
		return -1;
	}
	vc->len = n;
	const char *slash = strrchr(path, '/');
	if (slash == path)
		snprintf(vc->dir, sizeof(vc->dir), "/");
	else if (slash)
		snprintf(vc->dir, sizeof(vc->dir), "%.*s", (int)(slash - path), path);
	else
		snprintf(vc->dir, sizeof(vc->dir), ".");
	size_t asz = sites_conf_arena_bound(n);
	vc->arena = malloc(asz);
	struct sconf_err e;
	if (!vc->arena) {
		fprintf(stderr, "skiff vm: --config %s: out of memory\n", path);
		return -1;
	}
	if (sites_conf_parse(vc->text, n, vc->dir, vc->arena, asz, &vc->c, &e) < 0) {
		fprintf(stderr, "%s:%u:%u: %s\n", path, e.pos.line, e.pos.col, e.msg);
		return -1;
	}
	return 0;
}

/* User networking: each listener's ADDR:PORT on the host forwarded to
 * the guest's PORT (the guest has one address: the listener's address
 * picks the host side only).  "*:PORT" and "[::]:PORT" bind the host's
 * 127.0.0.1, as -p does; other IPv6 addresses are refused (QEMU's
 * forwards here are IPv4).  Two listeners on one port would be one
 * socket in the guest: refused too (also with TAP). */
static int conf_forwards(const struct vm_conf *vc, bool tap, char *netdev, size_t cap, size_t *n)
{
	const struct sconf *c = &vc->c;
	for (unsigned i = 0; i < c->nlisten; i++) {
		const struct sconf_listen *l = &c->listen[i];
		for (unsigned j = 0; j < i; j++)
			if (c->listen[j].port == l->port) {
				fprintf(stderr, "%s:%u:%u: listen: port %u is another listener's too (line "
					"%u): the guest has one address, so each listener needs its own port\n",
					vc->path, l->pos.line, l->pos.col, l->port, c->listen[j].pos.line);
				return -1;
			}
		if (l->v6 && !l->any) {
			fprintf(stderr, "%s:%u:%u: listen: skiff vm forwards from an IPv4 host address; use "
				"127.0.0.1:%u, *:%u or [::]:%u (both: the host's 127.0.0.1)\n",
				vc->path, l->pos.line, l->pos.col, l->port, l->port, l->port);
			return -1;
		}
		if (tap)
			continue;
		char a[16] = "127.0.0.1";
		if (!l->any)
			snprintf(a, sizeof(a), "%u.%u.%u.%u", l->addr.b[12], l->addr.b[13], l->addr.b[14],
				 l->addr.b[15]);
		int k = snprintf(netdev + *n, cap - *n, ",hostfwd=tcp:%s:%u-:%u", a, l->port, l->port);
		if (k < 0 || (size_t)k >= cap - *n) {
			fprintf(stderr, "skiff vm: too many forwards\n");
			return -1;
		}
		*n += (size_t)k;
	}
	return 0;
}

struct vm_part {
	uint32_t kind;
	const char *name;
	uint64_t off, len;
};

static int write_at(int fd, uint64_t off, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t k = pwrite(fd, p, len, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k, off += (uint64_t)k, len -= (size_t)k;
	}
	return 0;
}

static uint64_t align_to(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* Pack the file's text, one archive per distinct `files` folder and every
 * certificate and key it names into fd (empty), as site_bundle.h lays it
 * out.  Messages printed; 0 or -1. */
static int conf_pack(const struct vm_conf *vc, bool user_net, int fd, bool dry_run,
		     const char *tmp)
{
	const struct sconf *c = &vc->c;
	static struct vm_part parts[SB_MAX_PARTS];
	unsigned np = 0;
	bool full = false;
	parts[np++] = (struct vm_part){SB_CONF, vc->dir, 0, vc->len};
	/* A name is packed once, whichever routes or sites share it. */
#define ADD(k, nm)                                                                      \
	do {                                                                            \
		bool seen_ = false;                                                     \
		for (unsigned q_ = 1; q_ < np && !seen_; q_++)                           \
			seen_ = parts[q_].kind == (k) && !strcmp(parts[q_].name, (nm));  \
		if (!seen_ && np == SB_MAX_PARTS)                                       \
			full = true;                                                    \
		else if (!seen_)                                                        \
			parts[np++] = (struct vm_part){(k), (nm), 0, 0};                \
	} while (0)
	for (unsigned s = 0; s < c->nsites; s++) {
		const struct sconf_site *site = &c->sites[s];
		for (unsigned r = 0; r < site->nroutes; r++)
			if (site->routes[r].kind == SCONF_FILES)
				ADD(SB_ARCHIVE, site->routes[r].root);
		if (site->cert) {
			ADD(SB_PEM, site->cert);
			ADD(SB_PEM, site->key);
		}
	}
#undef ADD
	if (full) {
		fprintf(stderr, "skiff vm: --config %s: more than %u folders and certificate files: "
			"the boot module holds at most that many\n", vc->path, SB_MAX_PARTS - 1);
		return -1;
	}
	uint64_t names = 0;
	for (unsigned i = 0; i < np; i++)
		names += strlen(parts[i].name);
	uint64_t head = SB_HEADER_LEN + (uint64_t)np * SB_PART_LEN + names;
	uint8_t *hb = calloc(1, (size_t)head);
	if (!hb) {
		fprintf(stderr, "skiff vm: out of memory\n");
		return -1;
	}
	uint64_t at = head, name_at = SB_HEADER_LEN + (uint64_t)np * SB_PART_LEN;
	uint64_t files = 0, bytes = 0, npem = 0, narch = 0;
	int rc = -1;
	for (unsigned i = 0; i < np; i++) {
		struct vm_part *p = &parts[i];
		if (p->kind == SB_CONF) {
			p->off = at;
			if (write_at(fd, at, vc->text, vc->len) < 0)
				goto io;
		} else if (p->kind == SB_ARCHIVE) {
			/* site_pack writes at the file's offset; its image is
			 * self-relative (site_pack.h). */
			p->off = align_to(at, SB_ALIGN);
			struct site_pack_info si = {0};
			char err[512];
			if (lseek(fd, (off_t)p->off, SEEK_SET) < 0)
				goto io;
			if (site_pack(p->name, fd, &si, err, sizeof(err)) < 0) {
				fprintf(stderr, "skiff vm: --config %s: files %s: %s\n", vc->path, p->name, err);
				goto out;
			}
			p->len = si.size;
			files += si.files, bytes += si.bytes, narch++;
		} else {
			static char pem[TLS_BUNDLE_MAX_FILE + 1];
			char what[SCONF_PATH_MAX + 32];
			size_t pl;
			snprintf(what, sizeof(what), "--config %s: tls", vc->path);
			p->off = at;
			if (read_pem(what, p->name, pem, &pl) < 0)
				goto out;
			p->len = pl;
			int w = write_at(fd, at, pem, pl);
			memset(pem, 0, sizeof(pem));
			if (w < 0)
				goto io;
			npem++;
		}
		at = p->off + p->len;
		uint8_t *e = hb + SB_HEADER_LEN + (uint64_t)i * SB_PART_LEN;
		size_t nl = strlen(p->name);
		sb_put32(e, p->kind);
		sb_put32(e + 4, (uint32_t)nl);
		sb_put64(e + 8, name_at);
		sb_put64(e + 16, p->off);
		sb_put64(e + 24, p->len);
		memcpy(hb + name_at, p->name, nl);
		name_at += nl;
	}
	if (at > SITE_PACK_MAX_BYTES) {
		fprintf(stderr, "skiff vm: --config %s: the module would be %llu bytes: more than "
			"the guest can map (%llu)\n", vc->path, (unsigned long long)at,
			(unsigned long long)SITE_PACK_MAX_BYTES);
		goto out;
	}
	memcpy(hb, sb_magic, 8);
	sb_put32(hb + 8, SB_VERSION);
	sb_put32(hb + 12, np);
	sb_put32(hb + 16, user_net ? SB_F_USER_NET : 0);
	sb_put64(hb + 24, at);
	if (write_at(fd, 0, hb, (size_t)head) < 0 || ftruncate(fd, (off_t)at) < 0)
		goto io;
	fprintf(stderr, "skiff vm: --config %s: %u sites on %u listeners; module %llu bytes: the "
		"file, %llu archives (%llu files, %llu bytes), %llu PEM files%s%s\n",
		vc->path, c->nsites, c->nlisten, (unsigned long long)at, (unsigned long long)narch,
		(unsigned long long)files, (unsigned long long)bytes, (unsigned long long)npem,
		dry_run ? " in " : "", dry_run ? tmp : "");
	rc = 0;
	goto out;
io:
	fprintf(stderr, "skiff vm: writing the boot module: %s\n", strerror(errno));
out:
	free(hb);
	return rc;
}

int cmd_vm(int argc, char **argv)
{
	/* Names, value syntax, bounds, defaults, --help and the messages: the
	 * options table (conf/opts.c opt_cmd_vm); the words after -- are the
	 * guest's, passed on as given (the guest checks them at boot). */
	struct opts o;
	cli_parse(&o, &opt_cmd_vm, argc, argv);
	const struct opt_fwd *fwds = o.fwd;
	int nfwd = (int)o.nfwd;
	const char *net = opt_str(&o, OPT_VM_NET), *mem = opt_str(&o, OPT_VM_MEM);
	const char *accel = opt_str(&o, OPT_VM_ACCEL);
	bool microvm = !strcmp(opt_str(&o, OPT_VM_MACHINE), "microvm");
	const char *image = opt_given(&o, OPT_VM_IMAGE) ? opt_str(&o, OPT_VM_IMAGE) : NULL;
	const char *root = opt_given(&o, OPT_ROOT) ? opt_str(&o, OPT_ROOT) : NULL;
	const char *config = opt_given(&o, OPT_CONFIG) ? opt_str(&o, OPT_CONFIG) : NULL;
	const char *tls_cert = opt_given(&o, OPT_TLS_CERT) ? opt_str(&o, OPT_TLS_CERT) : NULL;
	const char *tls_key = opt_given(&o, OPT_TLS_KEY) ? opt_str(&o, OPT_TLS_KEY) : NULL;
	unsigned tls_port = opt_given(&o, OPT_TLS_PORT) ? (unsigned)opt_num(&o, OPT_TLS_PORT) : 0;
	bool tls_redirect = opt_given(&o, OPT_TLS_REDIRECT);
	bool dry_run = opt_given(&o, OPT_VM_DRY_RUN), proxy = opt_given(&o, OPT_VM_PROXY);
	unsigned smp = (unsigned)opt_num(&o, OPT_VM_SMP);
	char *const *guest = o.rest;
	int nguest = (int)o.nrest;

	if (!tls_cert != !tls_key)
		cli_usage_error("vm", "--%s needs --%s too", tls_cert ? "tls-cert" : "tls-key",
				tls_cert ? "tls-key" : "tls-cert");
	if (!tls_cert && (tls_port || tls_redirect))
		cli_usage_error("vm", "--tls-port and --tls-redirect need --tls-cert and --tls-key");
	if (proxy && image)
		cli_usage_error("vm", "--proxy picks the image: give --image or --proxy, not both");
	/* microvm runs with acpi=off (so QEMU names the virtio-mmio window
	 * on the command line), and without ACPI's MADT the guest finds no
	 * other CPU to start. */
	if (microvm && smp > 1)
		cli_usage_error("vm", "--machine microvm runs one vCPU (no ACPI, so no MADT for the "
				"guest to find others in): drop --smp");
	bool tap = !strncmp(net, "tap:", 4);
	if (tap && nfwd)
		cli_usage_error("vm", "-p works with --net user only");
	if (config) {
		/* What the file says, the flags must not say too: one source each. */
		const char *dup = root ? "--root" : tls_cert ? "--tls-cert" : tls_key ? "--tls-key"
				 : tls_port ? "--tls-port" : tls_redirect ? "--tls-redirect"
				 : proxy ? "--proxy" : NULL;
		if (dup)
			cli_usage_error("vm", "%s: with --config the file says this (its listeners, "
					"`files` folders and `tls` certificates; a `proxy` route for the "
					"proxy; docs/unikernel.md)", dup);
		for (int i = 0; i < nguest; i++)
			if (!strncmp(guest[i], "port=", 5) || !strncmp(guest[i], "tls-port=", 9) ||
			    !strcmp(guest[i], "tls-redirect"))
				cli_usage_error("vm", "guest word %s: with --config the file's listeners "
						"name the ports", guest[i]);
	}
	static struct vm_conf vc;
	if (config && conf_load(config, &vc) < 0)
		return 1;

	char guest_args[4096] = "";
	size_t glen = 0;
	/* The HTTPS options as the guest's words (conf/opts.c), first. */
	if (tls_port)
		glen += (size_t)snprintf(guest_args, sizeof(guest_args), "tls-port=%u", tls_port);
	if (tls_redirect)
		glen += (size_t)snprintf(guest_args + glen, sizeof(guest_args) - glen, "%stls-redirect",
					 glen ? " " : "");
	for (int i = 0; i < nguest; i++) {
		int n = snprintf(guest_args + glen, sizeof(guest_args) - glen, "%s%s", glen ? " " : "", guest[i]);
		if (n < 0 || (size_t)n >= sizeof(guest_args) - glen)
			cli_usage_error("vm", "guest arguments too long");
		glen += (size_t)n;
	}

	/* The shutdown port, for Ctrl-C (forward_signal): the guest's word if
	 * given, else one of ours; with user networking, its forward (the
	 * user's -p PORT:N/udp, else a free port of ours). */
	unsigned ctl_guest = 0, ctl_host = 0;
	for (int i = 0; i < nguest; i++)
		if (!strncmp(guest[i], "shutdown-port=", 14))
			ctl_guest = (unsigned)strtoul(guest[i] + 14, NULL, 10);
	/* Not for --dry-run: its line is run by someone else, who has no use
	 * for a forward on a port of ours (and the line stays the same from
	 * one call to the next). */
	if (!tap && !dry_run) {
		if (!ctl_guest) {
			ctl_guest = VM_CTL_GUEST_PORT;
			int n = snprintf(guest_args + glen, sizeof(guest_args) - glen,
					 "%sshutdown-port=%u", glen ? " " : "", ctl_guest);
			if (n < 0 || (size_t)n >= sizeof(guest_args) - glen)
				cli_usage_error("vm", "guest arguments too long");
			glen += (size_t)n;
		}
		for (int i = 0; i < nfwd; i++)
			if (fwds[i].udp && fwds[i].guest == ctl_guest)
				ctl_host = fwds[i].host;
	}

	char img[PATH_MAX];
	if (image)
		snprintf(img, sizeof(img), "%s", image);
	else
		default_image(img, sizeof(img), proxy);
	if (access(img, R_OK) != 0) {
		fprintf(stderr, "skiff vm: no kernel image at %s (build it with `make uk`)\n", img);
		return 1;
	}

	const char *why = "--accel tcg";
	bool kvm = false;
	if (!strcmp(accel, "auto")) {
		kvm = kvm_usable(&why);
	} else if (!strcmp(accel, "kvm")) {
		kvm = true;
		if (!kvm_usable(&why))
			fprintf(stderr, "skiff vm: warning: --accel kvm, but %s\n", why);
		why = "--accel kvm";
	}

	char netdev[64 + (OPT_FWD_MAX + SCONF_MAX_LISTEN + 1) * 48];
	/* More than one vCPU on a TAP: one queue pair per vCPU (the TAP must
	 * be multi-queue: `ip tuntap add NAME mode tap multi_queue`), an
	 * MSI-X vector for each queue plus config and control.  vhost off:
	 * the kernel's vhost-net needs /dev/vhost-net and is not what the
	 * tests measure.  User networking has one queue whatever -smp says. */
	char device[128];
	if (microvm) /* the virtio-mmio bus: QEMU picks a free transport */
		snprintf(device, sizeof(device), "virtio-net-device,netdev=n0");
	else if (tap && smp > 1)
		snprintf(device, sizeof(device), "virtio-net-pci,disable-legacy=on,netdev=n0,romfile=,mq=on,vectors=%u",
			 2 * smp + 2);
	else
		snprintf(device, sizeof(device), "virtio-net-pci,disable-legacy=on,netdev=n0,romfile=");
	if (tap && smp > 1) {
		snprintf(netdev, sizeof(netdev), "tap,id=n0,ifname=%s,script=no,downscript=no,queues=%u,vhost=off",
			 net + 4, smp);
	} else if (tap) {
		snprintf(netdev, sizeof(netdev), "tap,id=n0,ifname=%s,script=no,downscript=no", net + 4);
	} else {
		size_t n = (size_t)snprintf(netdev, sizeof(netdev), "user,id=n0");
		for (int i = 0; i < nfwd; i++)
			n += (size_t)snprintf(netdev + n, sizeof(netdev) - n, ",hostfwd=%s:127.0.0.1:%u-:%u",
					      fwds[i].udp ? "udp" : "tcp", fwds[i].host, fwds[i].guest);
		if (config && conf_forwards(&vc, false, netdev, sizeof(netdev), &n) < 0)
			return 1;
		if (!ctl_host && ctl_guest && !dry_run && (ctl_host = free_udp_port()))
			n += (size_t)snprintf(netdev + n, sizeof(netdev) - n,
					      ",hostfwd=udp:127.0.0.1:%u-:%u", ctl_host, ctl_guest);
		if (ctl_host && (ctl_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) >= 0)
			ctl_addr = (struct sockaddr_in){.sin_family = AF_INET,
							.sin_port = htons((uint16_t)ctl_host),
							.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	}
	if (config && tap) {
		size_t n = 0;
		if (conf_forwards(&vc, true, NULL, 0, &n) < 0)
			return 1;
	}
	/* The module: the site packed, then the TLS files, before QEMU
	 * starts; removed after it ends (it holds the private key: mkstemp
	 * makes it 0600). */
	char site[PATH_MAX] = "";
	if (config) {
		const char *tmp = getenv("TMPDIR");
		snprintf(site, sizeof(site), "%s/skiff-sites.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		int fd = mkstemp(site);
		if (fd < 0) {
			fprintf(stderr, "skiff vm: cannot create %s: %s\n", site, strerror(errno));
			return 1;
		}
		int r = conf_pack(&vc, !tap, fd, dry_run, site);
		if (close(fd) < 0 && r == 0) {
			fprintf(stderr, "skiff vm: writing the boot module: %s\n", strerror(errno));
			r = -1;
		}
		if (r < 0) {
			unlink(site);
			return 1;
		}
	}
	if (root || tls_cert) {
		const char *tmp = getenv("TMPDIR");
		snprintf(site, sizeof(site), "%s/skiff-site.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		int fd = mkstemp(site);
		if (fd < 0) {
			fprintf(stderr, "skiff vm: cannot create %s: %s\n", site, strerror(errno));
			return 1;
		}
		char err[512];
		struct site_pack_info si = {0};
		int r = root ? site_pack(root, fd, &si, err, sizeof(err)) : 0;
		if (r == 0 && tls_cert && append_tls(fd, tls_cert, tls_key) < 0) {
			close(fd);
			unlink(site);
			return 1;
		}
		if (close(fd) < 0 && r == 0) {
			snprintf(err, sizeof(err), "writing the archive: %s", strerror(errno));
			r = -1;
		}
		if (r < 0) {
			fprintf(stderr, "skiff vm: %s\n", err);
			unlink(site);
			return 1;
		}
		if (root)
			fprintf(stderr, "skiff vm: --root %s: %llu files, %llu bytes, archive %llu bytes%s%s\n",
				root, (unsigned long long)si.files, (unsigned long long)si.bytes,
				(unsigned long long)si.size, dry_run ? " in " : "", dry_run ? site : "");
		if (tls_cert)
			fprintf(stderr, "skiff vm: --tls-cert %s --tls-key %s: in the boot module%s%s\n",
				tls_cert, tls_key, dry_run ? " " : "", dry_run ? site : "");
	}

	const char *qemu = getenv("SKIFF_QEMU");
	if (!qemu || !*qemu)
		qemu = "qemu-system-x86_64";
	char *qargv[48];
	int qa = 0;
#define ARG(x) (qargv[qa++] = (char *)(x))
	ARG(qemu);
	/* microvm (docs/microvm.md): acpi=off, so that QEMU appends
	 * virtio_mmio.device=SIZE@BASE:IRQ for each device to the kernel
	 * command line, as Firecracker does (with ACPI it describes them in
	 * the DSDT instead, which the guest does not read); rtc=on for the
	 * Date header's wall clock (the guest reads the CMOS RTC).  Its
	 * virtio-mmio transports are legacy (version 1) unless told
	 * otherwise; the guest drives version 2 only. */
	ARG("-machine"); ARG(microvm ? "microvm,acpi=off,rtc=on" : "pc");
	if (microvm) {
		ARG("-global"); ARG("virtio-mmio.force-legacy=off");
	}
	/* More than one vCPU under TCG: one host thread per vCPU (MTTCG),
	 * or they would take turns on one thread.  --smp 1 keeps the line
	 * it always had. */
	ARG("-accel"); ARG(kvm ? "kvm" : smp > 1 ? "tcg,thread=multi" : "tcg");
	/* KVM: the host CPU, minus arch-capabilities, which QEMU 7.2 aborts
	 * on under some KVMs.  TCG: max, for RDRAND (the stack's seed). */
	ARG("-cpu"); ARG(kvm ? "host,-arch-capabilities" : "max");
	char smp_arg[16];
	snprintf(smp_arg, sizeof(smp_arg), "%u", smp);
	ARG("-smp"); ARG(smp_arg);
	ARG("-m"); ARG(mem);
	ARG("-nodefaults"); ARG("-nographic"); ARG("-no-reboot");
	ARG("-serial"); ARG("stdio");
	/* SeaBIOS would mirror its banner to the serial port, starting with
	 * ESC c, which resets the user's terminal: keep it off the console. */
	ARG("-fw_cfg"); ARG("name=etc/sercon-port,string=0");
	ARG("-device"); ARG("isa-debug-exit,iobase=0xf4,iosize=0x04");
	ARG("-netdev"); ARG(netdev);
	ARG("-device"); ARG(device);
	ARG("-kernel"); ARG(img);
	if (*site) {
		ARG("-initrd");
		ARG(site);
	}
	if (glen) {
		ARG("-append");
		ARG(guest_args);
	}
	qargv[qa] = NULL;
#undef ARG

	if (dry_run) {
		for (int i = 0; i < qa; i++)
			printf("%s%s", i ? " " : "", qargv[i]);
		printf("\n");
		return 0;
	}
	fprintf(stderr, "skiff vm: accel=%s (%s) net=%s image=%s\n", kvm ? "kvm" : "tcg", why, net, img);
	for (unsigned i = 0; config && i < vc.c.nlisten; i++) {
		const struct sconf_listen *l = &vc.c.listen[i];
		if (tap)
			fprintf(stderr, "skiff vm: listener %u%s: the guest's port %u\n", l->port,
				l->tls ? " (tls)" : "", l->port);
		else
			fprintf(stderr, "skiff vm: %s://%u.%u.%u.%u:%u/ -> guest port %u\n",
				l->tls ? "https" : "http", l->any ? 127 : l->addr.b[12],
				l->any ? 0 : l->addr.b[13], l->any ? 0 : l->addr.b[14],
				l->any ? 1 : l->addr.b[15], l->port, l->port);
	}
	for (int i = 0; i < nfwd; i++) {
		if (!fwds[i].udp && fwds[i].guest == 80)
			fprintf(stderr, "skiff vm: http://127.0.0.1:%u/\n", fwds[i].host);
		else
			fprintf(stderr, "skiff vm: %s 127.0.0.1:%u -> guest port %u\n",
				fwds[i].udp ? "udp" : "tcp", fwds[i].host, fwds[i].guest);
	}
	fflush(stderr);

	bool qemu_error;
	int status = run_qemu(qargv, &qemu_error);
	if (*site)
		unlink(site);
	if (status < 0)
		return 1;
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "skiff vm: QEMU killed by signal %d\n", WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	int s = WEXITSTATUS(status);
	if (s == 0) {
		fprintf(stderr, "skiff vm: the guest stopped without an exit code (reset or power-off)\n");
		return 1;
	}
	if ((s == 1 || s == 127) && qemu_error) {
		fprintf(stderr, "skiff vm: QEMU failed\n");
		return 1;
	}
	if (!(s & 1)) {
		fprintf(stderr, "skiff vm: QEMU exited with status %d\n", s);
		return 1;
	}
	return s >> 1;
}
