/* proxy_cli.c — `skiff proxy`: the reverse proxy (http/proxy.h) as a
 * front end of the sites runtime (host/sites_host.h).  Its flags are one
 * site of the configuration model whose one route is
 * `route / { proxy ...; }` with the upstream flags as its directives
 * (conf/sites_flags.h), so it runs on the same engine, workers, drain,
 * reload and counters as `skiff serve`, on --stack linux and skiff alike.
 *
 * What is left here is hosted alone: upstreams given by name are resolved
 * once, at start (getaddrinfo: /etc/hosts, then DNS as nsswitch says),
 * and handed to the model as addresses.
 *
 * --workers N: each worker its own proxy (its exchanges, its pool of
 * upstream connections per upstream, its health counts) and 1/N of
 * --cache; nothing is shared between them, so a key may be fetched once
 * per worker (docs/proxy.md). */
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "../conf/opts.h"
#include "../host/cli.h"
#include "../host/sites_host.h"

/* The first IPv4 address of name, else its first IPv6 one, so that a
 * name with both (localhost) does not depend on the resolver's order.  A
 * name that does not resolve is a usage error (exit 2). */
static struct sk_addr resolve_upstream(const char *name)
{
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	int rc = getaddrinfo(name, NULL, &hints, &res);
	if (rc != 0)
		cli_usage_error("proxy", "--upstream: cannot resolve '%s': %s", name,
				gai_strerror(rc));
	const struct addrinfo *v6 = NULL, *v4 = NULL;
	for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET && !v4)
			v4 = ai;
		else if (ai->ai_family == AF_INET6 && !v6)
			v6 = ai;
	}
	struct sk_addr a = {{0}};
	if (v4) {
		const struct sockaddr_in *sin = (const void *)v4->ai_addr;
		a = sk_addr_v4(ntohl(sin->sin_addr.s_addr));
	} else if (v6) {
		const struct sockaddr_in6 *sin6 = (const void *)v6->ai_addr;
		a = sk_addr_v6(sin6->sin6_addr.s6_addr);
	}
	freeaddrinfo(res);
	if (sk_addr_is_any(&a))
		cli_usage_error("proxy", "--upstream: '%s' has no IPv4 or IPv6 address", name);
	return a;
}

int cmd_proxy(int argc, char **argv)
{
	static struct opts o;
	cli_parse(&o, &opt_cmd_proxy, argc, argv);
	if (!opt_given(&o, OPT_UPSTREAM))
		cli_usage_error("proxy", "--upstream ADDR:PORT[,ADDR:PORT...] is required");
	/* --upstream again, every name replaced by its address. */
	static char literal[OPT_ENDPOINTS_MAX * OPT_ADDR_STRLEN];
	struct opt_endpoint ep[OPT_ENDPOINTS_MAX];
	int n = opt_parse_endpoints_any(opt_str(&o, OPT_UPSTREAM), ep, OPT_ENDPOINTS_MAX);
	size_t len = 0;
	for (int i = 0; i < n; i++) {
		struct sk_addr a = ep[i].name[0] ? resolve_upstream(ep[i].name) : ep[i].addr;
		char t[OPT_ADDR_STRLEN];
		opt_format_addr(&a, ep[i].port, t);
		len += (size_t)snprintf(literal + len, sizeof(literal) - len, "%s%s", i ? "," : "", t);
	}
	o.v[OPT_UPSTREAM].str = literal;
	return sites_host_run(&o, NULL, "proxy");
}
