/*
 * test_statedir — the per-project state directory (project/statedir.h):
 * where it is, its one-owner lock, the one atomic write/read pair every
 * state file goes through, and the token and settings files built on it.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unitfs.h"

#include "ledger/footprint.h"
#include "project/statedir.h"

struct fx {
	char	root[PATH_MAX];
	char	file[PATH_MAX + 16];
	char	tmp[PATH_MAX + 32];
};

static int
setup(void **state)
{
	struct fx	*fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	unitfs_tmpdir(fx->root, sizeof(fx->root), "statedir");
	snprintf(fx->file, sizeof(fx->file), "%s/state", fx->root);
	snprintf(fx->tmp, sizeof(fx->tmp), "%s.tmp", fx->file);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fx	*fx = *state;

	if (unitfs_rmrf(fx->root) != 0)
		return -1;
	free(fx);
	return 0;
}

/* --- statedir --------------------------------------------------------- */

static void
statedir_resolve_paths(void **state)
{
	char	out[PATH_MAX], want[PATH_MAX];
	char	*home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	char	*xdg = getenv("XDG_STATE_HOME") ?
		    strdup(getenv("XDG_STATE_HOME")) : NULL;
	uint32_t id = fnv1a32("/home/dev/games/orbit", 21);

	(void)state;
	setenv("XDG_STATE_HOME", "/xdg/state", 1);
	assert_int_equal(statedir_resolve("/home/dev/games/orbit", NULL, out,
	    sizeof(out)), 0);
	snprintf(want, sizeof(want), "/xdg/state/sloptimize/orbit-%08x", id);
	assert_string_equal(out, want);
	/* Trailing slashes name the same project. */
	assert_int_equal(statedir_resolve("/home/dev/games/orbit//", NULL,
	    out, sizeof(out)), 0);
	assert_string_equal(out, want);

	/* Unset, empty or relative XDG_STATE_HOME: ~/.local/state. */
	setenv("HOME", "/home/dev", 1);
	snprintf(want, sizeof(want),
	    "/home/dev/.local/state/sloptimize/orbit-%08x", id);
	unsetenv("XDG_STATE_HOME");
	assert_int_equal(statedir_resolve("/home/dev/games/orbit", NULL, out,
	    sizeof(out)), 0);
	assert_string_equal(out, want);
	setenv("XDG_STATE_HOME", "", 1);
	assert_int_equal(statedir_resolve("/home/dev/games/orbit", NULL, out,
	    sizeof(out)), 0);
	assert_string_equal(out, want);
	setenv("XDG_STATE_HOME", "rel/state", 1);
	assert_int_equal(statedir_resolve("/home/dev/games/orbit", NULL, out,
	    sizeof(out)), 0);
	assert_string_equal(out, want);

	/* Same folder name elsewhere: another id. */
	assert_int_equal(statedir_resolve("/srv/orbit", NULL, out,
	    sizeof(out)), 0);
	assert_string_not_equal(out, want);
	assert_non_null(strstr(out, "/orbit-"));

	assert_int_equal(statedir_resolve("/x", "/my/state", out,
	    sizeof(out)), 0);
	assert_string_equal(out, "/my/state");
	assert_int_equal(statedir_resolve("relative", NULL, out, sizeof(out)),
	    -EINVAL);
	assert_int_equal(statedir_resolve("/home/dev/games/orbit", NULL, out,
	    10), -ENAMETOOLONG);

	if (home)
		setenv("HOME", home, 1);
	if (xdg)
		setenv("XDG_STATE_HOME", xdg, 1);
	else
		unsetenv("XDG_STATE_HOME");
	free(home);
	free(xdg);
}

