/* SPDX-License-Identifier: MIT */
/*
 * nvdisasm's text of a cubin, kept across runs (gpu/sass/sass.h): the
 * disassembly of an application's cubins is most of what PC sampling costs
 * at exit, and the next run of the same program has the same cubins.
 *
 * An entry is a file named by a 128-bit hash of the cubin's bytes and of
 * the disassembler (its path, size and modification time: another CUDA's
 * nvdisasm writes other text), in GPUTOOL_CACHE (default
 * $XDG_CACHE_HOME/gputool, else ~/.cache/gputool) under sass/. It starts
 * with a line that gives the text's length and a checksum of it: an entry
 * cut short or changed is a miss, and is written again. Writers write a
 * file of their own and rename it into place, so concurrent runs (the
 * ranks of an MPI job) each read a whole entry or none. The hash is not
 * cryptographic: the cache trusts the files its user's processes wrote.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/hash.h"
#include "core/log.h"
#include "gpu/sass/sass.h"

#define MAGIC "gputool-sass 1"

/* Two 64-bit lanes over the bytes, with different seeds and multipliers. */
static void hash128(const void *p, size_t n, uint64_t seed, uint64_t out[2])
{
	const unsigned char *b = p;
	uint64_t a = 0x9e3779b97f4a7c15ull ^ seed, c = 0xc2b2ae3d27d4eb4full ^ gt_hash__mix64(seed + n);
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, b + i, 8);
		a = (a ^ gt_hash__mix64(w)) * 0x100000001b3ull + 0x27d4eb2f165667c5ull;
		c = (c + w) * 0x9e3779b97f4a7c15ull ^ (c >> 29);
	}
	for (; i < n; i++) {
		a = (a ^ b[i]) * 0x100000001b3ull;
		c = (c + b[i]) * 0xc2b2ae3d27d4eb4full ^ (c >> 31);
	}
	out[0] = gt_hash__mix64(a ^ n);
	out[1] = gt_hash__mix64(c + (n << 1));
}

static uint64_t checksum(const char *s, size_t n)
{
	uint64_t h[2];

	hash128(s, n, 0x5a55, h);
	return h[0];
}

/* The cache's folder for sass entries into buf, created; NULL when there
 * is none (GPUTOOL_CACHE=0 or off, no home, a folder that cannot be made). */
static const char *folder(char *buf, size_t size)
{
	const char *c = gt_config.cache, *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int k;

	if (c && (!strcmp(c, "0") || !strcmp(c, "off")))
		return NULL;
	if (c && *c)
		k = snprintf(buf, size, "%s/sass", c);
	else if (xdg && *xdg == '/')
		k = snprintf(buf, size, "%s/gputool/sass", xdg);
	else if (home && *home == '/')
		k = snprintf(buf, size, "%s/.cache/gputool/sass", home);
	else
		return NULL;
	if (k < 0 || (size_t)k >= size)
		return NULL;
	/* Each component, as mkdir -p does; an existing one is fine. */
	for (char *s = buf + 1;; s++) {
		if (*s != '/' && *s)
			continue;
		char was = *s;

		*s = 0;
		if (mkdir(buf, 0700) && errno != EEXIST) {
			*s = was;
			return NULL;
		}
		*s = was;
		if (!was)
			break;
	}
	return buf;
}

/* The entry's path for (prog, cubin, variant) into buf; NULL when there is
 * no cache. */
static const char *entry(const char *prog, const void *cubin, size_t size, const char *variant, char *buf,
			 size_t len)
{
	char dir[3072];
	struct stat st = { 0 };
	uint64_t h[2], p[2], id[3];

	if (!folder(dir, sizeof(dir)))
		return NULL;
	/* The disassembler: a program found on PATH is named, not located,
	 * and is told apart by its name only. */
	stat(prog, &st);
	id[0] = (uint64_t)st.st_size;
	id[1] = (uint64_t)st.st_mtime;
	id[2] = (uint64_t)st.st_ino;
	hash128(prog, strlen(prog), 1, p);
	hash128(id, sizeof(id), p[0] ^ p[1], p);
	/* Part of the module (nvdisasm's -fun): an entry of its own. */
	if (variant)
		hash128(variant, strlen(variant), p[0] ^ p[1], p);
	hash128(cubin, size, p[0] ^ gt_hash__mix64(p[1]), h);
	if (snprintf(buf, len, "%s/%016" PRIx64 "%016" PRIx64 ".sass", dir, h[0], h[1]) >= (int)len)
		return NULL;
	return buf;
}

int gt_sass_cache__get(const char *prog, const void *cubin, size_t size, const char *variant, char **text,
		       size_t *len)
{
	char path[4096], head[128];
	unsigned long long n, sum;
	char *t = NULL;
	FILE *f;
	int ok = 0;

	*text = NULL;
	*len = 0;
	if (!entry(prog, cubin, size, variant, path, sizeof(path)) || !(f = fopen(path, "re")))
		return -ENOENT;
	if (fgets(head, sizeof(head), f) && sscanf(head, MAGIC " %llu %llx", &n, &sum) == 2 && n < (1ull << 32) &&
	    (t = malloc((size_t)n + 1)) && fread(t, 1, (size_t)n, f) == (size_t)n && fgetc(f) == EOF &&
	    checksum(t, (size_t)n) == sum)
		ok = 1;
	fclose(f);
	if (!ok) {
		free(t);
		gt_debug("sass", "cache entry %s unreadable or changed: disassembling again", path);
		return -ENOENT;
	}
	t[n] = 0;
	*text = t;
	*len = (size_t)n;
	return 0;
}

int gt_sass_cache__has(const char *prog, const void *cubin, size_t size, const char *variant)
{
	char path[4096];

	return entry(prog, cubin, size, variant, path, sizeof(path)) && !access(path, R_OK);
}

void gt_sass_cache__put(const char *prog, const void *cubin, size_t size, const char *variant, const char *text,
			size_t len)
{
	char path[4096], tmp[4200], head[128];
	FILE *f;
	int fd, ok;

	if (!entry(prog, cubin, size, variant, path, sizeof(path)))
		return;
	if (snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid()) >= (int)sizeof(tmp))
		return;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		gt_debug("sass", "cannot write the cache entry %s: %s", tmp, strerror(errno));
		return;
	}
	snprintf(head, sizeof(head), MAGIC " %zu %" PRIx64 "\n", len, checksum(text, len));
	ok = fputs(head, f) >= 0 && fwrite(text, 1, len, f) == len;
	ok = !fclose(f) && ok;
	if (!ok || rename(tmp, path)) {
		gt_debug("sass", "cannot write the cache entry %s", path);
		unlink(tmp);
	}
}
