/* dev_test.c — device pieces that need no privileges: spec parsing and its
 * errors, the stats printer, and the pcap recorder around a fake device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <pcap/pcap.h>

#include "dev/dev_impl.h"

static void expect_open_error(const char *spec, const struct dev_config *cfg, const char *needle)
{
	char err[256] = "";
	struct dev *d = (struct dev *)1;

	assert_int_equal(dev_open(spec, cfg, &d, err, sizeof(err)), -1);
	assert_null(d);
	if (strstr(err, needle) == NULL)
		fail_msg("spec '%s': error '%s' does not mention '%s'", spec ? spec : "(null)", err,
			 needle);
}

static void test_bad_specs(void **state)
{
	struct dev_config odd = {.num_slots = 100};
	(void)state;
	expect_open_error("", NULL, "expected tap:NAME");
	expect_open_error(NULL, NULL, "expected tap:NAME");
	expect_open_error("eth0", NULL, "expected tap:NAME");
	expect_open_error("tap:", NULL, "empty interface name");
	expect_open_error("xdp:", NULL, "empty interface name");
	expect_open_error("tap:0123456789abcdef", NULL, "longer than 15");
	expect_open_error("tap:a/b", NULL, "bad character");
	expect_open_error("tap:a:b", NULL, "bad character");
	expect_open_error("vale:x", NULL, "unknown kind 'vale'");
	expect_open_error(":x", NULL, "unknown kind ''");
	expect_open_error("tapx:x", NULL, "unknown kind 'tapx'");
	expect_open_error("tap:sk0", &odd, "power of two");
	expect_open_error("packet:skno0such", NULL, "no such interface");
	expect_open_error("xdp:skno0such", NULL, "no such interface");
}

static void test_random_mac(void **state)
{
	uint8_t a[SK_MAC_LEN], b[SK_MAC_LEN];
	(void)state;
	dev_random_mac(a);
	dev_random_mac(b);
	assert_int_equal(a[0] & 0x03, 0x02); /* local, unicast */
	assert_int_equal(b[0] & 0x03, 0x02);
	assert_memory_not_equal(a, b, SK_MAC_LEN); /* 2^-46 to fail */
}

/* A loopback device: tx_sync moves every handed-over frame to rx. */
struct fake {
	struct dev dev;
	struct dev_region region;
	int closed;
};

static int fake_rx_sync(struct dev *d)
{
	d->stats.rx_syncs++;
	return 0;
}

static int fake_tx_sync(struct dev *d)
{
	struct ring *tx = d->tx, *rx = d->rx;
	uint32_t h = ring_load(&tx->head), i = tx->tail - tx->num_slots, t = rx->tail;
	int n = 0;

	d->stats.tx_syncs++;
	for (; i != h; i++, n++) {
		struct ring_slot *s = ring_slot(tx, i), *r = ring_slot(rx, t++);
		memcpy(ring_buf(rx, r->buf_idx), ring_buf(tx, s->buf_idx), s->len);
		r->len = s->len;
		d->stats.tx_frames++;
	}
	ring_store(&tx->tail, h + tx->num_slots);
	ring_store(&rx->tail, t);
	return n;
}

static int fake_poll_fd(struct dev *d)
{
	(void)d;
	return 42;
}

static int *fake_closed;
static void fake_close(struct dev *d)
{
	struct fake *f = (struct fake *)d;
	*fake_closed = 1;
	dev_region_free(&f->region);
	free(f);
}

static const struct dev_ops fake_ops = {
	.kind = "fake",
	.rx_sync = fake_rx_sync,
	.tx_sync = fake_tx_sync,
	.poll_fd = fake_poll_fd,
	.close = fake_close,
};

static void test_pcap_records_both_ways(void **state)
{
	char path[] = "/tmp/skiff-dev-test-XXXXXX";
	char err[256];
	int closed = 0, fd = mkstemp(path);
	struct fake *f = calloc(1, sizeof(*f));
	struct dev *w;
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	assert_non_null(f);
	assert_int_equal(dev_region_alloc(&f->dev, &f->region, 8, err, sizeof(err)), 0);
	f->dev.ops = &fake_ops;
	f->dev.mtu = 1500;
	fake_closed = &closed;
	assert_int_equal(pcap_wrap(&f->dev, path, &w, err, sizeof(err)), 0);
	assert_ptr_equal(w->rx, f->dev.rx);
	assert_ptr_equal(w->tx, f->dev.tx);
	assert_int_equal(dev_poll_fd(w), 42);

	/* three frames out (tx_sync records them), back in (rx_sync records) */
	for (uint32_t k = 0; k < 3; k++) {
		struct ring_slot *s = ring_slot(w->tx, w->tx->head);
		memset(ring_buf(w->tx, s->buf_idx), (int)k + 1, 60);
		s->len = (uint16_t)(60 + k);
		ring_store(&w->tx->head, w->tx->head + 1);
	}
	assert_int_equal(dev_tx_sync(w), 3);
	assert_int_equal(dev_rx_sync(w), 0); /* fake reports 0, but tail moved */
	assert_int_equal(w->stats.tx_frames, 3); /* mirrored from the inner device */
	assert_int_equal(w->stats.rx_syncs, 1);
	dev_close(w);
	assert_int_equal(closed, 1);

	char perr[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, perr);
	assert_non_null(p);
	assert_int_equal(pcap_datalink(p), DLT_EN10MB);
	struct pcap_pkthdr *h;
	const u_char *data;
	int n = 0;
	while (pcap_next_ex(p, &h, &data) == 1) {
		assert_int_equal(h->caplen, 60 + n % 3);
		assert_int_equal(data[0], n % 3 + 1);
		n++;
	}
	assert_int_equal(n, 6);
	pcap_close(p);
	unlink(path);
}

static void test_print_stats(void **state)
{
	struct dev d;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	(void)state;

	memset(&d, 0, sizeof(d));
	d.ops = &fake_ops; /* no lower_drops: that line is left out */
	d.stats.rx_frames = 7;
	d.stats.tx_syscalls = 3;
	dev_print_stats(&d, f);
	fclose(f);
	assert_non_null(strstr(buf, "dev.rx_frames 7\n"));
	assert_non_null(strstr(buf, "dev.tx_syscalls 3\n"));
	assert_non_null(strstr(buf, "dev.rx_drops 0\n"));
	assert_null(strstr(buf, "dev.rx_lower_drops"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_specs),
		cmocka_unit_test(test_random_mac),
		cmocka_unit_test(test_pcap_records_both_ways),
		cmocka_unit_test(test_print_stats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
