/* init.c — /init of the Linux benchmark guest's initramfs (issue 7).
 *
 * A static program, no shell, no busybox.  In order:
 *   1. mounts /proc, /sys and /dev (devtmpfs);
 *   2. loads the kernel modules named in /modules/order, one path a line,
 *      dependencies first (bench/vm/mkinitrd.sh writes it), with
 *      finit_module(2);
 *   3. waits for eth0 (virtio_net), then sets lo up and eth0 to
 *      guest_ip (default 10.0.2.15/24, QEMU user networking) with a default
 *      route to guest_gw (default 10.0.2.2), through ioctls;
 *   4. runs the server (/skiff serve --stack linux --port 80, or the
 *      command in /server.cmd if the initramfs has one: one argument a
 *      line) and restarts nothing: when it exits, the guest powers off;
 *      with N > 1 vCPUs online (QEMU -smp N, bench-vm's 1-vs-2 rows,
 *      issue 17), first asks virtio_net for N combined channels
 *      (ETHTOOL_SCHANNELS, read back and logged: one rx/tx queue pair per
 *      vCPU on a multi-queue TAP), then runs N copies of the server, copy
 *      K pinned to vCPU K, each with SKIFF_GUEST_REUSEPORT=1 so that its
 *      listener joins one SO_REUSEPORT group (bench/vm/guest_main.c) and
 *      the kernel spreads connections over them; the first to exit powers
 *      the guest off.  One vCPU: one server, exactly as before;
 *   5. for bench/vm/profile.sh, a control process on UDP port 9: the
 *      datagram "stat" is answered with /proc/stat, /proc/softirqs,
 *      /proc/interrupts, /proc/net/snmp, /proc/net/netstat and the
 *      server's /proc/PID/stat;
 *      "perf SECONDS" runs `/usr/bin/perf record -a -g` for that long and
 *      prints `perf report` on the console, if the initramfs has perf.
 *      The benchmark's QEMU line forwards no UDP, so there it is unreachable
 *      and blocked in recvfrom(2).
 *
 * guest_ip=ADDR/LEN and guest_gw=ADDR come from the kernel command line:
 * the kernel hands unknown key=value words to init as environment
 * variables.  Every step prints one "init:" line on the console. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <sched.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ARGS 32
#define MAX_SERVERS 16 /* as skiff vm --smp's limit */

static void say(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "init: ");
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "\n");
}

static _Noreturn void poweroff(void)
{
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

static void load_modules(void)
{
	FILE *f = fopen("/modules/order", "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = 0;
		if (!line[0])
			continue;
		int fd = open(line, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			say("cannot open %s: %s", line, strerror(errno));
			continue;
		}
		if (syscall(SYS_finit_module, fd, "", 0) < 0 && errno != EEXIST)
			say("finit_module %s: %s", line, strerror(errno));
		close(fd);
	}
	fclose(f);
}

static int wait_for_iface(const char *name, int seconds)
{
	char path[64];
	snprintf(path, sizeof(path), "/sys/class/net/%s", name);
	struct timespec ts = {0, 20 * 1000 * 1000};
	for (int i = 0; i < seconds * 50; i++) {
		if (access(path, F_OK) == 0)
			return 0;
		nanosleep(&ts, NULL);
	}
	return -1;
}

static int set_addr(int s, const char *ifname, unsigned long req, uint32_t addr_be)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = addr_be;
	return ioctl(s, req, &ifr);
}

static int set_up(int s, const char *ifname)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return -1;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	return ioctl(s, SIOCSIFFLAGS, &ifr);
}

/* N vCPUs: ask for N combined channels (queue pairs) on IF, as many as
 * the device offers, and read the result back.  Recent kernels already
 * default to min(max, online CPUs); asking makes the count explicit and
 * the log line lets bench.sh check it rather than assume it.  A refusal is
 * logged and the guest serves on what it has (the bench notes the line). */
