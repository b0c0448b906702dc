/* SPDX-License-Identifier: MIT */
/* mcc_policy.h - umbrella header: the current policy ABI. */
#ifndef MCC_POLICY_H
#define MCC_POLICY_H
#include "mcc_policy_v1.h"
typedef struct mcc_policy_v1 mcc_policy;
#define MCC_POLICY_ABI_CURRENT MCC_POLICY_ABI_V1
#endif
