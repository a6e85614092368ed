/* fuzz_tls_wolfssl.c — fuzz_tls.c's target on the wolfSSL engine
 * (tls/tls_wolfssl.c, the unikernel's TLS 1.3): the same input format,
 * the same checks, the same seeds (fuzz/seeds/tls_wolfssl: ClientHellos of
 * TLS 1.2 and 1.3).  Build: make build/fuzz/fuzz_tls_wolfssl. */
#define FUZZ_TLS_ENGINE "wolfssl"
#include "fuzz_tls.c"
