/* SPDX-License-Identifier: MIT */
/* The engine SDK's device facts: what a host states in
 * struct mcc_device_desc_v1.flags, found where the kernel describes it. */
#include "engine_internal.h" /* mcc_engine.h with default visibility */

#include <stdio.h>
#include <string.h>
#include <unistd.h>

uint64_t mcc_engine_device_flags(const char *sysfs_root, const char *name)
{
	char p[512];
	if (!name || !*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	int n = snprintf(p, sizeof(p), "%s/class/infiniband/%s/device", sysfs_root ? sysfs_root : "/sys",
	                 name);
	if (n < 0 || (size_t)n >= sizeof(p))
		return 0;
	if (access(p, F_OK) == 0)
		return 0; /* a bus device behind it: an HCA */
	p[n - sizeof("/device") + 1] = '\0';
	return access(p, F_OK) == 0 ? MCC_DEVICE_F_SOFTWARE : 0;
}
