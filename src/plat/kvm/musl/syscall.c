/* syscall.c — the system calls musl's objects make in the guest.
 *
 * Linux x86-64 numbers and conventions (result or -errno), because those
 * are what Debian's libc.a was built for.  What is answered:
 *   memory  brk, mmap (anonymous), munmap (pages.c); madvise and mprotect
 *           answer 0 and do nothing; mremap ENOSYS (realloc copies)
 *   time    clock_gettime: REALTIME from the CMOS clock at the first call
 *           plus the TSC clock since; MONOTONIC/BOOTTIME/..._RAW/_COARSE
 *           and the CPU-time clocks from plat_now() (the guest is the one
 *           process); clock_getres 1 ns
 *   random  getrandom from plat_random (RDRAND)
 *   output  write/writev to fd 1 and 2 -> the console; ioctl TIOCGWINSZ
 *           on them answers 80x24 (so stdout is line-buffered); other fds
 *           EBADF
 *   thread  arch_prctl(ARCH_SET_FS/GET_FS), set_tid_address/gettid (the
 *           vCPU's index + 1), getpid 1, rt_sigprocmask and sched_yield 0,
 *           futex: WAKE 0, WAIT EAGAIN (nothing else runs the app)
 *   exit    exit/exit_group stop the guest (0 -> a clean exit, else fatal);
 *           tkill/tgkill (abort, raise) stop it, fatal
 * Everything else (files, processes, sockets, signals, sleeping) answers
 * -ENOSYS, counted, and the first call of each number is printed. */
#include "musl.h"
#include "../cpu.h"
#include "../kvm.h"
#include "../../plat.h"

#define EBADF 9
#define EAGAIN 11
#define EFAULT 14
#define EINVAL 22
#define ENOSYS 38

enum {
	NR_WRITE = 1, NR_MMAP = 9, NR_MPROTECT = 10, NR_MUNMAP = 11, NR_BRK = 12,
	NR_RT_SIGPROCMASK = 14, NR_IOCTL = 16, NR_WRITEV = 20, NR_SCHED_YIELD = 24,
	NR_MREMAP = 25, NR_MADVISE = 28, NR_GETPID = 39, NR_EXIT = 60, NR_ARCH_PRCTL = 158,
	NR_GETTID = 186, NR_TKILL = 200, NR_FUTEX = 202, NR_SET_TID_ADDRESS = 218, NR_CLOCK_GETTIME = 228,
	NR_CLOCK_GETRES = 229, NR_EXIT_GROUP = 231, NR_TGKILL = 234, NR_GETRANDOM = 318,
};
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define MSR_FS_BASE 0xc0000100u
#define TIOCGWINSZ 0x5413
#define FUTEX_CMD_MASK 0x7f /* without FUTEX_PRIVATE_FLAG (128) */

struct k_timespec {
	long sec, nsec;
};
struct k_iovec {
	const void *base;
	size_t len;
};

static uint64_t enosys;
static uint64_t enosys_seen[512 / 64]; /* numbers already reported */

uint64_t musl_enosys_count(void)
{
	return enosys;
}

/* Days since 1970-01-01 of a proleptic Gregorian date: count whole
 * 400-year eras (146097 days each) from 0000-03-01, so that February,
 * with its leap day, ends each year. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);                   /* 0..399 */
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1; /* 0..365 */
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;          /* 0..146096 */
	return era * 146097 + doe - 719468;
}

/* The wall clock: the CMOS clock (whole seconds, UTC) read once, carried
 * on by plat_now().  0 (the epoch) if the CMOS clock reads as nonsense. */
static int64_t wall_ns_at(sk_time_ns now)
{
	static bool read;
	static int64_t wall_base; /* ns since the epoch at plat_now() == mono_base */
	static sk_time_ns mono_base;
	if (!read) {
		struct rtc_time t;
		mono_base = plat_now();
		if (rtc_read(&t) == 0)
			wall_base = (days_from_civil(t.year, t.month, t.day) * 86400 +
				     t.hour * 3600 + t.min * 60 + t.sec) * 1000000000ll;
		else
			kprintf("skiff-uk: libc: no CMOS clock: CLOCK_REALTIME starts at 0\n");
		read = true;
	}
	return wall_base + (int64_t)(now - mono_base);
}

