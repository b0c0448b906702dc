/* SPDX-License-Identifier: MIT */
/*
 * engine_map.c - the SDK's small hash map keyed by two 64-bit words: QPs and
 * CQs to routes (engine_route.c), live batch ids (engine.c). Callers hold
 * their own lock; nothing here is on the fast path.
 */
#include <stdlib.h>

#include "engine_map.h"

static unsigned map_hash(uint64_t a, uint64_t b)
{
	uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
	return (unsigned)(h >> 56) % MCC_ENG_BUCKETS;
}

struct mcc_eng_kv **mcc__eng_map_find(struct mcc_eng_map *m, uint64_t a, uint64_t b)
{
	struct mcc_eng_kv **pp = &m->bucket[map_hash(a, b)];
	while (*pp && ((*pp)->a != a || (*pp)->b != b))
		pp = &(*pp)->next;
	return pp;
}

struct mcc_eng_kv *mcc__eng_map_insert(struct mcc_eng_kv **slot, uint64_t a, uint64_t b)
{
	struct mcc_eng_kv *kv = calloc(1, sizeof(*kv));
	if (!kv)
		return NULL;
	kv->a = a;
	kv->b = b;
	kv->next = *slot;
	*slot = kv;
	return kv;
}

void mcc__eng_map_erase(struct mcc_eng_kv **slot)
{
	struct mcc_eng_kv *kv = *slot;
	*slot = kv->next;
	free(kv);
}

void mcc__eng_map_clear(struct mcc_eng_map *m)
{
	for (unsigned i = 0; i < MCC_ENG_BUCKETS; i++)
		while (m->bucket[i])
			mcc__eng_map_erase(&m->bucket[i]);
}
