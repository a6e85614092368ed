/* acpi.c — the CPUs the firmware describes: RSDP -> XSDT (or RSDT) ->
 * MADT ("APIC"), and the enabled local APICs in it (ACPI 6.5, 5.2.5,
 * 5.2.7-8, 5.2.12).
 *
 * Why the MADT: it is what QEMU (and every other VMM and firmware) fills
 * from -smp, with one entry per possible CPU and an "enabled" flag, and
 * it gives the APIC IDs the INIT/SIPI messages are addressed to.  The
 * CPUID topology leaves only say how many threads a package could hold.
 *
 * Every table is firmware memory, read as untrusted bytes: signature,
 * length (bounded, inside the identity-mapped 4 GiB), checksum, then each
 * MADT entry's length (>= 2, inside the table) before its fields.  A table
 * that fails any check is not used, and the guest runs on the BSP alone,
 * saying why. */
#include "kvm.h"

#define ACPI_TABLE_MAX (64u << 10) /* a MADT for 16 CPUs is ~200 B */
#define MAPPED_LIMIT (4ull << 30)
#define MADT_LAPIC 0
#define MADT_X2APIC 9
#define MADT_LAPIC_ENABLED 1u

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const uint8_t *p) { return le32(p) | (uint64_t)le32(p + 4) << 32; }

static bool sum_ok(const uint8_t *p, size_t n)
{
	uint8_t s = 0;
	for (size_t i = 0; i < n; i++)
		s = (uint8_t)(s + p[i]);
	return s == 0;
}

static bool in_mapped(uint64_t addr, uint64_t len)
{
	return addr >= 4096 && len <= MAPPED_LIMIT && addr <= MAPPED_LIMIT - len;
}

/* A system description table at addr with this signature: its length and
 * checksum checked.  NULL otherwise. */
static const uint8_t *sdt_at(uint64_t addr, const char sig[4], uint32_t *len)
{
	if (!in_mapped(addr, 36))
		return NULL;
	const uint8_t *t = (const uint8_t *)(uintptr_t)addr;
	uint32_t n = le32(t + 4);
	if (sk_memcmp(t, sig, 4) || n < 36 || n > ACPI_TABLE_MAX || !in_mapped(addr, n) || !sum_ok(t, n))
		return NULL;
	*len = n;
	return t;
}

static const uint8_t *rsdp_check(const uint8_t *p)
{
	if (sk_memcmp(p, "RSD PTR ", 8) || !sum_ok(p, 20))
		return NULL;
	if (p[15] >= 2 && (le32(p + 20) < 36 || le32(p + 20) > 4096 || !sum_ok(p, le32(p + 20))))
		return NULL;
	return p;
}

/* 5.2.5.1: on 16-byte boundaries in the first KiB of the EBDA, then in
 * 0xe0000..0xfffff.  Used only when the PVH start info names none. */
static const uint8_t *rsdp_scan(void)
{
	/* The BIOS data area's EBDA segment at 0x40e (through asm: the
	 * compiler takes a constant address for a zero-length object). */
	uintptr_t bda = 0x40e;
	__asm__("" : "+r"(bda));
	uint64_t ebda = (uint64_t)*(const volatile uint16_t *)bda << 4;
	if (ebda >= 0x80000 && ebda < 0xa0000)
		for (uint64_t a = ebda; a < ebda + 1024; a += 16)
			if (rsdp_check((const uint8_t *)(uintptr_t)a))
				return (const uint8_t *)(uintptr_t)a;
	for (uint64_t a = 0xe0000; a < 0x100000; a += 16)
		if (rsdp_check((const uint8_t *)(uintptr_t)a))
			return (const uint8_t *)(uintptr_t)a;
	return NULL;
}

int acpi_madt_parse(const uint8_t *madt, uint32_t len, uint32_t *ids, unsigned max, unsigned *n,
		    unsigned *skipped, const char **why)
{
	*n = 0;
	*skipped = 0;
	if (len < 44) {
		*why = "MADT shorter than its header";
		return -1;
	}
	for (uint32_t off = 44; off < len;) {
		if (len - off < 2 || madt[off + 1] < 2 || madt[off + 1] > len - off) {
			*why = "MADT entry runs past the table";
			return -1;
		}
		uint8_t type = madt[off], elen = madt[off + 1];
		if (type == MADT_LAPIC) {
			if (elen < 8) {
				*why = "MADT local APIC entry too short";
				return -1;
			}
			if (le32(madt + off + 4) & MADT_LAPIC_ENABLED) {
				if (*n < max)
					ids[(*n)++] = madt[off + 3];
				else
					(*skipped)++;
			}
		} else if (type == MADT_X2APIC) {
			if (elen < 16) {
				*why = "MADT x2APIC entry too short";
				return -1;
			}
			/* This kernel drives the LAPIC in xAPIC mode: an ID above
			 * 254 cannot be addressed, so that CPU stays off (counted). */
			if (le32(madt + off + 8) & MADT_LAPIC_ENABLED) {
				uint32_t id = le32(madt + off + 4);
				if (id < 255 && *n < max)
					ids[(*n)++] = id;
				else
					(*skipped)++;
			}
		}
		off += elen;
	}
	if (*n == 0) {
		*why = "MADT lists no enabled CPU";
		return -1;
	}
	return 0;
}

int acpi_cpus(uint64_t rsdp_paddr, uint32_t *ids, unsigned max, unsigned *n, unsigned *skipped,
	      const char **why)
{
	const uint8_t *rsdp = NULL;
	if (rsdp_paddr && in_mapped(rsdp_paddr, 36))
		rsdp = rsdp_check((const uint8_t *)(uintptr_t)rsdp_paddr);
	if (!rsdp)
		rsdp = rsdp_scan();
	if (!rsdp) {
		*why = "no ACPI RSDP";
		return -1;
	}
	/* The XSDT (64-bit entries) when revision 2 gives one, else the RSDT. */
	uint32_t rlen = 0;
	bool x = rsdp[15] >= 2 && le64(rsdp + 24);
	const uint8_t *root = x ? sdt_at(le64(rsdp + 24), "XSDT", &rlen) : sdt_at(le32(rsdp + 16), "RSDT", &rlen);
	if (!root) {
		*why = x ? "bad XSDT" : "bad RSDT";
		return -1;
	}
	unsigned esz = x ? 8 : 4;
	for (uint32_t off = 36; off + esz <= rlen; off += esz) {
		uint64_t a = x ? le64(root + off) : le32(root + off);
		uint32_t mlen = 0;
		const uint8_t *madt = sdt_at(a, "APIC", &mlen);
		if (madt)
			return acpi_madt_parse(madt, mlen, ids, max, n, skipped, why);
	}
	*why = "no MADT (APIC table)";
	return -1;
}
