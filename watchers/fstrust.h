/*
 * fstrust — the one rule for where the kernel's change events (inotify,
 * kqueue) can be trusted for a ledger file, and where only a stat poll
 * sees everything (DESIGN §8.8).  The tailer picks its backend with it;
 * `sloptimize doctor` says what the tailer will pick by calling the same
 * function, so the two can never disagree.
 *
 * Network and FUSE filesystems either send no events for changes made on
 * the far side (NFS, SMB, 9p, AFS, Ceph, …) or forward them unreliably
 * (FUSE, vboxsf).  A path statfs(2) cannot look at is trusted: the watch
 * itself is then tried, and if it cannot be added the tailer polls and
 * says why.
 */
#ifndef WATCHERS_FSTRUST_H
#define WATCHERS_FSTRUST_H

#include <stddef.h>

/* The backend the kernel's events come through on this platform. */
#if defined(__linux__)
#define FSTRUST_EVENTS	"inotify"
#else
#define FSTRUST_EVENTS	"kqueue"
#endif

/*
 * Can the kernel's change events be trusted for files in the filesystem
 * holding `path`?  Returns 1 (yes: "local filesystem: kernel change
 * events") or 0 (no: "<name> filesystem: its change events cannot be
 * trusted"), with that sentence in why[cap] either way.  Blocks on
 * statfs(2): call it off the loop or at start-up.
 */
int	fstrust_check(const char *path, char *why, size_t cap);

#endif