static void set_channels(int s, const char *ifname, unsigned n)
{
	struct ethtool_channels ch;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	memset(&ch, 0, sizeof(ch));
	ch.cmd = ETHTOOL_GCHANNELS;
	ifr.ifr_data = (char *)&ch;
	if (ioctl(s, SIOCETHTOOL, &ifr) < 0) {
		fprintf(stderr, "init: %s: ETHTOOL_GCHANNELS: %s\n", ifname, strerror(errno));
		return;
	}
	unsigned want = n < ch.max_combined ? n : ch.max_combined;
	if (want == 0)
		want = 1;
	unsigned was = ch.combined_count;
	if (ch.combined_count != want) {
		ch.cmd = ETHTOOL_SCHANNELS;
		ch.combined_count = want;
		ch.rx_count = ch.tx_count = ch.other_count = 0;
		if (ioctl(s, SIOCETHTOOL, &ifr) < 0) {
			fprintf(stderr, "init: %s: ETHTOOL_SCHANNELS combined %u (was %u): %s\n", ifname,
				want, was, strerror(errno));
			return;
		}
		memset(&ch, 0, sizeof(ch));
		ch.cmd = ETHTOOL_GCHANNELS;
		if (ioctl(s, SIOCETHTOOL, &ifr) < 0) {
			fprintf(stderr, "init: %s: ETHTOOL_GCHANNELS after set: %s\n", ifname, strerror(errno));
			return;
		}
	}
	fprintf(stderr, "init: %s: %u combined channels of %u for %u vCPUs (%s %u)%s\n", ifname,
		ch.combined_count, ch.max_combined, n, was == want ? "already, the kernel's default" : "set, was",
		was, ch.combined_count == n ? "" : " (FEWER QUEUES THAN vCPUs)");
}

static void setup_net(unsigned ncpu)
{
	const char *ip = getenv("guest_ip"), *gw = getenv("guest_gw");
	if (!ip || !*ip)
		ip = "10.0.2.15/24";
	if (!gw || !*gw)
		gw = "10.0.2.2";
	char addr[32];
	snprintf(addr, sizeof(addr), "%s", ip);
	int plen = 24;
	char *slash = strchr(addr, '/');
	if (slash) {
		*slash = 0;
		plen = atoi(slash + 1);
	}
	struct in_addr a, g;
	if (inet_pton(AF_INET, addr, &a) != 1 || inet_pton(AF_INET, gw, &g) != 1 || plen < 1 ||
	    plen > 32) {
		say("bad guest_ip=%s or guest_gw=%s", ip, gw);
		poweroff();
	}
	uint32_t mask = htonl(plen == 32 ? 0xffffffffu : ~(0xffffffffu >> plen));

	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		say("socket: %s%s", strerror(errno), "");
		poweroff();
	}
	if (set_up(s, "lo") < 0)
		say("lo up: %s%s", strerror(errno), "");
	if (wait_for_iface("eth0", 20) < 0) {
		say("no eth0 after 20 s (virtio_net not loaded?)%s%s", "", "");
		poweroff();
	}
	if (set_addr(s, "eth0", SIOCSIFADDR, a.s_addr) < 0 ||
	    set_addr(s, "eth0", SIOCSIFNETMASK, mask) < 0 || set_up(s, "eth0") < 0) {
		say("eth0 %s: %s", ip, strerror(errno));
		poweroff();
	}
	if (ncpu > 1)
		set_channels(s, "eth0", ncpu);
	struct rtentry rt;
	memset(&rt, 0, sizeof(rt));
	struct sockaddr_in *dst = (struct sockaddr_in *)&rt.rt_dst;
	struct sockaddr_in *gwa = (struct sockaddr_in *)&rt.rt_gateway;
	struct sockaddr_in *msk = (struct sockaddr_in *)&rt.rt_genmask;
	dst->sin_family = gwa->sin_family = msk->sin_family = AF_INET;
	gwa->sin_addr = g;
	rt.rt_flags = RTF_UP | RTF_GATEWAY;
	if (ioctl(s, SIOCADDRT, &rt) < 0)
		say("default route via %s: %s", gw, strerror(errno));
	close(s);
	say("eth0 %s, default via %s", ip, gw);
}

/* argv of the server: /server.cmd (one argument a line) or the default. */
static void server_argv(char **argv)
{
	static char buf[2048];
	int n = 0;
	FILE *f = fopen("/server.cmd", "r");
	if (f) {
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = 0;
		for (char *p = strtok(buf, "\n"); p && n < MAX_ARGS - 1; p = strtok(NULL, "\n"))
			if (*p)
				argv[n++] = p;
	}
	if (n == 0) {
		static char *def[] = {"/skiff", "serve", "--stack", "linux", "--port", "80"};
		for (; n < (int)(sizeof(def) / sizeof(def[0])); n++)
			argv[n] = def[n];
	}
	argv[n] = NULL;
}

