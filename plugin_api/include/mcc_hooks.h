/* SPDX-License-Identifier: MIT */
/*
 * mcc_hooks.h - engine-side hook macros, the compile-time switch of the RFC
 * (MOONCAKE_ENABLE_ADAPTIVE_CC; here MCC_ENABLE_ADAPTIVE_CC, set by
 * `./configure --enable-adaptive-cc` and propagated by `pkg-config mcc`).
 *
 * With the switch off the hooks compile to nothing and no controller field
 * exists in engine structures:
 *
 *     struct slice { ...; MCC_FIELD(struct mcc_permit_v1 permit;) };
 *     MCC_HOOK(if (admit(...) != MCC_ADMIT) continue;)
 *
 * Every object that includes this header carries a marker for its setting;
 * linking objects compiled ON with objects compiled OFF into one executable
 * or library fails at link time with a duplicate definition of
 * `mcc_cc_layout_marker` (the RFC: ON and OFF objects must not be mixed).
 */
#ifndef MCC_HOOKS_H
#define MCC_HOOKS_H

#if defined(MCC_ENABLE_ADAPTIVE_CC) && MCC_ENABLE_ADAPTIVE_CC
#include "mcc_loader.h"
#define MCC_CC_COMPILED_IN 1
#define MCC_HOOK(...) __VA_ARGS__
#define MCC_FIELD(...) __VA_ARGS__
#define MCC_NOCC(...)
#define MCC_LAYOUT_GROUP_ "mcc_cc_on"
#define MCC_LAYOUT_VALUE_ "1"
#else
#define MCC_CC_COMPILED_IN 0
#define MCC_HOOK(...)
#define MCC_FIELD(...)
#define MCC_NOCC(...) __VA_ARGS__
#define MCC_LAYOUT_GROUP_ "mcc_cc_off"
#define MCC_LAYOUT_VALUE_ "0"
#endif

#if defined(__ELF__) && !defined(MCC_NO_LAYOUT_MARKER)
/* One COMDAT group per setting, both defining the same hidden symbol: objects
 * of one setting fold into one definition, mixed settings collide. */
__asm__(".pushsection .data.mcc_cc_layout_marker,\"awG\",@progbits," MCC_LAYOUT_GROUP_ ",comdat\n"
        ".globl mcc_cc_layout_marker\n"
        ".hidden mcc_cc_layout_marker\n"
        "mcc_cc_layout_marker: .byte " MCC_LAYOUT_VALUE_ "\n"
        ".popsection\n");
#endif

#endif /* MCC_HOOKS_H */
