/* wire.c — error names and the one shared constant of the wire layer. */
#include "wire.h"
#include "eth.h"

const uint8_t eth_broadcast[SK_MAC_LEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* Indexed by -err.  Names are short and stable: net/iface uses them as
 * counter labels, so renaming one changes every stats dump. */
static const char *const wire_err_names[WIRE_NERR] = {
	[-WIRE_OK] = "ok",
	[-WIRE_ETRUNC] = "trunc",
	[-WIRE_EBADLEN] = "badlen",
	[-WIRE_ECSUM] = "csum",
	[-WIRE_EVERSION] = "version",
	[-WIRE_EUNSUP] = "unsup",
	[-WIRE_EOPT] = "opt",
	[-WIRE_EFRAG] = "frag",
	[-WIRE_EBADADDR] = "badaddr",
	[-WIRE_EEXT] = "ext",
	[-WIRE_ELIMIT] = "limit",
	[-WIRE_EROUTE] = "route",
	[-WIRE_EHOPLIMIT] = "hoplimit",
	[-WIRE_ECODE] = "code",
};

const char *wire_strerror(int err)
{
	if (err > 0 || err <= -WIRE_NERR)
		return "unknown";
	return wire_err_names[-err];
}
