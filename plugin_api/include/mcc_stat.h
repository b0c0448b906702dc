/* SPDX-License-Identifier: MIT */
/*
 * mcc_stat.h - the live view of a running engine: what its policy holds per
 * device and per route (state, window, in-flight, cuts, quarantines), as a
 * versioned record file an engine publishes and `mcc stat` (mcc(1)) prints.
 *
 * Publishing is opt-in: `[engine] stat = on` (or a directory) in the ini
 * file (mcc.ini(5)). The engine SDK then creates one file per engine,
 *
 *     <dir>/mcc.<pid>.<engine>          <dir>: /dev/shm for "on"
 *
 * mode 0644, and rewrites it in place every `stat_interval_ms` from a
 * publishing thread of its own: never from a hot path or the tick. The
 * file is removed when the engine closes; one left by a process that died
 * names a pid that is gone.
 *
 * File format (version 1.0), native byte order (the reader runs on the same
 * machine), every field naturally aligned, every size a multiple of 8:
 *
 *     offset 0                    struct mcc_stat_header
 *     header_size                 device_capacity x device_size bytes
 *     + device_capacity x ...     route_capacity x route_size bytes
 *
 * The first 48 bytes (magic .. seq) never change after creation. A publish
 * is a seqlock write: `seq` becomes odd, the rest of the header and the
 * records are written, `seq` becomes even again (each step with release
 * order, every 8-byte word stored atomically). A reader copies the header
 * and the first device_count / route_count records between two loads of an
 * even, equal `seq`, else retries, so it never sees a torn record. Every
 * record also carries the number of the publish that wrote it (`publish`),
 * equal to the header's in a consistent copy.
 *
 * When more routes or devices are open than the file has slots, the SDK
 * writes a larger file beside it, renames it over the path and marks the
 * old one MCC_STAT_F_MOVED: a reader holding the old one reopens the path.
 *
 * Compatibility: a reader accepts major 1 with any minor; a newer minor
 * appends fields to the header and records (header_size, device_size and
 * route_size grow) and a reader copies the part it knows. A new major
 * changes the magic's meaning entirely; an old reader refuses it.
 */
#ifndef MCC_STAT_H
#define MCC_STAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MCC_STAT_MAGIC "MCCSTAT" /* 8 bytes with its NUL */
#define MCC_STAT_VERSION_MAJOR 1u
#define MCC_STAT_VERSION_MINOR 0u

/* mcc_stat_header.flags */
#define MCC_STAT_F_MOVED (1ull << 0)     /* superseded: reopen the path */
#define MCC_STAT_F_TRUNCATED (1ull << 1) /* more routes/devices than records */
#define MCC_STAT_F_CLOSED (1ull << 2)    /* the engine closed (last publish) */

/* mcc_stat_domain.valid */
#define MCC_STAT_DOMAIN_VALID 1u /* the policy's domain_stats answered */

struct mcc_stat_header {
	/* fixed at creation */
	char magic[8];            /* MCC_STAT_MAGIC */
	uint16_t version_major;   /* MCC_STAT_VERSION_MAJOR */
	uint16_t version_minor;   /* MCC_STAT_VERSION_MINOR */
	uint32_t header_size;     /* bytes; the device records start here */
	uint32_t device_size;     /* bytes of one device record */
	uint32_t route_size;      /* bytes of one route record */
	uint32_t device_capacity; /* device record slots */
	uint32_t route_capacity;  /* route record slots */
	uint64_t file_size;       /* header_size + the slots, in bytes */
	uint64_t seq;             /* seqlock: odd while a publish writes */
	/* written by each publish */
	uint64_t publish;         /* publishes so far (the first is 1) */
	uint64_t flags;           /* MCC_STAT_F_* */
	uint64_t pid;             /* the engine's process */
	uint64_t publish_unix_ns; /* CLOCK_REALTIME of the publish */
	uint64_t sdk_now_ns;      /* the engine's clock (mcc_engine_now) then */
	uint32_t device_count;    /* valid device records */
	uint32_t route_count;     /* valid route records */
	uint32_t devices_open;    /* devices known to the engine (>= device_count) */
	uint32_t routes_open;     /* routes open in the engine (>= route_count) */
	uint32_t interval_ms;     /* configured publish period */
	uint32_t mode;            /* enum mcc_mode of the policy */
	uint32_t policy_abi;      /* the module's abi_version (MCC_ABI) */
	uint32_t lanes_open;      /* the engine's lanes */
	uint64_t ticks;           /* policy ticks run (the instance's) */
	char engine[32];          /* the engine's name ("te", "tent", ...) */
	char module[32];          /* the policy's name ("aimd", "null", ...) */
	uint64_t reserved[8];     /* 0 */
};

