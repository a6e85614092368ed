/* mem.c — guest RAM for the arenas whose size the command line decides
 * (TCP sockets and their buffers, HTTP connection states): one bump
 * allocator over the largest usable RAM range above the kernel image.
 *
 * Why not static arrays: their size would be fixed at build time, and
 * boot.S zeroes .bss byte by byte (rep stosb), which under TCG costs
 * seconds for a few hundred MiB.  Memory handed out here is NOT zeroed:
 * fresh guest RAM reads as zero anyway, and tcp_stack_init /
 * http_app_init / loop_skiff_init write every field they rely on.
 * Nothing is ever freed: the arenas live as long as the kernel.
 *
 * Where RAM is: the PVH start_info's memory map (version >= 1, E820
 * types).  Without one, the CMOS registers QEMU fills in (0x34/0x35: RAM
 * above 16 MiB in 64 KiB units).  Only 0..4 GiB is mapped (boot.S), so
 * RAM above 4 GiB is left alone.
 *
 * Reserved ranges (mem_reserve, before mem_init): RAM the firmware filled
 * with something the application reads later, i.e. the PVH module (the
 * site archive QEMU loads at the top of low RAM for -initrd).  The E820 map
 * reports that memory as ordinary RAM, so each usable range is cut around
 * every reserved one before it is offered: the heap never hands it out. */
#include "cpu.h"
#include "kvm.h"

#define E820_RAM 1
#define MAPPED_LIMIT (4ull << 30)

struct hvm_memmap_entry {
	uint64_t addr, size;
	uint32_t type, reserved;
};

extern char _end[]; /* kernel.ld: end of the image and its .bss */

static uint64_t heap_base, heap_cur, heap_end, ram_bytes;
static const char *source = "none";

#define MAX_RESERVED 4
static struct {
	uint64_t lo, hi;
} reserved[MAX_RESERVED];
static unsigned nreserved;

int mem_reserve(uint64_t lo, uint64_t hi)
{
	if (nreserved == MAX_RESERVED || hi <= lo)
		return -1;
	reserved[nreserved].lo = lo & ~4095ull;
	reserved[nreserved].hi = (hi + 4095) & ~4095ull;
	nreserved++;
	return 0;
}

static void offer_piece(uint64_t lo, uint64_t hi);

/* Offer [lo, hi) minus the reserved ranges from index r on. */
static void offer_cut(uint64_t lo, uint64_t hi, unsigned r)
{
	for (; r < nreserved; r++) {
		if (reserved[r].hi <= lo || reserved[r].lo >= hi)
			continue;
		if (reserved[r].lo > lo)
			offer_cut(lo, reserved[r].lo, r + 1);
		if (reserved[r].hi < hi)
			offer_cut(reserved[r].hi, hi, r + 1);
		return;
	}
	offer_piece(lo, hi);
}

static void offer(uint64_t lo, uint64_t hi)
{
	offer_cut(lo, hi, 0);
}

/* Take [lo, hi) if it is the largest usable piece seen so far. */
static void offer_piece(uint64_t lo, uint64_t hi)
{
	uint64_t image_end = ((uint64_t)(uintptr_t)_end + 4095) & ~4095ull;
	if (hi > MAPPED_LIMIT)
		hi = MAPPED_LIMIT;
	if (lo < image_end)
		lo = image_end;
	lo = (lo + 4095) & ~4095ull;
	if (hi > lo && hi - lo > heap_end - heap_base) {
		heap_base = heap_cur = lo;
		heap_end = hi;
	}
}

bool mem_is_ram(uint64_t memmap_paddr, uint32_t entries, uint64_t lo, uint64_t hi)
{
	if (hi < lo || hi > MAPPED_LIMIT)
		return false;
	if (!memmap_paddr || !entries)
		return lo >= (1ull << 20); /* no map: trust the CMOS-sized RAM above 1 MiB */
	const struct hvm_memmap_entry *e = (const void *)(uintptr_t)memmap_paddr;
	for (uint32_t i = 0; i < entries && i < 128; i++)
		if (e[i].type == E820_RAM && e[i].addr <= lo && hi - e[i].addr <= e[i].size)
			return true;
	return false;
}

int mem_init(uint64_t memmap_paddr, uint32_t entries)
{
	if (memmap_paddr && entries) {
		const struct hvm_memmap_entry *e = (const void *)(uintptr_t)memmap_paddr;
		for (uint32_t i = 0; i < entries && i < 128; i++) {
			if (e[i].type != E820_RAM)
				continue;
			ram_bytes += e[i].size;
			offer(e[i].addr, e[i].addr + e[i].size);
		}
		source = "pvh-memmap";
	} else {
		outb(0x70, 0x80 | 0x34);
		uint64_t lo = inb(0x71);
		outb(0x70, 0x80 | 0x35);
		uint64_t hi = inb(0x71);
		uint64_t top = (16ull << 20) + ((hi << 8 | lo) << 16);
		ram_bytes = top;
		offer(1ull << 20, top);
		source = "cmos";
	}
	return heap_end > heap_base ? 0 : -1;
}

/* Any CPU may allocate (each vCPU's stack sets itself up): a spin lock,
 * held for a few instructions, interrupts being off. */
static volatile int heap_lock;

void *mem_alloc(size_t size, size_t align)
{
	if (!align)
		align = 64;
	while (__atomic_exchange_n(&heap_lock, 1, __ATOMIC_ACQUIRE))
		cpu_pause();
	void *r = NULL;
	uint64_t p = (heap_cur + align - 1) & ~(uint64_t)(align - 1);
	if (!(p < heap_cur || p > heap_end || size > heap_end - p)) {
		heap_cur = p + size;
		r = (void *)(uintptr_t)p;
	}
	__atomic_store_n(&heap_lock, 0, __ATOMIC_RELEASE);
	return r;
}

void mem_info(struct mem_info *mi)
{
	*mi = (struct mem_info){
		.ram = ram_bytes, .image_end = (uint64_t)(uintptr_t)_end, .heap_base = heap_base,
		.heap_used = heap_cur - heap_base, .heap_free = heap_end - heap_cur, .source = source,
	};
}
