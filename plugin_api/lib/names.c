/* SPDX-License-Identifier: MIT */
/*
 * names.c - mcc_version(), mcc_strerror() and the enum name helpers. Every
 * function returns a static string (thread-safe, never NULL); a value
 * outside the enum gives "invalid". State and reason names are spelled as in the RFC.
 */
#include <errno.h>
#include <stddef.h>

#include "mcc_internal.h"
#include "names_table.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#ifndef PACKAGE_VERSION
#error "PACKAGE_VERSION must be defined (configure)"
#endif

const char *mcc_version(void)
{
	return PACKAGE_VERSION;
}

const char *mcc_strerror(int err)
{
	/* Accept -errno (the ABI convention) and errno alike. */
	switch (err < 0 ? -err : err) {
	case 0:
		return "success";
	case EINVAL:
		return "invalid argument or configuration";
	case ENOMEM:
		return "out of memory";
	case ENOENT:
		return "not found";
	case EALREADY:
		return "already settled (double release)";
	case EOPNOTSUPP:
		return "operation not supported by this module";
	case EPROTO:
		return "module ABI mismatch";
	case EBUSY:
		return "another policy module or configuration is already loaded in this process";
	case EPERM:
		return "refused: unsafe module or configuration permissions";
	case EACCES:
		return "permission denied";
	case ENOEXEC:
		return "module could not be loaded (dlopen failed)";
	case EISDIR:
		return "is a directory";
	case ENAMETOOLONG:
		return "path too long";
	case EIO:
		return "input/output error";
	case ERANGE:
		return "value out of range";
	case EAGAIN:
		return "resource temporarily unavailable";
	default:
		return "unknown error";
	}
}

const char *mcc__mode_name(uint32_t mode)
{
	static const char *const names[] = {
		[MCC_MODE_OFF] = "off",
		[MCC_MODE_OBSERVE] = "observe",
		[MCC_MODE_ENFORCE] = "enforce",
	};
	return mode < NELEM(names) ? names[mode] : "invalid";
}

const char *mcc_task_state_name(int state)
{
	static const char *const names[] = {
		[MCC_TASK_NORMAL] = "NORMAL",
		[MCC_TASK_CONGESTED] = "CONGESTED",
		[MCC_TASK_LONG_UNAVAILABLE] = "LONG_UNAVAILABLE",
		[MCC_TASK_UNKNOWN] = "UNKNOWN",
	};
	return state >= 0 && (size_t)state < NELEM(names) ? names[state] : "invalid";
}

#define UPPER_PATH(id, low) [MCC_PATH_##id] = #id,
#define UPPER_REASON(id, low) [MCC_REASON_##id] = #id,

const char *mcc_path_state_name(int state)
{
	static const char *const names[] = {MCC_PATH_STATE_NAMES(UPPER_PATH)};
	return state >= 0 && (size_t)state < NELEM(names) ? names[state] : "invalid";
}

const char *mcc_reason_name(int reason)
{
	static const char *const names[MCC_REASON_COUNT_] = {MCC_REASON_NAMES(UPPER_REASON)};
	/* A reason added to the enum without a name in names_table.h is
	 * "invalid" rather than NULL. */
	if (reason < 0 || reason >= MCC_REASON_COUNT_ || !names[reason])
		return "invalid";
	return names[reason];
}
