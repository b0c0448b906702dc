/* SPDX-License-Identifier: MIT */
/* verbs_enums.h - enumerators of the installed <infiniband/verbs.h>,
 * generated at build time (gen_verbs_enums.sh -> verbs_enums.c). */
#ifndef MCC_TEST_VERBS_ENUMS_H
#define MCC_TEST_VERBS_ENUMS_H

struct mcc_verbs_enum {
	const char *name;
	int value;
};

extern const struct mcc_verbs_enum mcc_verbs_wc_status[];
extern const unsigned mcc_verbs_wc_status_count;
extern const struct mcc_verbs_enum mcc_verbs_event_type[];
extern const unsigned mcc_verbs_event_type_count;

#endif