/* One domain's snapshot: struct mcc_domain_stats_v1 (mcc_policy_v1.h) as
 * the policy's domain_stats returned it, less its struct_size. */
struct mcc_stat_domain {
	uint32_t state;           /* enum mcc_path_state */
	uint32_t generation;
	uint32_t hard_errors;     /* toward hard_error_threshold */
	uint32_t valid;           /* MCC_STAT_DOMAIN_VALID, else the rest is 0 */
	uint64_t window_bytes;
	uint64_t inflight_bytes;
	uint64_t cooldown_ms;     /* remaining; 0 unless quarantined */
	uint64_t admits;
	uint64_t defers;
	uint64_t avoids;
	uint64_t would_defer;
	uint64_t would_avoid;
	uint64_t completed_bytes;
	uint64_t completions;
	uint64_t errors;
	uint64_t stale_feedback;
	uint64_t double_release;
	uint64_t quarantines;
	uint64_t probes;
	uint64_t window_cuts;
	uint64_t drain_us;        /* last epoch's drain-time estimate */
	uint64_t rate_bps;        /* delivery rate, bytes per second */
	uint64_t suppressed_deadlines;
};

struct mcc_stat_device {
	uint64_t publish;         /* the publish that wrote this record */
	uint32_t device_id;       /* the engine's index (mcc_device_desc_v1) */
	uint32_t named;           /* 1: opened by mcc_engine_device_open (name, flags, rate known) */
	uint64_t flags;           /* MCC_DEVICE_F_* */
	uint64_t link_rate_bps;   /* 0 when unknown */
	char name[64];            /* "mlx5_0"; "dev<n>" when not named */
	struct mcc_stat_domain d;
};

struct mcc_stat_route {
	uint64_t publish;         /* the publish that wrote this record */
	uint64_t route_id;        /* the SDK's id (from 1) */
	uint32_t device;          /* index of its device record; UINT32_MAX: none */
	uint32_t key_len;         /* bytes of the engine's key */
	char peer[128];           /* the key as text (TE's peer_nic_path); bytes
	                           * outside printable ASCII as '?'; cut with "..." */
	struct mcc_stat_domain d;
};

/* Frozen sizes of version 1.0 (a newer minor only grows them). */
#define MCC_STAT_HEADER_V1_0_SIZE 256u
#define MCC_STAT_DOMAIN_V1_0_SIZE 168u
#define MCC_STAT_DEVICE_V1_0_SIZE 264u
#define MCC_STAT_ROUTE_V1_0_SIZE 320u

/* What mcc_stat_read (or mcc_engine_stat_snapshot, mcc_engine.h) returns:
 * a consistent copy, records in this header's layout. */
struct mcc_stat_snapshot {
	struct mcc_stat_header hdr;      /* device_count / route_count entries below */
	struct mcc_stat_device *devices;
	struct mcc_stat_route *routes;
};

/*
 * mcc_stat_read - open and validate the record file `path` and copy one
 * consistent publish of it. A file the engine is rewriting is read again
 * (bounded: a writer stuck in the middle of a publish is an error).
 * Outputs: *out (free with mcc_stat_free).
 * Returns 0 or a negative errno, with the reason in err (may be NULL):
 *   -ENOENT/-EACCES/... the file cannot be opened;
 *   -EINVAL not a regular file, or not a record file: too short, wrong
 *           magic, sizes inconsistent with each other or with the file;
 *   -EPROTONOSUPPORT another major version;
 *   -EAGAIN no consistent copy (a publish never finished: the writer died
 *           in it, or rewrites faster than this reader copies);
 *   -ENOMEM.
 * Thread: any; it maps the file read-only and never writes it.
 */
int mcc_stat_read(const char *path, struct mcc_stat_snapshot **out, char *err, size_t errlen);

/* Free a snapshot (NULL: no-op). */
void mcc_stat_free(struct mcc_stat_snapshot *s);

#ifdef __cplusplus
}
#endif
#endif /* MCC_STAT_H */
