/* rlock_test.c — rlock.h hosted, pthreads standing in for the vCPUs
 * (their `me` is what the kernel passes: an index + 1): a take nests and
 * only the outermost give frees the lock; another owner then takes it;
 * a spin limit takes a held lock over, 0 waits until it is given back;
 * two threads counting under the lock lose no increment and the lock's
 * own counters are exact.  Runs under ASan+UBSan in `make asan` too. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "plat/kvm/rlock.h"

static void test_nests_and_outermost_frees(void **state)
{
	(void)state;
	struct rlock l = {0};
	rlock_take(&l, 1, 0);
	rlock_take(&l, 1, 0);
	rlock_take(&l, 1, 0);
	assert_int_equal(l.owner, 1);
	assert_int_equal(l.depth, 3);
	assert_int_equal(l.taken, 1); /* only the outermost counts */
	rlock_give(&l);
	rlock_give(&l);
	assert_int_equal(l.owner, 1); /* still held: one take left */
	assert_int_equal(l.depth, 1);
	rlock_give(&l);
	assert_int_equal(l.owner, 0);
	assert_int_equal(l.depth, 0);
	rlock_take(&l, 2, 0); /* free: another vCPU takes it at once */
	assert_int_equal(l.owner, 2);
	assert_int_equal(l.depth, 1);
	assert_int_equal(l.taken, 2);
	assert_int_equal(l.contended, 0);
	rlock_give(&l);
	assert_int_equal(l.owner, 0);
}

static void test_limit_takes_over(void **state)
{
	(void)state;
	struct rlock l = {0};
	rlock_take(&l, 1, 0);
	rlock_take(&l, 1, 0);
	/* Held by 1 (which never gives it back here): 2 waits 1000 pauses,
	 * then holds it, as the console does after a wedged vCPU. */
	rlock_take(&l, 2, 1000);
	assert_int_equal(l.owner, 2);
	assert_int_equal(l.depth, 1);
	assert_int_equal(l.taken, 2);
	assert_int_equal(l.contended, 1);
	rlock_take(&l, 2, 1000); /* and nests as its own */
	assert_int_equal(l.depth, 2);
	rlock_give(&l);
	rlock_give(&l);
	assert_int_equal(l.owner, 0);
}

/* ---- two threads ---- */

static void pause_ms(long ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000L};
	nanosleep(&ts, NULL);
}

#define ROUNDS 20
static struct rlock wl;
static int trying; /* atomic: the waiter's round, set before it takes */
static int done;   /* atomic: rounds the waiter finished */
static int held_by_holder; /* written by both only with wl held */

/* The waiter: each round, says it is about to take, then takes (limit 0:
 * waits until the holder gives it back) and finds the holder's write. */
static void *waiter(void *arg)
{
	uint64_t *seen = arg;
	for (int r = 1; r <= ROUNDS; r++) {
		while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) != r - 1 ||
		       __atomic_load_n(&wl.owner, __ATOMIC_RELAXED) != 1)
			pause_ms(1);
		__atomic_store_n(&trying, r, __ATOMIC_RELEASE);
		rlock_take(&wl, 2, 0);
		*seen += held_by_holder == r; /* what 1 wrote before giving it */
		rlock_give(&wl);
		__atomic_store_n(&done, r, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void test_waits_for_the_holder(void **state)
{
	(void)state;
	uint64_t seen = 0;
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, waiter, &seen), 0);
	for (int r = 1; r <= ROUNDS; r++) {
		while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) != r - 1)
			pause_ms(1);
		rlock_take(&wl, 1, 0);
		while (__atomic_load_n(&trying, __ATOMIC_ACQUIRE) != r)
			pause_ms(1);
		pause_ms(10); /* the waiter is in rlock_take, spinning */
		assert_int_equal(wl.owner, 1); /* it has not taken it */
		held_by_holder = r;
		rlock_give(&wl);
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(wl.owner, 0);
	assert_int_equal(seen, ROUNDS);
	assert_int_equal(wl.taken, 2 * ROUNDS);
	/* The waiter found it held unless the machine kept it off a CPU
	 * for the whole 10 ms, every round. */
	assert_true(wl.contended >= 1);
	assert_true(wl.contended <= ROUNDS);
}

#define STEPS 200000
static struct rlock cl;
/* Written only under cl; volatile so that each increment is a load and a
 * store of its own, which two threads at once would interleave (and one
 * with a pause between them, for a wider window). */
static volatile uint64_t count;
static pthread_barrier_t start;

static void *counter(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	pthread_barrier_wait(&start); /* both at once */
	for (int i = 0; i < STEPS; i++) {
		rlock_take(&cl, me, 0);
		rlock_take(&cl, me, 0); /* nested, as calloc in malloc */
		count++;
		rlock_give(&cl);
		uint64_t c = count; /* a window for the other thread to write */
		__builtin_ia32_pause();
		count = c + 1;
		rlock_give(&cl);
	}
	return NULL;
}

static void test_two_threads_count_exactly(void **state)
{
	(void)state;
	pthread_t a, b;
	assert_int_equal(pthread_barrier_init(&start, NULL, 2), 0);
	assert_int_equal(pthread_create(&a, NULL, counter, (void *)(uintptr_t)1), 0);
	assert_int_equal(pthread_create(&b, NULL, counter, (void *)(uintptr_t)2), 0);
	assert_int_equal(pthread_join(a, NULL), 0);
	assert_int_equal(pthread_join(b, NULL), 0);
	assert_int_equal(count, 4ull * STEPS);
	assert_int_equal(cl.taken, 2ull * STEPS);
	assert_true(cl.contended <= cl.taken);
	assert_int_equal(cl.owner, 0);
	assert_int_equal(cl.depth, 0);
	pthread_barrier_destroy(&start);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nests_and_outermost_frees),
		cmocka_unit_test(test_limit_takes_over),
		cmocka_unit_test(test_waits_for_the_holder),
		cmocka_unit_test(test_two_threads_count_exactly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
