/* SPDX-License-Identifier: MIT */
/*
 * grow.h - room for one more element in an array that doubles as it grows,
 * for the fabric model, the executors and the host helpers (slow paths).
 */
#ifndef MCC_HOST_GROW_H
#define MCC_HOST_GROW_H

#include <stdlib.h>

/* `arr` holds n elements of `size` bytes in *cap. Returns arr when there is
 * room for one more, else arr reallocated to twice *cap (`first` when
 * empty) with *cap updated, or NULL (arr and *cap untouched) when memory
 * runs out. The caller stores the result. */
static inline void *mcc_grow(void *arr, size_t *cap, size_t n, size_t size, size_t first)
{
	if (n < *cap)
		return arr;
	size_t nc = *cap ? *cap * 2 : first;
	void *p = realloc(arr, nc * size);
	if (p)
		*cap = nc;
	return p;
}

#endif
