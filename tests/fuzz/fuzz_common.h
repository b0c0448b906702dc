/* SPDX-License-Identifier: MIT */
/*
 * fuzz_common.h - shared helpers of the fuzz targets: the libFuzzer entry
 * points, an invariant check that aborts (libFuzzer and the replay driver
 * both report an abort as a finding) and a byte reader that never fails
 * (past the end it yields zeros), so every input is a valid program.
 */
#ifndef MCC_FUZZ_COMMON_H
#define MCC_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MCC_FUZZ_CHECK(cond, ...)                                                          \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "FUZZ INVARIANT VIOLATED %s:%d: %s: ", __FILE__,   \
			        __LINE__, #cond);                                          \
			fprintf(stderr, __VA_ARGS__);                                      \
			fputc('\n', stderr);                                               \
			abort();                                                           \
		}                                                                          \
	} while (0)

struct mcc_fuzz_in {
	const uint8_t *p;
	size_t left;
};

static inline uint8_t mcc_fuzz_u8(struct mcc_fuzz_in *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

static inline uint16_t mcc_fuzz_u16(struct mcc_fuzz_in *in)
{
	uint16_t v = mcc_fuzz_u8(in);
	return (uint16_t)(v | (uint16_t)mcc_fuzz_u8(in) << 8);
}

static inline uint32_t mcc_fuzz_u32(struct mcc_fuzz_in *in)
{
	uint32_t v = mcc_fuzz_u16(in);
	return v | (uint32_t)mcc_fuzz_u16(in) << 16;
}

static inline uint64_t mcc_fuzz_u64(struct mcc_fuzz_in *in)
{
	uint64_t v = mcc_fuzz_u32(in);
	return v | (uint64_t)mcc_fuzz_u32(in) << 32;
}

#endif
