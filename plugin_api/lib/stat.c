/* SPDX-License-Identifier: MIT */
/*
 * stat.c - the live view's record file (mcc_stat.h): the reader
 * (mcc_stat_read, used by `mcc stat`) and the writer the engine SDK
 * publishes through (stat_file.h).
 *
 * Both sides touch the shared mapping only with 8-byte atomic loads and
 * stores (relaxed, ordered by the seqlock's fences), so a reader racing a
 * writer is a defined program, not a tolerated data race.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "stat_file.h"

_Static_assert(sizeof(struct mcc_stat_header) == MCC_STAT_HEADER_V1_0_SIZE, "header size");
_Static_assert(sizeof(struct mcc_stat_domain) == MCC_STAT_DOMAIN_V1_0_SIZE, "domain size");
_Static_assert(sizeof(struct mcc_stat_device) == MCC_STAT_DEVICE_V1_0_SIZE, "device size");
_Static_assert(sizeof(struct mcc_stat_route) == MCC_STAT_ROUTE_V1_0_SIZE, "route size");
_Static_assert(offsetof(struct mcc_stat_header, seq) == 40, "seq offset");
_Static_assert(offsetof(struct mcc_stat_header, publish) == 48, "fixed part");

/* The part of the header that never changes after creation, seq included. */
#define FIXED_BYTES offsetof(struct mcc_stat_header, publish)

/* What a reader accepts (a writer stays far below). */
#define READ_SIZE_MAX 65536u          /* header_size, device_size, route_size */
#define READ_DEVICES_MAX (1u << 20)
#define READ_ROUTES_MAX (1u << 24)

/* A reader retries while publishes overlap its copy; it gives up when `seq`
 * stays odd this long (the writer died in a publish) or after RETRY_NS. */
