/* SPDX-License-Identifier: MIT */
/* engine_map.h - the SDK's two-word-key hash map (engine_map.c). */
#ifndef MCC_ENGINE_MAP_H
#define MCC_ENGINE_MAP_H

#include <stdint.h>

#include "mcc_internal.h"

#define MCC_ENG_BUCKETS 256u
struct mcc_eng_kv {
	struct mcc_eng_kv *next;
	uint64_t a, b;
	uint64_t v;
	void *p;
};
struct mcc_eng_map {
	struct mcc_eng_kv *bucket[MCC_ENG_BUCKETS];
};
/* The link that holds (a, b), or the NULL link at the end of its chain. */
MCC_HIDDEN struct mcc_eng_kv **mcc__eng_map_find(struct mcc_eng_map *m, uint64_t a, uint64_t b);
/* Insert at *slot (from find); NULL on allocation failure. */
MCC_HIDDEN struct mcc_eng_kv *mcc__eng_map_insert(struct mcc_eng_kv **slot, uint64_t a, uint64_t b);
/* Unlink and free *slot. */
MCC_HIDDEN void mcc__eng_map_erase(struct mcc_eng_kv **slot);
MCC_HIDDEN void mcc__eng_map_clear(struct mcc_eng_map *m);

#endif
