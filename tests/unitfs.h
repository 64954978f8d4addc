/*
 * unitfs — the files and folders of a cmocka test: a fresh folder under
 * /tmp, a file written or read whole, the folder taken away again.  Each
 * fails the test (cmocka's assertions) rather than return an error a test
 * could forget to check.  Header-only; include it after <cmocka.h>.
 */
#ifndef TESTS_UNITFS_H
#define TESTS_UNITFS_H

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A new folder /tmp/sloptimize-NAME-XXXXXX, its path in dir (cap bytes). */
static inline void
unitfs_tmpdir(char *dir, size_t cap, const char *name)
{
	assert_true((size_t)snprintf(dir, cap, "/tmp/sloptimize-%s-XXXXXX",
	    name) < cap);
	assert_non_null(mkdtemp(dir));
}

/* What folder fd holds, then the folder name in it: 0, or -1. */
static inline int
unitfs_rm_in(int at, const char *name)
{
	struct dirent	*e;
	DIR		*d;
	int		 fd, rc = 0;

	if (unlinkat(at, name, 0) == 0)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -1;
	if ((fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) < 0)
		return -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			rc |= unitfs_rm_in(dirfd(d), e->d_name);
	closedir(d);
	return rc == 0 && unlinkat(at, name, AT_REMOVEDIR) == 0 ? 0 : -1;
}

/* The folder and all in it, links not followed: 0, or -1 (a teardown's
 * answer to cmocka). */
static inline int
unitfs_rmrf(const char *dir)
{
	return unitfs_rm_in(AT_FDCWD, dir);
}

/* path := n bytes of data (made 0644 or truncated). */
static inline void
unitfs_put(const char *path, const void *data, size_t n)
{
	int	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, n), (ssize_t)n);
	assert_int_equal(close(fd), 0);
}

/* path := text */
static inline void
unitfs_puts(const char *path, const char *text)
{
	unitfs_put(path, text, strlen(text));
}

/* Up to cap bytes of path into buf (not terminated): how many. */
static inline size_t
unitfs_get(const char *path, char *buf, size_t cap)
{
	int	fd = open(path, O_RDONLY);
	ssize_t	n;

	assert_true(fd >= 0);
	n = read(fd, buf, cap);
	assert_true(n >= 0);
	close(fd);
	return (size_t)n;
}

/* The whole file, NUL-terminated, its size in *len (len may be NULL);
 * the caller frees it.  A file that cannot be read fails the test. */
static inline char *
unitfs_slurp(const char *path, size_t *len)
{
	FILE	*f = fopen(path, "rb");
	char	*buf;
	long	 n;

	if (f == NULL)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	buf[n] = '\0';
	if (len != NULL)
		*len = (size_t)n;
	return buf;
}

#endif