#define STUCK_NS 1000000000ull
#define RETRY_NS 5000000000ull

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int
fail(int rc, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* n bytes (a multiple of 8) between local memory and the shared mapping,
 * one atomic 8-byte access per word on the mapping's side. */
static void store_words(void *map_dst, const void *src, size_t n)
{
	uint64_t *d = map_dst;

	for (size_t i = 0; i < n / 8; i++) {
		uint64_t w;

		memcpy(&w, (const char *)src + i * 8, 8);
		__atomic_store_n(&d[i], w, __ATOMIC_RELAXED);
	}
}

static void load_words(void *dst, const void *map_src, size_t n)
{
	const uint64_t *s = map_src;

	for (size_t i = 0; i < n / 8; i++) {
		uint64_t w = __atomic_load_n(&s[i], __ATOMIC_RELAXED);

		memcpy((char *)dst + i * 8, &w, 8);
	}
}

/* ================================================================ reader */

struct layout {
	uint32_t header_size, device_size, route_size, device_cap, route_cap;
	uint64_t file_size;
};

/* Check the fixed part (copied out of the mapping) against itself and the
 * file's size. 0 or a negative errno with err set. */
static int check_fixed(const char *path, const struct mcc_stat_header *h, uint64_t st_size,
                       struct layout *l, char *err, size_t errlen)
{
	uint64_t need;

	if (memcmp(h->magic, MCC_STAT_MAGIC, sizeof(h->magic)) != 0)
		return fail(-EINVAL, err, errlen, "%s: not an mcc stat file (no \"%s\" magic at offset 0)",
		            path, MCC_STAT_MAGIC);
	if (h->version_major != MCC_STAT_VERSION_MAJOR)
		return fail(-EPROTONOSUPPORT, err, errlen,
		            "%s: format version %u.%u, this reader knows major %u: use the mcc of "
		            "the engine that wrote it",
		            path, h->version_major, h->version_minor, MCC_STAT_VERSION_MAJOR);
	if (h->header_size < MCC_STAT_HEADER_V1_0_SIZE || h->header_size > READ_SIZE_MAX ||
	    h->header_size % 8 || h->device_size < MCC_STAT_DEVICE_V1_0_SIZE ||
	    h->device_size > READ_SIZE_MAX || h->device_size % 8 ||
	    h->route_size < MCC_STAT_ROUTE_V1_0_SIZE || h->route_size > READ_SIZE_MAX ||
	    h->route_size % 8)
		return fail(-EINVAL, err, errlen,
		            "%s: corrupt header: sizes header %u, device %u, route %u (version 1 "
		            "needs at least %u, %u, %u, multiples of 8, at most %u)",
		            path, h->header_size, h->device_size, h->route_size,
		            MCC_STAT_HEADER_V1_0_SIZE, MCC_STAT_DEVICE_V1_0_SIZE,
		            MCC_STAT_ROUTE_V1_0_SIZE, READ_SIZE_MAX);
	if (h->device_capacity > READ_DEVICES_MAX || h->route_capacity > READ_ROUTES_MAX)
		return fail(-EINVAL, err, errlen, "%s: corrupt header: %u device and %u route slots", path,
		            h->device_capacity, h->route_capacity);
	need = (uint64_t)h->header_size + (uint64_t)h->device_capacity * h->device_size +
	       (uint64_t)h->route_capacity * h->route_size;
	if (h->file_size != need)
		return fail(-EINVAL, err, errlen,
		            "%s: corrupt header: file_size %llu, but the slots need %llu bytes", path,
		            (unsigned long long)h->file_size, (unsigned long long)need);
	if (need > st_size)
		return fail(-EINVAL, err, errlen, "%s: truncated: %llu bytes, the header describes %llu",
		            path, (unsigned long long)st_size, (unsigned long long)need);
	l->header_size = h->header_size;
	l->device_size = h->device_size;
	l->route_size = h->route_size;
	l->device_cap = h->device_capacity;
	l->route_cap = h->route_capacity;
	l->file_size = need;
	return 0;
}

/* One copy between two equal, even loads of seq: 1 consistent, 0 retry. */
static int copy_once(const char *map, const struct layout *l, struct mcc_stat_snapshot *s,
                     uint64_t *seq_seen)
{
	const uint64_t *seqp = (const uint64_t *)(map + offsetof(struct mcc_stat_header, seq));
	uint64_t s1 = __atomic_load_n(seqp, __ATOMIC_ACQUIRE), s2;
	uint32_t nd, nr;

	*seq_seen = s1;
	if (s1 & 1)
		return 0;
	memset(&s->hdr, 0, sizeof(s->hdr));
	load_words(&s->hdr, map, l->header_size < sizeof(s->hdr) ? l->header_size : sizeof(s->hdr));
	/* counts read in this same window; clamped so a torn value only costs
	 * a retry, never a read past the slots */
	nd = s->hdr.device_count <= l->device_cap ? s->hdr.device_count : l->device_cap;
	nr = s->hdr.route_count <= l->route_cap ? s->hdr.route_count : l->route_cap;
	for (uint32_t i = 0; i < nd; i++) {
		memset(&s->devices[i], 0, sizeof(s->devices[i]));
		load_words(&s->devices[i], map + l->header_size + (size_t)i * l->device_size,
		           l->device_size < sizeof(s->devices[i]) ? l->device_size
		                                                  : sizeof(s->devices[i]));
	}
	for (uint32_t i = 0; i < nr; i++) {
		memset(&s->routes[i], 0, sizeof(s->routes[i]));
		load_words(&s->routes[i],
		           map + l->header_size + (size_t)l->device_cap * l->device_size +
		                   (size_t)i * l->route_size,
		           l->route_size < sizeof(s->routes[i]) ? l->route_size : sizeof(s->routes[i]));
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	s2 = __atomic_load_n(seqp, __ATOMIC_RELAXED);
	return s1 == s2;
}

/* A consistent copy read as the writer left it: counts within the slots,
 * every record stamped with the header's publish. */
static int check_copy(const char *path, const struct layout *l, struct mcc_stat_snapshot *s,
                      char *err, size_t errlen)
{
	struct mcc_stat_header *h = &s->hdr;

	if (h->device_count > l->device_cap || h->route_count > l->route_cap)
		return fail(-EINVAL, err, errlen,
		            "%s: corrupt header: %u devices and %u routes in %u and %u slots", path,
		            h->device_count, h->route_count, l->device_cap, l->route_cap);
	/* the devices' records, then the routes' */
	for (uint32_t n = 0; n < h->device_count + h->route_count; n++) {
		int dev = n < h->device_count;
		uint32_t i = dev ? n : n - h->device_count;
		uint64_t publish = dev ? s->devices[i].publish : s->routes[i].publish;
		if (publish != h->publish)
			return fail(-EINVAL, err, errlen,
			            "%s: corrupt record: %s %u carries publish %llu, the header %llu",
			            path, dev ? "device" : "route", i, (unsigned long long)publish,
			            (unsigned long long)h->publish);
	}
	/* text fields are NUL-terminated whatever the file holds */
	h->engine[sizeof(h->engine) - 1] = '\0';
	h->module[sizeof(h->module) - 1] = '\0';
	for (uint32_t i = 0; i < h->device_count; i++)
		s->devices[i].name[sizeof(s->devices[i].name) - 1] = '\0';
	for (uint32_t i = 0; i < h->route_count; i++)
		s->routes[i].peer[sizeof(s->routes[i].peer) - 1] = '\0';
	return 0;
}

int mcc_stat_read(const char *path, struct mcc_stat_snapshot **out, char *err, size_t errlen)
{
	struct mcc_stat_header fixed;
	struct mcc_stat_snapshot *s = NULL;
	struct layout l = {0};
	struct stat st;
	char ebuf[128];
	void *map = MAP_FAILED;
	uint64_t t0, odd_since = 0, seq, last_seq = 1;
	int fd, rc, e;

	if (err && errlen)
		err[0] = '\0';
	if (out)
		*out = NULL;
	if (!path || !out)
		return fail(-EINVAL, err, errlen, "mcc_stat_read: NULL argument");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		e = errno;
		return fail(-e, err, errlen, "%s: %s", path, strerror_r(e, ebuf, sizeof(ebuf)));
	}
	if (fstat(fd, &st) != 0) {
		e = errno;
		close(fd);
		return fail(-e, err, errlen, "%s: %s", path, strerror_r(e, ebuf, sizeof(ebuf)));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(-EINVAL, err, errlen, "%s: not a regular file", path);
	}
	if ((uint64_t)st.st_size < MCC_STAT_HEADER_V1_0_SIZE) {
		close(fd);
		return fail(-EINVAL, err, errlen,
		            "%s: not an mcc stat file: %lld bytes, shorter than the %u-byte header",
		            path, (long long)st.st_size, MCC_STAT_HEADER_V1_0_SIZE);
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	e = errno;
	close(fd);
	if (map == MAP_FAILED)
		return fail(-e, err, errlen, "%s: cannot map: %s", path, strerror_r(e, ebuf, sizeof(ebuf)));
	memset(&fixed, 0, sizeof(fixed));
	load_words(&fixed, map, FIXED_BYTES);
	rc = check_fixed(path, &fixed, (uint64_t)st.st_size, &l, err, errlen);
	if (rc)
		goto out;
	s = calloc(1, sizeof(*s) + (size_t)l.device_cap * sizeof(*s->devices) +
	                      (size_t)l.route_cap * sizeof(*s->routes));
	if (!s) {
		rc = fail(-ENOMEM, err, errlen, "%s: out of memory", path);
		goto out;
	}
	s->devices = (struct mcc_stat_device *)(s + 1);
	s->routes = (struct mcc_stat_route *)(s->devices + l.device_cap);
	t0 = mono_ns();
	for (;;) {
		if (copy_once(map, &l, s, &seq))
			break;
		uint64_t now = mono_ns();
		if (!(seq & 1) || seq != last_seq)
			odd_since = now;
		last_seq = seq;
		if ((seq & 1) && now - odd_since >= STUCK_NS) {
			rc = fail(-EAGAIN, err, errlen,
			     "%s: a publish never finished (seq %llu stayed odd for 1 s): the engine "
			     "died while writing, or this is not a live file",
			     path, (unsigned long long)seq);
			goto out;
		}
		if (now - t0 >= RETRY_NS) {
			rc = fail(-EAGAIN, err, errlen, "%s: no consistent copy in 5 s (rewritten too fast)", path);
			goto out;
		}
		sched_yield();
	}
	rc = check_copy(path, &l, s, err, errlen);
out:
	munmap(map, (size_t)st.st_size);
	if (rc) {
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void mcc_stat_free(struct mcc_stat_snapshot *s)
{
	free(s);
}

/* ================================================================ writer */

struct mcc_stat_file {
	int fd;
	char *map;
	size_t size;
	uint32_t dev_cap, route_cap;
	uint64_t seq;     /* the value last stored in the header */
	uint64_t publish; /* publishes written */
	uint64_t flags;   /* the header's flags as last written */
	int linked;       /* 1: at `path`; 0: still at `tmp` */
	char path[PATH_MAX];
	char tmp[PATH_MAX];
};

static uint64_t *seq_word(struct mcc_stat_file *f)
{
	return (uint64_t *)(f->map + offsetof(struct mcc_stat_header, seq));
}

static void write_begin(struct mcc_stat_file *f)
{
	if (!(f->seq & 1)) {
		f->seq++;
		__atomic_store_n(seq_word(f), f->seq, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
	}
}

static void write_end(struct mcc_stat_file *f)
{
	f->seq++;
	__atomic_store_n(seq_word(f), f->seq, __ATOMIC_RELEASE);
}

static void file_free(struct mcc_stat_file *f)
{
	if (f->map)
		munmap(f->map, f->size);
	if (f->fd >= 0)
		close(f->fd);
	free(f);
}

/* A new, unlinked-at-path file at "<path>.new", fixed part written, seq 1. */
static int file_new(const char *path, uint32_t dev_cap, uint32_t route_cap,
                    struct mcc_stat_file **out, char *err, size_t errlen)
{
	struct mcc_stat_header h;
	struct mcc_stat_file *f;
	char ebuf[128];
	int e;

	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return fail(-ENOMEM, err, errlen, "%s: out of memory", path);
	f->fd = -1;
	if (snprintf(f->path, sizeof(f->path), "%s", path) >= (int)sizeof(f->path) ||
	    snprintf(f->tmp, sizeof(f->tmp), "%s.new", path) >= (int)sizeof(f->tmp)) {
		free(f);
		return fail(-ENAMETOOLONG, err, errlen, "%s: path too long", path);
	}
	f->dev_cap = dev_cap;
	f->route_cap = route_cap;
	f->size = sizeof(h) + (size_t)dev_cap * sizeof(struct mcc_stat_device) +
	          (size_t)route_cap * sizeof(struct mcc_stat_route);
	/* A stale "<path>.new" (a writer that died growing its file) is ours to
	 * remove; O_EXCL | O_NOFOLLOW then refuse anything planted meanwhile. */
	(void)unlink(f->tmp);
	f->fd = open(f->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (f->fd < 0) {
		e = errno;
		fail(-e, err, errlen, "%s: cannot create: %s", f->tmp, strerror_r(e, ebuf, sizeof(ebuf)));
		file_free(f);
		return -e;
	}
	/* blocks allocated now: a store into a tmpfs mapping past what memory
	 * allows would otherwise be a SIGBUS in the engine */
	e = posix_fallocate(f->fd, 0, (off_t)f->size);
	if (e == 0) {
		f->map = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
		if (f->map == MAP_FAILED) {
			f->map = NULL;
			e = errno;
		}
	}
	if (e) {
		fail(-e, err, errlen, "%s: cannot size to %zu bytes: %s", f->tmp, f->size,
		     strerror_r(e, ebuf, sizeof(ebuf)));
		(void)unlink(f->tmp);
		file_free(f);
		return -e;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MCC_STAT_MAGIC, sizeof(h.magic));
	h.version_major = MCC_STAT_VERSION_MAJOR;
	h.version_minor = MCC_STAT_VERSION_MINOR;
	h.header_size = sizeof(h);
	h.device_size = sizeof(struct mcc_stat_device);
	h.route_size = sizeof(struct mcc_stat_route);
	h.device_capacity = dev_cap;
	h.route_capacity = route_cap;
	h.file_size = f->size;
	h.seq = 1; /* odd: no publish yet */
	f->seq = 1;
	store_words(f->map, &h, FIXED_BYTES);
	*out = f;
	return 0;
}

int mcc__stat_file_create(const char *path, uint32_t devices, uint32_t routes,
                          struct mcc_stat_file **out, char *err, size_t errlen)
{
	uint32_t dc = 8, rc = 64;

	while (dc < devices && dc < MCC_STAT_DEVICES_MAX)
		dc *= 2;
	while (rc < routes && rc < MCC_STAT_ROUTES_MAX)
		rc *= 2;
	return file_new(path, dc, rc, out, err, errlen);
}

/* One seqlock write of snapshot s into f: the first nd devices and nr routes. */
static void write_snapshot(struct mcc_stat_file *f, const struct mcc_stat_snapshot *s,
                           uint32_t nd, uint32_t nr, uint64_t flags)
{
	struct mcc_stat_header h = s->hdr;
	char *devs = f->map + sizeof(h);
	char *routes = devs + (size_t)f->dev_cap * sizeof(struct mcc_stat_device);

	h.publish = ++f->publish;
	h.flags = flags;
	h.device_count = nd;
	h.route_count = nr;
	memset(h.reserved, 0, sizeof(h.reserved));
	write_begin(f);
	store_words(f->map + FIXED_BYTES, (const char *)&h + FIXED_BYTES, sizeof(h) - FIXED_BYTES);
	for (uint32_t i = 0; i < nd; i++) {
		struct mcc_stat_device d = s->devices[i];

		d.publish = h.publish;
		store_words(devs + (size_t)i * sizeof(d), &d, sizeof(d));
	}
	for (uint32_t i = 0; i < nr; i++) {
		struct mcc_stat_route r = s->routes[i];

		r.publish = h.publish;
		store_words(routes + (size_t)i * sizeof(r), &r, sizeof(r));
	}
	write_end(f);
	f->flags = flags;
}

/* Set flag bits in the published header (one seqlock write). */
static void set_flags(struct mcc_stat_file *f, uint64_t bits)
{
	uint64_t v = f->flags | bits;

	write_begin(f);
	__atomic_store_n((uint64_t *)(f->map + offsetof(struct mcc_stat_header, flags)), v,
	                 __ATOMIC_RELAXED);
	write_end(f);
	f->flags = v;
}

static int link_file(struct mcc_stat_file *f, char *err, size_t errlen)
{
	char ebuf[128];
	int e;

	if (rename(f->tmp, f->path) != 0) {
		e = errno;
		return fail(-e, err, errlen, "%s: cannot publish (rename from %s): %s", f->path, f->tmp,
		            strerror_r(e, ebuf, sizeof(ebuf)));
	}
	f->linked = 1;
	return 0;
}

int mcc__stat_file_publish(struct mcc_stat_file **fp, const struct mcc_stat_snapshot *s,
                           char *err, size_t errlen)
{
	struct mcc_stat_file *f = *fp, *g = NULL;
	uint32_t nd = s->hdr.device_count, nr = s->hdr.route_count;
	uint64_t flags = s->hdr.flags & ~(MCC_STAT_F_MOVED | MCC_STAT_F_TRUNCATED);
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if ((nd > f->dev_cap && f->dev_cap < MCC_STAT_DEVICES_MAX) ||
	    (nr > f->route_cap && f->route_cap < MCC_STAT_ROUTES_MAX)) {
		/* grow: a new file beside, renamed over the path */
		rc = mcc__stat_file_create(f->path, nd > f->dev_cap ? nd : f->dev_cap,
		                           nr > f->route_cap ? nr : f->route_cap, &g, err, errlen);
		if (rc == 0) {
			g->publish = f->publish;
			g->flags = f->flags;
			f = g;
		}
		/* else: publish what fits in the old file, flagged truncated */
	}
	if (nd > f->dev_cap || nr > f->route_cap) {
		flags |= MCC_STAT_F_TRUNCATED;
		nd = nd < f->dev_cap ? nd : f->dev_cap;
		nr = nr < f->route_cap ? nr : f->route_cap;
	}
	write_snapshot(f, s, nd, nr, flags);
	if (!f->linked) {
		rc = link_file(f, err, errlen);
		if (rc) {
			(void)unlink(f->tmp);
			if (f != *fp)
				file_free(f);
			return rc;
		}
	}
	if (f != *fp) { /* the old file: superseded */
		set_flags(*fp, MCC_STAT_F_MOVED);
		file_free(*fp);
		*fp = f;
	}
	return 0;
}

void mcc__stat_file_close(struct mcc_stat_file *f, int unlink_path)
{
	if (!f)
		return;
	if (f->publish)
		set_flags(f, MCC_STAT_F_CLOSED);
	if (unlink_path)
		(void)unlink(f->linked ? f->path : f->tmp);
	file_free(f);
}

const char *mcc__stat_file_path(const struct mcc_stat_file *f)
{
	return f->path;
}
