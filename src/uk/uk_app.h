/* uk_app.h — an application image that brings its own command-line words
 * and setup (the reverse proxy's; hosted, `skiff proxy`'s flags are a
 * proxy route of the configuration model instead).  An image is skiff-uk.elf linked with one
 * object defining `uk_app` (weak in uk_main.c; mk/unikernel.mk builds
 * build/skiff-proxy-uk.elf with uk/uk_proxy.c).  Without it the guest
 * is the static server, or the application of `skiff_app` (http/app.h).
 *
 * Order at boot (uk_main.c): cmd() gives the option table the command
 * line is read with (the guest's own words and the application's, the
 * same entries of conf/opts.c the hosted command uses), then setup runs
 * with the engine's config final, before TCP and the loop are sized, so
 * the application may ask for more sockets and timers (its own
 * connections on skiff's TCP); late runs once everything else has its
 * memory.  Memory comes from env->alloc, the guest's
 * bump allocator: it never returns NULL (a request that does not fit
 * stops the boot with the sizes and the hint). */
#ifndef APPS_UK_APP_H
#define APPS_UK_APP_H

#include "../http/app.h"
#include "../conf/opts.h"

struct uk_app_env {
	/* Never NULL: out of memory stops the boot, naming `what` and `hint`
	 * (the word to lower, or "give the guest more --mem"). */
	void *(*alloc)(const char *what, size_t size, const char *hint);
	/* Wall-clock seconds = the loop's now in seconds + this (the RTC's
	 * reading at boot, advanced by the TSC). */
	int64_t wall_offset;
};

struct uk_app_hooks {
	/* The table for the command line: a superset of opt_cmd_uk's words. */
	const struct opt_cmd *(*cmd)(void);
	/* Filled by setup, used from http_app_init on (its address is taken
	 * before; its content must be final when setup returns). */
	const struct http_app_def *def;
	/* After parsing: set up, maybe change cfg, ask for *extra_socks TCP
	 * sockets and timers beyond one per connection.  0, or -1 with the
	 * reason printed (the boot stops). */
	int (*setup)(const struct opts *o, struct http_app_config *cfg, uint32_t *extra_socks,
		     const struct uk_app_env *env);
	/* The counters (metrics=, stats), after the engine's. */
	void (*stats)(void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx);
	/* After every other allocation, before the guest is ready (may be
	 * NULL): what may take the rest of the heap (the proxy's cache), so
	 * that a size too big for --mem is named as the one to lower.  0, or
	 * -1 with the reason printed. */
	int (*late)(const struct opts *o, const struct uk_app_env *env);
	/* After http_app_stop: close what the application holds. */
	void (*stop)(void);
	/* How to list the words, for the bad-command-line line
	 * ("skiff vm --proxy -- help"). */
	const char *help_cmd;
};

#endif