static void
statedir_make_and_lock(void **state)
{
	struct fx	*fx = *state;
	char		 dir[PATH_MAX + 64], lockfile[PATH_MAX + 72];
	char		 pidtxt[32];
	struct stat	 st;
	pid_t		 holder;
	int		 fd, fd2, status;
	pid_t		 pid;

	snprintf(dir, sizeof(dir), "%s/a/b/sloptimize/orbit-01234567",
	    fx->root);
	assert_int_equal(statedir_make(dir), 0);
	assert_int_equal(statedir_make(dir), 0);	/* idempotent */
	assert_int_equal(stat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);

	assert_int_equal(statedir_lock(dir, &fd, &holder), 0);
	assert_true(fd >= 0);
	snprintf(lockfile, sizeof(lockfile), "%s/lock", dir);
	pidtxt[unitfs_get(lockfile, pidtxt, sizeof(pidtxt) - 1)] = '\0';
	assert_int_equal(strtol(pidtxt, NULL, 10), (long)getpid());

	/* A second daemon (another process) is refused and told who. */
	if ((pid = fork()) == 0) {
		int	rc = statedir_lock(dir, &fd2, &holder);

		_exit(rc == -EBUSY && holder == getppid() ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	/* Released, it can be taken again. */
	statedir_unlock(fd);
	assert_int_equal(statedir_lock(dir, &fd2, &holder), 0);
	statedir_unlock(fd2);
	statedir_unlock(-1);
}

/* --- the atomic pair ---------------------------------------------------- */

/* What is written is what is read, with the mode asked for and no temp
 * file left; a second write replaces the first whole. */
static void
statedir_write_read_round_trip(void **state)
{
	struct fx	*fx = *state;
	char		 buf[64];
	struct stat	 st;
	size_t		 n;

	umask(022);
	assert_int_equal(statedir_write(fx->file, "first version\n", 14,
	    0600), 0);
	assert_int_equal(stat(fx->file, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(statedir_read(fx->file, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 14);
	assert_memory_equal(buf, "first version\n", 14);
	assert_int_equal(statedir_write(fx->file, "v2", 2, 0644), 0);
	assert_int_equal(statedir_read(fx->file, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 2);
	assert_memory_equal(buf, "v2", 2);
	assert_int_equal(stat(fx->file, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(access(fx->tmp, F_OK), -1);
	/* empty is a content too */
	assert_int_equal(statedir_write(fx->file, "", 0, 0644), 0);
	assert_int_equal(statedir_read(fx->file, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 0);
}

/* A slot is made whole when missing, replaced in place, read back only
 * when its checksum holds; a torn record (a power cut), a wrong size or
 * something that is not a regular file is refused. */
static void
statedir_slot_round_trip(void **state)
{
	struct fx	*fx = *state;
	char		 text[STATEDIR_SLOT_SIZE], rec[STATEDIR_SLOT_SIZE];
	struct stat	 st;
	size_t		 n;
	int		 fd, rd;

	assert_int_equal(statedir_slot_read(fx->file, text, sizeof(text)),
	    -ENOENT);
	assert_int_equal(statedir_slot_open(fx->file, "v 1\nsaid -\n", 0644,
	    &fd), 0);
	assert_int_equal(stat(fx->file, &st), 0);
	assert_int_equal(st.st_size, STATEDIR_SLOT_SIZE);
	assert_int_equal(statedir_slot_read(fx->file, text, sizeof(text)), 0);
	assert_string_equal(text, "v 1\nsaid -\n");
	assert_int_equal(statedir_slot_write(fd, "v 1\nsaid 3:1048576\n"), 0);
	assert_int_equal(statedir_slot_read(fx->file, text, sizeof(text)), 0);
	assert_string_equal(text, "v 1\nsaid 3:1048576\n");
	assert_int_equal(stat(fx->file, &st), 0);
	assert_int_equal(st.st_size, STATEDIR_SLOT_SIZE);
	assert_int_equal(access(fx->tmp, F_OK), -1);
	/* too long: refused, the record stays */
	memset(rec, 'x', 100);
	rec[100] = '\0';
	assert_int_equal(statedir_slot_write(fd, rec), -EINVAL);
	assert_int_equal(statedir_slot_read(fx->file, text, sizeof(text)), 0);
	assert_string_equal(text, "v 1\nsaid 3:1048576\n");
	/* an open of an existing slot keeps its record */
	statedir_slot_close(fd);
	assert_int_equal(statedir_slot_open(fx->file, "v 1\nsaid -\n", 0644,
	    &fd), 0);
	assert_int_equal(statedir_slot_read(fx->file, text, sizeof(text)), 0);
	assert_string_equal(text, "v 1\nsaid 3:1048576\n");
	statedir_slot_close(fd);
	/* torn: one digit of the text changed, the checksum no longer holds */
	assert_int_equal(statedir_read(fx->file, rec, sizeof(rec), &n), 0);
	rec[10] = '9';
	assert_int_equal((rd = open(fx->file, O_WRONLY)) >= 0, 1);
	assert_int_equal(pwrite(rd, rec, n, 0), (ssize_t)n);
	assert_int_equal(statedir_slot_read(fx->file, text, sizeof(text)),
	    -EBADMSG);
	/* a short file */
	assert_int_equal(ftruncate(rd, 40), 0);
	close(rd);
	assert_int_equal(statedir_slot_read(fx->file, text, sizeof(text)),
	    -EBADMSG);
	/* a directory where the slot should be */
	unlink(fx->file);
	assert_int_equal(mkdir(fx->file, 0700), 0);
	assert_int_equal(statedir_slot_open(fx->file, "v 1\n", 0644, &fd),
	    -ESPIPE);
	assert_int_equal(fd, -1);
	rmdir(fx->file);
	statedir_slot_close(-1);
}

/* A temp file a kill -9 left behind (even one we may not write, or of
 * another mode) is replaced, not appended to or trusted. */
static void
statedir_write_replaces_stale_temp(void **state)
{
	struct fx	*fx = *state;
	char		 buf[64];
	struct stat	 st;
	size_t		 n;

	unitfs_puts(fx->tmp, "garbage from a crash, longer than the new content");
	assert_int_equal(chmod(fx->tmp, 0444), 0);
	assert_int_equal(statedir_write(fx->file, "ok", 2, 0600), 0);
	assert_int_equal(statedir_read(fx->file, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 2);
	assert_memory_equal(buf, "ok", 2);
	assert_int_equal(stat(fx->file, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(access(fx->tmp, F_OK), -1);
}

/* When the rename cannot happen the old content stays and no temp file
 * is left (here the path is a non-empty directory). */
static void
statedir_write_failure_keeps_old(void **state)
{
	struct fx	*fx = *state;
	char		 inner[PATH_MAX + 32];

	assert_int_equal(mkdir(fx->file, 0700), 0);
	snprintf(inner, sizeof(inner), "%s/keep", fx->file);
	unitfs_puts(inner, "kept");
	assert_true(statedir_write(fx->file, "new", 3, 0600) < 0);
	assert_int_equal(access(fx->tmp, F_OK), -1);
	assert_int_equal(access(inner, F_OK), 0);
	/* a directory that does not exist: an error, nothing created */
	snprintf(inner, sizeof(inner), "%s/no/such/file", fx->root);
	assert_int_equal(statedir_write(inner, "x", 1, 0600), -ENOENT);
}

/* The reader: missing, too long, and anything but a regular file —
 * a FIFO must not block it, a symlink must not be followed. */
static void
statedir_read_refuses(void **state)
{
	struct fx	*fx = *state;
	char		 buf[8], link[PATH_MAX + 32];
	size_t		 n = 99;

	assert_int_equal(statedir_read(fx->file, buf, sizeof(buf), &n),
	    -ENOENT);
	assert_int_equal(n, 0);
	unitfs_puts(fx->file, "12345678");
	assert_int_equal(statedir_read(fx->file, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 8);
	unitfs_puts(fx->file, "123456789");
	assert_int_equal(statedir_read(fx->file, buf, sizeof(buf), &n),
	    -EFBIG);
	assert_int_equal(unlink(fx->file), 0);
	assert_int_equal(mkfifo(fx->file, 0600), 0);
	assert_int_equal(statedir_read(fx->file, buf, sizeof(buf), &n),
	    -ESPIPE);
	snprintf(link, sizeof(link), "%s/link", fx->root);
	unitfs_puts(fx->tmp, "secret");
	assert_int_equal(symlink(fx->tmp, link), 0);
	assert_int_equal(statedir_read(link, buf, sizeof(buf), &n), -ESPIPE);
	assert_int_equal(statedir_remove(link), 0);
	assert_int_equal(statedir_remove(link), 0);	/* already gone */
}

/* The streamed writer: pieces in order make the file; a fill that fails
 * part way leaves the old content and no temp file. */
struct pieces {
	int	n, fail_at;
};

static int
fill_pieces(void *arg, statedir_put_fn *put_fn, void *put_arg)
{
	struct pieces	*p = arg;
	char		 piece[16];
	int		 i, rc;

	for (i = 0; i < p->n; i++) {
		if (i == p->fail_at)
			return -ENOSPC;
		snprintf(piece, sizeof(piece), "%d,", i);
		if ((rc = put_fn(put_arg, piece, strlen(piece))) != 0)
			return rc;
	}
	return 0;
}

static void
statedir_write_with_streams(void **state)
{
	struct fx	*fx = *state;
	struct pieces	 p = { 5, -1 };
	char		 buf[64];
	size_t		 n;
	struct stat	 st;

	assert_int_equal(statedir_write_with(fx->file, 0600, fill_pieces, &p),
	    0);
	assert_int_equal(statedir_read(fx->file, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 10);
	assert_memory_equal(buf, "0,1,2,3,4,", 10);
	assert_int_equal(stat(fx->file, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	p.n = 9;
	p.fail_at = 7;
	assert_int_equal(statedir_write_with(fx->file, 0600, fill_pieces, &p),
	    -ENOSPC);
	assert_int_equal(statedir_read(fx->file, buf, sizeof(buf), &n), 0);
	assert_int_equal(n, 10);
	assert_int_equal(access(fx->tmp, F_OK), -1);
}

/* The opener for files read as they go: the reader's rules, and the
 * length. */
static void
statedir_open_refuses(void **state)
{
	struct fx	*fx = *state;
	char		 link[PATH_MAX + 32], buf[4];
	uint64_t	 size = 99;
	int		 fd = 7;

	assert_int_equal(statedir_open(fx->file, &fd, &size), -ENOENT);
	assert_int_equal(fd, -1);
	unitfs_puts(fx->file, "abc");
	assert_int_equal(statedir_open(fx->file, &fd, &size), 0);
	assert_int_equal(size, 3);
	assert_int_equal(read(fd, buf, sizeof(buf)), 3);
	close(fd);
	snprintf(link, sizeof(link), "%s/link", fx->root);
	assert_int_equal(symlink(fx->file, link), 0);
	assert_int_equal(statedir_open(link, &fd, &size), -ESPIPE);
	assert_int_equal(unlink(fx->file), 0);
	assert_int_equal(mkfifo(fx->file, 0600), 0);
	assert_int_equal(statedir_open(fx->file, &fd, &size), -ESPIPE);
	assert_int_equal(fd, -1);
}

/* --- the files ---------------------------------------------------------- */

static void
statedir_token_made_and_kept(void **state)
{
	struct fx	*fx = *state;
	char		 tok[STATEDIR_TOKEN_LEN + 1], again[STATEDIR_TOKEN_LEN + 1];
	char		 path[PATH_MAX + 16], buf[128];
	struct stat	 st;
	unsigned	 what;
	size_t		 i;

	snprintf(path, sizeof(path), "%s/token", fx->root);
	assert_int_equal(statedir_token(fx->root, tok, &what), 0);
	assert_int_equal(what, STATEDIR_TOKEN_MADE);
	assert_int_equal(strlen(tok), STATEDIR_TOKEN_LEN);
	for (i = 0; i < STATEDIR_TOKEN_LEN; i++)
		assert_non_null(strchr("0123456789abcdef", tok[i]));
	assert_int_equal(unitfs_get(path, buf, sizeof(buf)), STATEDIR_TOKEN_LEN + 1);
	assert_memory_equal(buf, tok, STATEDIR_TOKEN_LEN);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	/* kept across restarts; a loose mode is tightened */
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(statedir_token(fx->root, again, &what), 0);
	assert_int_equal(what, STATEDIR_TOKEN_CHMOD);
	assert_string_equal(again, tok);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	/* a damaged one is replaced */
	unitfs_puts(path, "not a token\n");
	assert_int_equal(statedir_token(fx->root, again, &what), 0);
	assert_true(what & STATEDIR_TOKEN_REMADE);
	assert_int_equal(strlen(again), STATEDIR_TOKEN_LEN);
	assert_string_not_equal(again, tok);
}

static void
statedir_settings_round_trip(void **state)
{
	struct fx	*fx = *state;
	char		 loop[16], path[PATH_MAX + 32];

	assert_int_equal(statedir_settings_read(fx->root, loop, sizeof(loop)),
	    -ENOENT);
	assert_int_equal(statedir_settings_write(fx->root, "propose",
	    1796000000000), 0);
	assert_int_equal(statedir_settings_read(fx->root, loop, sizeof(loop)),
	    0);
	assert_string_equal(loop, "propose");
	assert_int_equal(statedir_settings_write(fx->root, "sometimes", 0),
	    -EINVAL);
	snprintf(path, sizeof(path), "%s/settings.json", fx->root);
	unitfs_puts(path, "{\"loop\":\"max\"}");
	assert_int_equal(statedir_settings_read(fx->root, loop, sizeof(loop)),
	    -EBADMSG);
	unitfs_puts(path, "{\"loop\":");
	assert_int_equal(statedir_settings_read(fx->root, loop, sizeof(loop)),
	    -EBADMSG);
	assert_true(statedir_loop_valid("off") && statedir_loop_valid("apply"));
	assert_false(statedir_loop_valid("") || statedir_loop_valid(NULL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(statedir_resolve_paths),
		cmocka_unit_test_setup_teardown(statedir_make_and_lock, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(statedir_write_read_round_trip,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    statedir_write_replaces_stale_temp, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    statedir_write_failure_keeps_old, setup, teardown),
		cmocka_unit_test_setup_teardown(statedir_write_with_streams,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(statedir_open_refuses, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(statedir_slot_round_trip, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(statedir_read_refuses, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(statedir_token_made_and_kept,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(statedir_settings_round_trip,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
