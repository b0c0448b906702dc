/* SPDX-License-Identifier: MIT */
/*
 * mcc_defaults.h - the defaults of the [controller] keys, in one place: the
 * key table of libmcc (config.c) and the policy core (modules/core/policy.c,
 * for a host that passes a shorter configuration) both take them from here.
 * Why each value: conf/mcc.ini. Not installed: a host passes the validated
 * values in struct mcc_config_v1 and a module uses those.
 * tests/tools/ini_drift.sh checks conf/mcc.ini, mcc.ini(5) and the modules'
 * example files against `mcc check`, which prints these.
 */
#ifndef MCC_DEFAULTS_H
#define MCC_DEFAULTS_H

#define MCC_DEFAULT_MIN_WINDOW_BYTES 131072
#define MCC_DEFAULT_MAX_WINDOW_BYTES 16777216
#define MCC_DEFAULT_TARGET_DRAIN_US 200
#define MCC_DEFAULT_HIGH_PRESSURE_EPOCHS 2
#define MCC_DEFAULT_LOW_PRESSURE_EPOCHS 4
#define MCC_DEFAULT_HARD_ERROR_THRESHOLD 3
#define MCC_DEFAULT_COOLDOWN_MS 1000
#define MCC_DEFAULT_COOLDOWN_MAX_MS 30000
#define MCC_DEFAULT_FLAP_WINDOW_MS 60000
#define MCC_DEFAULT_EPOCH_US 1000
#define MCC_DEFAULT_MD_PERCENT 50
#define MCC_DEFAULT_FAST_RECOVERY_EPOCHS 5
#define MCC_DEFAULT_AI_BYTES 262144
#define MCC_DEFAULT_PROBE_SUCCESSES 3
#define MCC_DEFAULT_EVIDENCE_TASKS 65536
#define MCC_DEFAULT_RECORDER_ENTRIES 4096

/* [engine]: the live view (mcc_stat.h). `stat = on` publishes to
 * MCC_STAT_DIR_DEFAULT. */
#define MCC_DEFAULT_STAT_INTERVAL_MS 1000
#define MCC_STAT_DIR_DEFAULT "/dev/shm"

#endif
