/* SPDX-License-Identifier: MIT */
/* exec.c - threaded and discrete-event executors (see exec.h). */
#include "exec.h"

#include "../common/grow.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct mcc_actor {
	mcc_exec *ex;
	const char *name;
	mcc_actor_fn fn;
	void *arg;
	/* sim */
	uint64_t at;  /* scheduled time, MCC_EXEC_PARK when parked */
	uint64_t seq;
	size_t hidx;  /* heap index, SIZE_MAX when not in the heap */
	/* threaded */
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	_Atomic uint64_t wake_at;
	struct mcc_actor *next;
};

struct mcc_exec {
	enum mcc_exec_kind kind;
	/* sim: virtual time. Only the thread in mcc_exec_run writes it, but a
	 * host clock may be read on any thread (the engine's stat publisher
	 * reads it), so it is atomic; relaxed, as a clock read orders nothing. */
	_Atomic uint64_t now;
	uint64_t seq;
	uint64_t rng;
	_Atomic uint64_t steps;
	struct mcc_actor *actors;
	struct mcc_actor **heap;
	size_t nheap, capheap;
	/* threaded */
	struct timespec t0;
	_Atomic int stop;
	pthread_mutex_t rng_mu;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

mcc_exec *mcc_exec_create(enum mcc_exec_kind kind, uint64_t seed)
{
	mcc_exec *ex = calloc(1, sizeof(*ex));
	if (!ex)
		return NULL;
	ex->kind = kind;
	ex->rng = seed ? seed * 0x2545f4914f6cdd1dull : 88172645463325252ull;
	pthread_mutex_init(&ex->rng_mu, NULL);
	clock_gettime(CLOCK_MONOTONIC, &ex->t0);
	return ex;
}

void mcc_exec_destroy(mcc_exec *ex)
{
	if (!ex)
		return;
	for (struct mcc_actor *a = ex->actors, *n; a; a = n) {
		n = a->next;
		pthread_mutex_destroy(&a->mu);
		pthread_cond_destroy(&a->cv);
		free(a);
	}
	free(ex->heap);
	pthread_mutex_destroy(&ex->rng_mu);
	free(ex);
}

enum mcc_exec_kind mcc_exec_kind(const mcc_exec *ex)
{
	return ex->kind;
}

uint64_t mcc_exec_now(mcc_exec *ex)
{
	if (ex->kind == MCC_EXEC_SIM)
		return atomic_load_explicit(&ex->now, memory_order_relaxed);
	uint64_t t0 = (uint64_t)ex->t0.tv_sec * 1000000000ull + (uint64_t)ex->t0.tv_nsec;
	return mono_ns() - t0 + 1;
}

uint64_t mcc_exec_clock(void *ex)
{
	return mcc_exec_now(ex);
}

uint64_t mcc_exec_steps(const mcc_exec *ex)
{
	return atomic_load(&ex->steps);
}

uint64_t mcc_exec_rand(mcc_exec *ex)
{
	pthread_mutex_lock(&ex->rng_mu);
	uint64_t x = ex->rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	ex->rng = x;
	pthread_mutex_unlock(&ex->rng_mu);
	return x;
}

/* ---------------------------------------------------------------- sim heap */

static int a_less(const struct mcc_actor *a, const struct mcc_actor *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void h_set(mcc_exec *ex, size_t i, struct mcc_actor *a)
{
	ex->heap[i] = a;
	a->hidx = i;
}

static void h_up(mcc_exec *ex, size_t i)
{
	struct mcc_actor *a = ex->heap[i];
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!a_less(a, ex->heap[p]))
			break;
		h_set(ex, i, ex->heap[p]);
		i = p;
	}
	h_set(ex, i, a);
}

static void h_down(mcc_exec *ex, size_t i)
{
	struct mcc_actor *a = ex->heap[i];
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= ex->nheap)
			break;
		if (c + 1 < ex->nheap && a_less(ex->heap[c + 1], ex->heap[c]))
			c++;
		if (!a_less(ex->heap[c], a))
			break;
		h_set(ex, i, ex->heap[c]);
		i = c;
	}
	h_set(ex, i, a);
}

static void sim_schedule(mcc_exec *ex, struct mcc_actor *a, uint64_t at)
{
	if (at == MCC_EXEC_PARK)
		return;
	if (a->hidx != SIZE_MAX) {
		if (at >= a->at)
			return;
		a->at = at;
		a->seq = ex->seq++;
		h_up(ex, a->hidx);
		return;
	}
	struct mcc_actor **h = mcc_grow(ex->heap, &ex->capheap, ex->nheap, sizeof(*h), 64);
	if (!h)
		abort();
	ex->heap = h;
	a->at = at;
	a->seq = ex->seq++;
	h_set(ex, ex->nheap++, a);
	h_up(ex, a->hidx);
}

