/* fuzz_tls_gnutls.c — fuzz_tls.c's target on the GnuTLS engine
 * (tls/tls_gnutls.c): the same input format, the same checks, the same
 * seeds (fuzz/seeds/tls_gnutls: ClientHellos of TLS 1.2 and 1.3).  Build:
 * make build/fuzz/fuzz_tls_gnutls. */
#define FUZZ_TLS_ENGINE "gnutls"
#include "fuzz_tls.c"