static long clock_gettime(long clk, struct k_timespec *ts)
{
	if (!ts)
		return -EFAULT;
	sk_time_ns now = plat_now();
	int64_t ns;
	switch (clk) {
	case 0: /* REALTIME */
	case 5: /* REALTIME_COARSE */
	case 11: /* TAI: no leap-second table here */
		ns = wall_ns_at(now);
		break;
	case 1: case 2: case 3: case 4: case 6: case 7: /* MONOTONIC, the CPU times, RAW, COARSE, BOOTTIME */
		ns = (int64_t)now;
		break;
	default:
		return -EINVAL;
	}
	ts->sec = ns / 1000000000;
	ts->nsec = ns % 1000000000;
	return 0;
}

static long write_out(long fd, const void *p, size_t n)
{
	if (fd != 1 && fd != 2)
		return -EBADF;
	console_write(p, n);
	return (long)n;
}

static long no_such(long nr)
{
	enosys++;
	if (nr >= 0 && nr < 512 && !(enosys_seen[nr / 64] >> (nr % 64) & 1)) {
		enosys_seen[nr / 64] |= 1ull << (nr % 64);
		kprintf("skiff-uk: libc: system call %ld is not offered (ENOSYS)\n", nr);
	}
	return -ENOSYS;
}

long musl_syscall(long a1, long a2, long a3, long a4, long a5, long a6, long nr)
{
	switch (nr) {
	case NR_BRK:
		return musl_brk((uintptr_t)a1);
	case NR_MMAP:
		return musl_mmap((uintptr_t)a1, (size_t)a2, a3, a4, a5, a6);
	case NR_MUNMAP:
		return musl_munmap((uintptr_t)a1, (size_t)a2);
	case NR_MADVISE:
	case NR_MPROTECT:
	case NR_RT_SIGPROCMASK:
	case NR_SCHED_YIELD:
		return 0;
	case NR_CLOCK_GETTIME:
		return clock_gettime(a1, (struct k_timespec *)a2);
	case NR_CLOCK_GETRES:
		if (a1 < 0 || a1 > 11)
			return -EINVAL;
		if (a2)
			*(struct k_timespec *)a2 = (struct k_timespec){0, 1};
		return 0;
	case NR_GETRANDOM:
		if (a2 < 0)
			return -EINVAL;
		return plat_random((void *)a1, (size_t)a2) < 0 ? -EAGAIN : a2;
	case NR_WRITE:
		return write_out(a1, (const void *)a2, (size_t)a3);
	case NR_WRITEV: {
		if (a1 != 1 && a1 != 2)
			return -EBADF;
		const struct k_iovec *iov = (const struct k_iovec *)a2;
		long total = 0;
		for (long i = 0; i < a3; i++) {
			console_write(iov[i].base, iov[i].len);
			total += (long)iov[i].len;
		}
		return total;
	}
	case NR_IOCTL:
		if ((a1 == 1 || a1 == 2) && a2 == TIOCGWINSZ && a3) {
			uint16_t *ws = (uint16_t *)a3; /* rows, cols, xpixel, ypixel */
			ws[0] = 24, ws[1] = 80, ws[2] = ws[3] = 0;
			return 0;
		}
		return a1 >= 0 && a1 <= 2 ? -25 /* ENOTTY */ : -EBADF;
	case NR_ARCH_PRCTL:
		if (a1 == ARCH_SET_FS) {
			wrmsr(MSR_FS_BASE, (uint64_t)a2);
			return 0;
		}
		if (a1 == ARCH_GET_FS) {
			*(uint64_t *)a2 = rdmsr(MSR_FS_BASE);
			return 0;
		}
		return -EINVAL;
	case NR_SET_TID_ADDRESS:
	case NR_GETTID:
		return (long)kvm_cpu_this()->index + 1;
	case NR_GETPID:
		return 1;
	case NR_FUTEX:
		/* Only one vCPU runs the application, so no waiter can be
		 * woken by anyone else: a WAIT returns at once (musl's locks
		 * then look again) and a WAKE wakes nobody. */
		if ((a2 & FUTEX_CMD_MASK) == 0)
			return -EAGAIN;
		return 0;
	case NR_TKILL:
	case NR_TGKILL:
		/* A signal to ourselves: abort() (SIGABRT) or raise().  There
		 * are no handlers, so its default action, stopping: otherwise
		 * abort's next step is a `hlt` with interrupts off, in ring 0 a
		 * guest that hangs instead of stopping. */
		kprintf("skiff-uk: libc: signal %ld raised (abort): stopping\n",
			nr == NR_TKILL ? a2 : a3);
		kvm_exit(KVM_EXIT_FATAL);
	case NR_EXIT:
	case NR_EXIT_GROUP:
		kprintf("skiff-uk: libc: exit(%ld)\n", a1);
		kvm_exit(a1 == 0 ? KVM_EXIT_OK : KVM_EXIT_FATAL);
	default:
		(void)a4;
		return no_such(nr);
	}
}
