/*
 * fstrust — which filesystems' change events are trusted (fstrust.h).
 *
 * Linux names a filesystem by its statfs(2) magic number, the BSDs and
 * macOS by f_fstypename.  The tables list what we know to be unreliable;
 * anything else counts as local.
 */
#if defined(__linux__)
#include <sys/vfs.h>
#else
#include <sys/param.h>
#include <sys/mount.h>
#endif

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "watchers/fstrust.h"

/* The name of an untrusted filesystem holding path, or NULL. */
static const char *
untrusted(const char *path)
{
#if defined(__linux__)
	static const struct {
		unsigned long	 magic;
		const char	*name;
	} bad[] = {
		{ 0x6969, "NFS" },
		{ 0x517B, "SMB" },
		{ 0xFE534D42, "SMB2" },
		{ 0xFF534D42, "CIFS" },
		{ 0x65735546, "FUSE" },
		{ 0x01021997, "9p" },
		{ 0x73757245, "Coda" },
		{ 0x5346414F, "AFS" },
		{ 0x6B414653, "kAFS" },
		{ 0x00C36400, "Ceph" },
		{ 0x0BD00BD0, "Lustre" },
		{ 0x786F4256, "vboxsf" },
	};
	struct statfs	sf;
	size_t		i;

	if (statfs(path, &sf) == -1)
		return NULL;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if ((unsigned long)(uint32_t)sf.f_type == bad[i].magic)
			return bad[i].name;
	return NULL;
#else
	static const char *bad[] = { "nfs", "smbfs", "afpfs", "webdav",
	    "macfuse", "osxfuse", "fusefs", "cifs" };
	struct statfs	sf;
	size_t		i;

	if (statfs(path, &sf) == -1)
		return NULL;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (strncmp(sf.f_fstypename, bad[i], strlen(bad[i])) == 0)
			return bad[i];
	return NULL;
#endif
}

int
fstrust_check(const char *path, char *why, size_t cap)
{
	const char	*fs = untrusted(path);

	if (fs != NULL) {
		snprintf(why, cap, "%s filesystem: its change events cannot "
		    "be trusted", fs);
		return 0;
	}
	snprintf(why, cap, "local filesystem: kernel change events");
	return 1;
}
