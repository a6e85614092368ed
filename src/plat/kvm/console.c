/* console.c — COM1 serial console and a small printf.
 *
 * The UART is polled (transmit-holding-register empty) rather than
 * interrupt driven: logs are rare and a polled write cannot be lost when
 * the kernel is about to halt after an exception.
 *
 * With more than one CPU a lock keeps each kprintf's text together: a
 * recursive spin lock (rlock.h), so console_write inside kvprintf (and
 * a fatal exception's report while this CPU holds it) goes on, and the
 * interrupts are off whenever code runs, so no handler can wait on it.
 * A CPU that faults while another holds it waits a bounded time, then
 * writes anyway: the report matters more than tidy lines. */
#include "cpu.h"
#include "kvm.h"
#include "rlock.h"

#define COM1 0x3f8

void console_init(void)
{
	outb(COM1 + 1, 0x00); /* no UART interrupts */
	outb(COM1 + 3, 0x80); /* DLAB: set the divisor */
	outb(COM1 + 0, 0x01); /* 115200 baud */
	outb(COM1 + 1, 0x00);
	outb(COM1 + 3, 0x03); /* 8N1 */
	outb(COM1 + 2, 0xc7); /* FIFO on, cleared */
	outb(COM1 + 4, 0x03); /* DTR, RTS */
}

static void serial_putc(char c)
{
	/* Bounded wait: a missing UART must not hang the kernel. */
	for (int i = 0; i < 100000 && !(inb(COM1 + 5) & 0x20); i++)
		cpu_pause();
	outb(COM1, (uint8_t)c);
}

/* The console's lock (rlock.h): a CPU that has waited this many pauses
 * for it takes it over (the bounded wait above). */
#define CONSOLE_SPIN_LIMIT 100000000ull
static struct rlock console_lk;

static void console_lock(void)
{
	rlock_take(&console_lk, kvm_cpu_this()->index + 1, CONSOLE_SPIN_LIMIT);
}

static void console_unlock(void)
{
	rlock_give(&console_lk);
}

void console_write(const char *s, size_t n)
{
	console_lock();
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			serial_putc('\r');
		serial_putc(s[i]);
	}
	console_unlock();
}

/* Output sink for the formatter: a bounded buffer, or the console when
 * buf is NULL (flushed in chunks so the console sees whole lines). */
struct sink {
	char *buf;
	size_t size, len;
	char tmp[128];
	size_t tlen;
};

static void sink_putc(struct sink *s, char c)
{
	if (s->buf) {
		if (s->len + 1 < s->size)
			s->buf[s->len] = c;
		s->len++;
		return;
	}
	s->tmp[s->tlen++] = c;
	if (s->tlen == sizeof(s->tmp)) {
		console_write(s->tmp, s->tlen);
		s->tlen = 0;
	}
}

static void fmt_uint(struct sink *s, uint64_t v, unsigned base, bool upper, int width, char pad)
{
	char digits[24];
	int n = 0;
	const char *set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	do {
		digits[n++] = set[v % base];
		v /= base;
	} while (v);
	while (width-- > n)
		sink_putc(s, pad);
	while (n)
		sink_putc(s, digits[--n]);
}

static void format(struct sink *s, const char *fmt, va_list ap)
{
	for (; *fmt; fmt++) {
		if (*fmt != '%') {
			sink_putc(s, *fmt);
			continue;
		}
		fmt++;
		char pad = ' ';
		int width = 0, lng = 0;
		if (*fmt == '0') {
			pad = '0';
			fmt++;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		while (*fmt == 'l' || *fmt == 'z') {
			lng++;
			fmt++;
		}
		switch (*fmt) {
		case 'd':
		case 'i': {
			int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
			if (v < 0) {
				sink_putc(s, '-');
				fmt_uint(s, (uint64_t)0 - (uint64_t)v, 10, false, width ? width - 1 : 0, pad);
			} else {
				fmt_uint(s, (uint64_t)v, 10, false, width, pad);
			}
			break;
		}
		case 'u':
		case 'x':
		case 'X': {
			uint64_t v = lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned);
			fmt_uint(s, v, *fmt == 'u' ? 10 : 16, *fmt == 'X', width, pad);
			break;
		}
		case 'p':
			sink_putc(s, '0');
			sink_putc(s, 'x');
			fmt_uint(s, (uint64_t)(uintptr_t)va_arg(ap, void *), 16, false, 0, pad);
			break;
		case 's': {
			const char *str = va_arg(ap, const char *);
			if (!str)
				str = "(null)";
			int n = 0;
			while (str[n])
				n++;
			while (width-- > n)
				sink_putc(s, ' ');
			while (*str)
				sink_putc(s, *str++);
			break;
		}
		case 'c':
			sink_putc(s, (char)va_arg(ap, int));
			break;
		case '%':
			sink_putc(s, '%');
			break;
		case 0:
			return;
		default:
			sink_putc(s, '%');
			sink_putc(s, *fmt);
		}
	}
}

void kvprintf(const char *fmt, va_list ap)
{
	struct sink s = {0};
	console_lock();
	format(&s, fmt, ap);
	console_write(s.tmp, s.tlen);
	console_unlock();
}

void kprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	kvprintf(fmt, ap);
	va_end(ap);
}

int ksnprintf(char *buf, size_t size, const char *fmt, ...)
{
	struct sink s = {.buf = buf, .size = size};
	va_list ap;
	va_start(ap, fmt);
	format(&s, fmt, ap);
	va_end(ap);
	if (size)
		buf[s.len < size ? s.len : size - 1] = 0;
	return (int)s.len;
}

void kvm_exit(unsigned code)
{
	/* isa-debug-exit takes the value written; QEMU exits at once. */
	outl(0xf4, code);
	kprintf("skiff-uk: isa-debug-exit absent; halting (exit code %u)\n", code);
	cpu_halt_forever();
}
