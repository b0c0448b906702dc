/* SPDX-License-Identifier: MIT */
/*
 * names.c - mcc_strerror() and the enum name helpers. Every function returns
 * a static string (thread-safe, never NULL); a value outside the enum gives
 * "invalid". State and reason names are spelled as in the RFC.
 */
#include <errno.h>
#include <stddef.h>

#include "mcc_internal.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

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

const char *mcc_path_state_name(int state)
{
	static const char *const names[] = {
		[MCC_PATH_HEALTHY] = "HEALTHY",
		[MCC_PATH_CONGESTED] = "CONGESTED",
		[MCC_PATH_SUSPECT] = "SUSPECT",
		[MCC_PATH_QUARANTINED] = "QUARANTINED",
		[MCC_PATH_PROBING] = "PROBING",
	};
	return state >= 0 && (size_t)state < NELEM(names) ? names[state] : "invalid";
}

const char *mcc_reason_name(int reason)
{
	static const char *const names[MCC_REASON_COUNT_] = {
		[MCC_REASON_NONE] = "NONE",
		[MCC_REASON_BYTE_WINDOW] = "BYTE_WINDOW",
		[MCC_REASON_RECEIVER_PRESSURE] = "RECEIVER_PRESSURE",
		[MCC_REASON_CONGESTION_FEEDBACK] = "CONGESTION_FEEDBACK",
		[MCC_REASON_ROUTE_TIMEOUT] = "ROUTE_TIMEOUT",
		[MCC_REASON_PATH_QUARANTINED] = "PATH_QUARANTINED",
		[MCC_REASON_PROBE_FAILED] = "PROBE_FAILED",
		[MCC_REASON_NO_USABLE_PATH] = "NO_USABLE_PATH",
		[MCC_REASON_LOCAL_CONFIGURATION] = "LOCAL_CONFIGURATION",
		[MCC_REASON_REMOTE_METADATA] = "REMOTE_METADATA",
		[MCC_REASON_DERIVED_FLUSH] = "DERIVED_FLUSH",
		[MCC_REASON_FATAL] = "FATAL",
		[MCC_REASON_GENERATION_CHANGED] = "GENERATION_CHANGED",
		[MCC_REASON_POLLER_STALL] = "POLLER_STALL",
		[MCC_REASON_CANCELLED] = "CANCELLED",
		[MCC_REASON_CONTROL_PLANE] = "CONTROL_PLANE",
		[MCC_REASON_NO_RECORD] = "NO_RECORD",
	};
	/* A reason added to the enum without a name here is "invalid" rather
	 * than NULL. */
	if (reason < 0 || reason >= MCC_REASON_COUNT_ || !names[reason])
		return "invalid";
	return names[reason];
}
