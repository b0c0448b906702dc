/* SPDX-License-Identifier: MIT */
/*
 * names_table.h - the names of the path states and task reasons of
 * mcc_policy_v1.h, once: libmcc spells them in upper case for hosts
 * (names.c: mcc_path_state_name, mcc_reason_name), the policy core in lower
 * case for its recorder's JSON (modules/core/classify.c). Not installed.
 *
 *   X(ENUM_SUFFIX, lower_case_name)
 */
#ifndef MCC_NAMES_TABLE_H
#define MCC_NAMES_TABLE_H

#include "mcc_policy_v1.h"

#define MCC_PATH_STATE_NAMES(X)                                                         \
	X(HEALTHY, healthy) X(CONGESTED, congested) X(SUSPECT, suspect)                     \
	X(QUARANTINED, quarantined) X(PROBING, probing)

#define MCC_REASON_NAMES(X)                                                             \
	X(NONE, none) X(BYTE_WINDOW, byte_window) X(RECEIVER_PRESSURE, receiver_pressure)    \
	X(CONGESTION_FEEDBACK, congestion_feedback) X(ROUTE_TIMEOUT, route_timeout)          \
	X(PATH_QUARANTINED, path_quarantined) X(PROBE_FAILED, probe_failed)                  \
	X(NO_USABLE_PATH, no_usable_path) X(LOCAL_CONFIGURATION, local_configuration)         \
	X(REMOTE_METADATA, remote_metadata) X(DERIVED_FLUSH, derived_flush) X(FATAL, fatal)  \
	X(GENERATION_CHANGED, generation_changed) X(POLLER_STALL, poller_stall)              \
	X(CANCELLED, cancelled) X(CONTROL_PLANE, control_plane) X(NO_RECORD, no_record)

/* one name per enumerator: an enumerator added without a name fails here */
#define MCC_NAMES_ONE_(id, low) +1
MCC_STATIC_ASSERT(0 MCC_PATH_STATE_NAMES(MCC_NAMES_ONE_) == MCC_PATH_PROBING + 1,
                  "names_table.h: a name per path state");
MCC_STATIC_ASSERT(0 MCC_REASON_NAMES(MCC_NAMES_ONE_) == MCC_REASON_COUNT_,
                  "names_table.h: a name per reason");

#endif /* MCC_NAMES_TABLE_H */
