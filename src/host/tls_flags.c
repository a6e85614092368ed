/* tls_flags.c — see tls_flags.h. */
#include "tls_flags.h"

#include "cli.h"

bool tls_flags_wanted(const struct opts *o)
{
	bool cert = opt_given(o, OPT_TLS_CERT), key = opt_given(o, OPT_TLS_KEY);
	const char *cmd = o->cmd->name;
	if (cert != key)
		cli_usage_error(cmd, "--%s needs --%s too", cert ? "tls-cert" : "tls-key",
				cert ? "tls-key" : "tls-cert");
	if (!cert && (opt_given(o, OPT_TLS_PORT) || opt_given(o, OPT_TLS_HANDSHAKE_TIMEOUT) ||
		      opt_given(o, OPT_TLS_TICKET_ROTATE) || opt_given(o, OPT_TLS_REDIRECT) ||
		      opt_given(o, OPT_TLS_SNI) || opt_given(o, OPT_TLS_ALPN)))
		cli_usage_error(cmd, "--tls-port, --tls-handshake-timeout, --tls-ticket-rotate, "
				     "--tls-redirect, --tls-sni and --tls-alpn need --tls-cert and "
				     "--tls-key");
	if (cert && opt_num(o, OPT_TLS_PORT) == opt_num(o, OPT_PORT))
		cli_usage_error(cmd, "--tls-port %llu is --port too: give each its own",
				(unsigned long long)opt_num(o, OPT_PORT));
	return cert;
}
