/* rtc.c — the CMOS real-time clock (MC146818, ports 0x70/0x71), read once
 * at boot for the wall clock; after that the TSC advances it (main.c), so
 * the slow port I/O (a VM exit per access) is never on the data path.
 *
 * The chip updates its registers once a second; a read that straddles the
 * update can mix two seconds (23:59:59 + the next day's date).  So: wait
 * until no update is in progress, read everything, and read again until
 * two passes agree.  Register B says how the values are encoded (BCD or
 * binary, 12 or 24 hours).  QEMU keeps the RTC in UTC unless told
 * otherwise (-rtc base=utc is its default), which is what HTTP wants. */
#include "cpu.h"
#include "kvm.h"

#define CMOS_ADDR 0x70
#define CMOS_DATA 0x71
#define NMI_OFF 0x80 /* bit 7 of the index port: keep NMIs masked while we look */

#define REG_SEC 0x00
#define REG_MIN 0x02
#define REG_HOUR 0x04
#define REG_MDAY 0x07
#define REG_MON 0x08
#define REG_YEAR 0x09
#define REG_A 0x0a
#define REG_B 0x0b
#define REG_CENTURY 0x32 /* not in the original chip; PC firmware and QEMU keep it here */
#define A_UIP 0x80       /* update in progress */
#define B_24H 0x02
#define B_BINARY 0x04
#define HOUR_PM 0x80     /* 12-hour mode only */

static uint8_t cmos_read(uint8_t reg)
{
	outb(CMOS_ADDR, (uint8_t)(reg | NMI_OFF));
	return inb(CMOS_DATA);
}

static void read_raw(uint8_t v[7])
{
	/* Bounded: a chip stuck in "update" must not hang the boot. */
	for (int i = 0; i < 100000 && (cmos_read(REG_A) & A_UIP); i++)
		cpu_pause();
	v[0] = cmos_read(REG_SEC);
	v[1] = cmos_read(REG_MIN);
	v[2] = cmos_read(REG_HOUR);
	v[3] = cmos_read(REG_MDAY);
	v[4] = cmos_read(REG_MON);
	v[5] = cmos_read(REG_YEAR);
	v[6] = cmos_read(REG_CENTURY);
}

static unsigned from_bcd(uint8_t v)
{
	return (unsigned)(v >> 4) * 10 + (v & 15);
}

int rtc_read(struct rtc_time *t)
{
	uint8_t a[7], b[7];
	read_raw(a);
	int tries = 0;
	for (;;) {
		read_raw(b);
		if (!sk_memcmp(a, b, sizeof(a)))
			break;
		if (++tries == 5)
			return -1;
		sk_memcpy(a, b, sizeof(a));
	}
	uint8_t regb = cmos_read(REG_B);
	bool pm = b[2] & HOUR_PM;
	b[2] &= (uint8_t)~HOUR_PM;
	unsigned v[7];
	for (int i = 0; i < 7; i++)
		v[i] = (regb & B_BINARY) ? b[i] : from_bcd(b[i]);
	unsigned hour = v[2];
	if (!(regb & B_24H))
		hour = hour % 12 + (pm ? 12 : 0);
	/* A century register that holds nonsense (absent on some chips):
	 * this century is the safe guess for a clock read today. */
	unsigned century = v[6] >= 19 && v[6] <= 99 ? v[6] : 20;
	*t = (struct rtc_time){
		.year = century * 100 + v[5], .month = v[4], .day = v[3],
		.hour = hour, .min = v[1], .sec = v[0],
	};
	if (t->year < 1970 || t->month < 1 || t->month > 12 || t->day < 1 || t->day > 31 ||
	    t->hour > 23 || t->min > 59 || t->sec > 60)
		return -1;
	return 0;
}
