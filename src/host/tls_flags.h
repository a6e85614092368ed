/* tls_flags.h — the --tls-* flags of a one-site command line (`skiff
 * serve`, `skiff proxy`, an application binary) checked together, before
 * they become the model's TLS listener (conf/sites_flags.h).  A file of
 * its own so that a build without TLS (the Linux benchmark guest,
 * bench/vm/guest_main.c) can put its refusal in its place. */
#ifndef APPS_TLS_FLAGS_H
#define APPS_TLS_FLAGS_H

#include <stdbool.h>

#include "../conf/opts.h"

/* --tls-cert and --tls-key given together (true), or neither (false);
 * the other --tls-* only with them, and --tls-port not --port.  A
 * mistake exits 2 with its message (cli_usage_error), as a bad option
 * does. */
bool tls_flags_wanted(const struct opts *o);

#endif
