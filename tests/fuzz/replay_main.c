/* SPDX-License-Identifier: MIT */
/*
 * replay_main.c - a main() for the fuzz targets when they are built without
 * libFuzzer (gcc, TSan, valgrind arms of `make check`): runs
 * LLVMFuzzerTestOneInput once per file of the committed seed corpus, so each
 * corpus entry is a deterministic regression test.
 *
 * Usage: replay_<name> [FILE|DIR]...   (no argument: the corpus directory
 * $MCC_TEST_SRCDIR/tests/fuzz/corpus/<name>, <name> from MCC_FUZZ_NAME).
 * Exit status 0 when every input ran (a finding aborts the process).
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

#ifndef MCC_FUZZ_NAME
#error "MCC_FUZZ_NAME must name the fuzz target (its corpus directory)"
#endif

static unsigned replayed;

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "%s: cannot size\n", path);
		fclose(f);
		return -1;
	}
	/* +1: never malloc(0); the target only sees `len` bytes. */
	buf = malloc((size_t)len + 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "%s: read failed\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	replayed++;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_path(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path);
	d = opendir(path);
	if (!d) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	/* Sorted, so a run is reproducible whatever readdir's order. */
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap ? cap * 2 : 16) * sizeof(*names));
			if (!nn) {
				rc = -1;
				break;
			}
			names = nn;
			cap = cap ? cap * 2 : 16;
		}
		names[n] = malloc(strlen(path) + strlen(de->d_name) + 2);
		if (!names[n]) {
			rc = -1;
			break;
		}
		sprintf(names[n], "%s/%s", path, de->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		if (rc == 0 && replay_file(names[i]) != 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int rc = 0;

	if (LLVMFuzzerInitialize(&argc, &argv) != 0)
		return 1;
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			if (replay_path(argv[i]) != 0)
				rc = 1;
	} else {
		const char *src = getenv("MCC_TEST_SRCDIR");
		char dir[4096];

		snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/%s", src ? src : ".",
		         MCC_FUZZ_NAME);
		if (replay_path(dir) != 0)
			rc = 1;
	}
	printf("%s: replayed %u inputs%s\n", MCC_FUZZ_NAME, replayed, rc ? " (errors)" : "");
	if (replayed == 0)
		rc = 1;
	return rc;
}