static struct mcc_actor *sim_pop(mcc_exec *ex)
{
	struct mcc_actor *a = ex->heap[0];
	a->hidx = SIZE_MAX;
	if (--ex->nheap) {
		h_set(ex, 0, ex->heap[ex->nheap]);
		h_down(ex, 0);
	}
	return a;
}

mcc_actor *mcc_exec_add(mcc_exec *ex, const char *name, mcc_actor_fn fn, void *arg,
                        uint64_t start_ns)
{
	struct mcc_actor *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->ex = ex;
	a->name = name;
	a->fn = fn;
	a->arg = arg;
	a->hidx = SIZE_MAX;
	a->at = MCC_EXEC_PARK;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	atomic_store(&a->wake_at, start_ns);
	/* append (registration order is part of the determinism) */
	struct mcc_actor **pp = &ex->actors;
	while (*pp)
		pp = &(*pp)->next;
	*pp = a;
	if (ex->kind == MCC_EXEC_SIM)
		sim_schedule(ex, a, start_ns);
	return a;
}

void mcc_exec_wake(mcc_actor *a, uint64_t at)
{
	mcc_exec *ex = a->ex;
	if (ex->kind == MCC_EXEC_SIM) {
		uint64_t now = mcc_exec_now(ex);
		sim_schedule(ex, a, at < now ? now : at);
		return;
	}
	uint64_t cur = atomic_load(&a->wake_at);
	while (at < cur && !atomic_compare_exchange_weak(&a->wake_at, &cur, at))
		;
	if (at <= cur) {
		pthread_mutex_lock(&a->mu);
		pthread_cond_signal(&a->cv);
		pthread_mutex_unlock(&a->mu);
	}
}

/* ---------------------------------------------------------------- threaded */

static void *actor_thread(void *p)
{
	struct mcc_actor *a = p;
	mcc_exec *ex = a->ex;
	while (!atomic_load(&ex->stop)) {
		uint64_t now = mcc_exec_now(ex);
		uint64_t due = atomic_load(&a->wake_at);
		if (due > now) {
			/* sleep until due (bounded, so stop is seen) */
			uint64_t wait = due == MCC_EXEC_PARK ? 2000000 : due - now;
			if (wait > 2000000)
				wait = 2000000;
			if (wait < 20000) { /* short: yield-spin like a busy poller */
				struct timespec ts = {0, (long)wait};
				nanosleep(&ts, NULL);
				continue;
			}
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			uint64_t ns = (uint64_t)ts.tv_nsec + wait;
			ts.tv_sec += (time_t)(ns / 1000000000ull);
			ts.tv_nsec = (long)(ns % 1000000000ull);
			pthread_mutex_lock(&a->mu);
			if (atomic_load(&a->wake_at) > mcc_exec_now(ex))
				pthread_cond_timedwait(&a->cv, &a->mu, &ts);
			pthread_mutex_unlock(&a->mu);
			continue;
		}
		atomic_store(&a->wake_at, MCC_EXEC_PARK);
		uint64_t next = a->fn(a->arg, now);
		atomic_fetch_add(&ex->steps, 1);
		uint64_t cur = atomic_load(&a->wake_at);
		while (next < cur && !atomic_compare_exchange_weak(&a->wake_at, &cur, next))
			;
	}
	return NULL;
}

uint64_t mcc_exec_run(mcc_exec *ex, uint64_t until, int (*done)(void *), void *arg)
{
	if (ex->kind == MCC_EXEC_SIM) {
		uint64_t now = mcc_exec_now(ex);
		while (ex->nheap) {
			if (done && done(arg))
				break;
			struct mcc_actor *a = ex->heap[0];
			if (a->at > until)
				break;
			sim_pop(ex);
			if (a->at > now) {
				now = a->at;
				atomic_store_explicit(&ex->now, now, memory_order_relaxed);
			}
			uint64_t next = a->fn(a->arg, now);
			ex->steps++;
			if (next != MCC_EXEC_PARK && next <= now)
				next = now + 1; /* a step always costs time */
			sim_schedule(ex, a, next);
		}
		if (now < until && !(done && done(arg)) && until != UINT64_MAX) {
			now = until;
			atomic_store_explicit(&ex->now, now, memory_order_relaxed);
		}
		return now;
	}
	atomic_store(&ex->stop, 0);
	for (struct mcc_actor *a = ex->actors; a; a = a->next)
		if (pthread_create(&a->tid, NULL, actor_thread, a) != 0)
			abort();
	for (;;) {
		if (mcc_exec_now(ex) >= until || (done && done(arg)))
			break;
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
	}
	atomic_store(&ex->stop, 1);
	for (struct mcc_actor *a = ex->actors; a; a = a->next) {
		pthread_mutex_lock(&a->mu);
		pthread_cond_signal(&a->cv);
		pthread_mutex_unlock(&a->mu);
	}
	for (struct mcc_actor *a = ex->actors; a; a = a->next)
		pthread_join(a->tid, NULL);
	return mcc_exec_now(ex);
}
