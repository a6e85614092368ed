/* guest_main.c — the main of build/vm/skiff-serve-static, the HTTP app that
 * the Linux benchmark guest runs (bench/vm/, issue 7).
 *
 * It is `skiff serve` and nothing else: the same serve.c, http/server.c and
 * loop/loop_linux.c as build/skiff, linked statically against libc only.
 * The full build/skiff also carries the AF_XDP and pcap devices, whose
 * libraries (libxdp, libbpf, libpcap, libelf) have no place in an
 * initramfs; `skiff serve --stack linux` never uses them.  So this main
 * offers the one command, with the same arguments:
 *
 *   skiff-serve-static serve --stack linux --port 80
 *   skiff-serve-static --stack linux --port 80        (the same) */
#include <stdio.h>
#include <string.h>

#include "../../src/apps/cli.h"
#include "../../src/apps/serve_skiff.h"

/* serve.c also offers --stack skiff, whose devices this build leaves out:
 * these stand in for apps/serve_skiff.c and apps/hoststack.c (the stack
 * options; serve_skiff_open below refuses the stack itself), so neither
 * is linked and nothing pulls in libxdp or libpcap. */
void hoststack_options(struct hoststack_config *cfg, struct opts *o)
{
	(void)cfg;
	(void)o;
}
struct loop *serve_skiff_open(const struct serve_skiff_config *cfg, char *err, size_t errlen)
{
	(void)cfg;
	snprintf(err, errlen, "--stack skiff is not in this build (use --stack linux)");
	return NULL;
}
void serve_skiff_describe(struct loop *l, char *buf, size_t len)
{
	(void)l;
	snprintf(buf, len, " dev=none");
}
void serve_skiff_announce(struct loop *l)
{
	(void)l;
}
void serve_skiff_print_stats(struct loop *l, FILE *f)
{
	(void)l;
	(void)f;
}
const struct dev_stats *serve_skiff_dev_stats(struct loop *l)
{
	(void)l;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "serve"))
		return cmd_serve(argc - 1, argv + 1);
	return cmd_serve(argc, argv);
}
