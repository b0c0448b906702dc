/* SPDX-License-Identifier: MIT */
/*
 * stat_file.h - libmcc private: the writer side of the live view's record
 * file (format: mcc_stat.h; reader: mcc_stat_read in stat.c). The engine
 * SDK (sdk/engine_stat.c) builds snapshots and hands them here.
 */
#ifndef MCC_STAT_FILE_H
#define MCC_STAT_FILE_H

#include "mcc_internal.h"
MCC_EXPORTED_BEGIN
#include "mcc_stat.h"
MCC_EXPORTED_END

/* Bounds of one file (a larger engine is published truncated, flagged). */
#define MCC_STAT_DEVICES_MAX 4096u
#define MCC_STAT_ROUTES_MAX 65536u

struct mcc_stat_file;

/*
 * Create the record file `path` (O_EXCL, O_NOFOLLOW; a stale file of the
 * same name, left by a dead process with this pid, is removed first), with
 * room for at least the given numbers of records, blocks allocated (so a
 * store into the mapping never faults for want of memory), `seq` odd until
 * the first publish. Returns 0 or a negative errno with the reason in err.
 */
MCC_HIDDEN int mcc__stat_file_create(const char *path, uint32_t devices, uint32_t routes,
                                     struct mcc_stat_file **out, char *err, size_t errlen);

/*
 * Publish snapshot `s` (its hdr gives the counts and the header fields; the
 * file's layout fields, `seq`, `publish` and the records' `publish` are set
 * here). When the records do not fit, a larger file is created as
 * "<path>.new", written, renamed over the path, and the old one marked
 * MCC_STAT_F_MOVED; *f then is the new file. When even the largest file
 * cannot hold them, the first records are published with
 * MCC_STAT_F_TRUNCATED. Returns 0 or a negative errno (err: why); on error
 * the old file stays published as it was.
 */
MCC_HIDDEN int mcc__stat_file_publish(struct mcc_stat_file **f, const struct mcc_stat_snapshot *s,
                                      char *err, size_t errlen);

/* Mark the file MCC_STAT_F_CLOSED, unlink it (when unlink_path) and free
 * it. NULL: no-op. */
MCC_HIDDEN void mcc__stat_file_close(struct mcc_stat_file *f, int unlink_path);

/* The path of the file. */
MCC_HIDDEN const char *mcc__stat_file_path(const struct mcc_stat_file *f);

#endif /* MCC_STAT_FILE_H */