static size_t append_file(char *buf, size_t len, size_t cap, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return len;
	len += (size_t)snprintf(buf + len, cap - len, "==> %s\n", path);
	while (len < cap - 1) {
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	return len;
}

static void run_wait(char **argv)
{
	pid_t p = fork();
	if (p == 0) {
		execv(argv[0], argv);
		say("exec %s: %s", argv[0], strerror(errno));
		_exit(127);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
}

static void ctl_loop(pid_t server)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(9)};
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0)
		_exit(1);
	static char buf[60000];
	char req[64], path[64], secs[16];
	for (;;) {
		struct sockaddr_in peer;
		socklen_t pl = sizeof(peer);
		ssize_t n = recvfrom(s, req, sizeof(req) - 1, 0, (struct sockaddr *)&peer, &pl);
		if (n <= 0)
			continue;
		req[n] = 0;
		req[strcspn(req, "\r\n")] = 0;
		if (!strcmp(req, "stat")) {
			size_t len = 0;
			len = append_file(buf, len, sizeof(buf), "/proc/stat");
			len = append_file(buf, len, sizeof(buf), "/proc/softirqs");
			len = append_file(buf, len, sizeof(buf), "/proc/interrupts");
			len = append_file(buf, len, sizeof(buf), "/proc/net/snmp");
			len = append_file(buf, len, sizeof(buf), "/proc/net/netstat");
			snprintf(path, sizeof(path), "/proc/%d/stat", (int)server);
			len = append_file(buf, len, sizeof(buf), path);
			sendto(s, buf, len, 0, (struct sockaddr *)&peer, pl);
		} else if (!strncmp(req, "perf ", 5) && access("/usr/bin/perf", X_OK) == 0) {
			snprintf(secs, sizeof(secs), "%d", atoi(req + 5) > 0 ? atoi(req + 5) : 5);
			sendto(s, "perf started\n", 13, 0, (struct sockaddr *)&peer, pl);
			char *rec[] = {"/usr/bin/perf", "record", "-q", "-a", "-g", "-F", "499", "-o",
				       "/tmp/perf.data", "--", "/init", "sleep", secs, NULL};
			run_wait(rec);
			char *rep[] = {"/usr/bin/perf", "report", "-i", "/tmp/perf.data", "--stdio",
				       "--no-children", "--sort", "comm,dso,sym", "-g", "none",
				       "--percent-limit", "0.2", NULL};
			fprintf(stderr, "init: perf report begin\n");
			run_wait(rep);
			fprintf(stderr, "init: perf report end\n");
		} else {
			sendto(s, "?\n", 2, 0, (struct sockaddr *)&peer, pl);
		}
	}
}

int main(int argc, char **argv0)
{
	/* `/init sleep N`: the idle process that perf record times (no shell). */
	if (argc == 3 && !strcmp(argv0[1], "sleep") && getpid() != 1) {
		sleep((unsigned)atoi(argv0[2]));
		return 0;
	}
	mkdir("/proc", 0555);
	mkdir("/sys", 0555);
	mkdir("/dev", 0755);
	mkdir("/tmp", 01777);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("tmpfs", "/tmp", "tmpfs", 0, NULL);

	long online = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned ncpu = online < 1 ? 1 : online > MAX_SERVERS ? MAX_SERVERS : (unsigned)online;
	load_modules();
	setup_net(ncpu);

	char *argv[MAX_ARGS];
	server_argv(argv);
	pid_t pids[MAX_SERVERS];
	unsigned nsrv = 0;
	if (ncpu > 1)
		fprintf(stderr, "init: %u vCPUs: %u servers, one pinned to each, SO_REUSEPORT\n", ncpu, ncpu);
	say("starting %s %s", argv[0], argv[1] ? argv[1] : "");
	for (unsigned k = 0; k < ncpu; k++) {
		pid_t p = fork();
		if (p == 0) {
			if (ncpu > 1) {
				cpu_set_t set;
				CPU_ZERO(&set);
				CPU_SET(k, &set);
				if (sched_setaffinity(0, sizeof(set), &set) < 0)
					fprintf(stderr, "init: server %u: sched_setaffinity: %s\n", k,
						strerror(errno));
				setenv("SKIFF_GUEST_REUSEPORT", "1", 1);
			}
			execv(argv[0], argv);
			say("exec %s: %s", argv[0], strerror(errno));
			_exit(127);
		}
		if (p > 0)
			pids[nsrv++] = p;
	}
	pid_t pid = nsrv ? pids[0] : -1;
	if (pid > 0 && fork() == 0)
		ctl_loop(pid);
	/* pid 1 reaps every orphan; a server's exit ends the guest. */
	for (;;) {
		int st;
		pid_t w = wait(&st);
		if (w < 0 && errno == ECHILD)
			break;
		bool ours = false;
		for (unsigned k = 0; k < nsrv; k++)
			ours |= w == pids[k];
		if (ours) {
			char code[16];
			snprintf(code, sizeof(code), "%d", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
			say("server exited (%s)%s, powering off", code, "");
			break;
		}
	}
	poweroff();
	return 0;
}
