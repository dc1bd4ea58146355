/*
 * Cgroup ids named back (cgroup.h), for the front ends and the backends
 * alike.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "options.h"

const char *cgroup_path_of_id(uint64_t id, char *buf, size_t size)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh = { .handle_bytes = sizeof(uint64_t), .handle_type = 0xfe } };
	char link[64], target[PATH_MAX];
	size_t root = strlen(cgroupfs_dir);
	ssize_t n;
	int mnt, fd;

	if (id <= 1) {
		snprintf(buf, size, "%s", id ? "/" : "(system)");
		return buf;
	}
	/* A cgroup2 file handle is its id (FILEID_KERNFS) */
	h.id = id;
	mnt = open(cgroupfs_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fd = mnt < 0 ? -1 : open_by_handle_at(mnt, &h.fh, O_RDONLY | O_CLOEXEC);
	if (mnt >= 0)
		close(mnt);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = fd < 0 ? -1 : readlink(link, target, sizeof(target) - 1);
	if (fd >= 0)
		close(fd);
	if (n < 0) {
		snprintf(buf, size, "(removed #%llu)", (unsigned long long)id);
		return buf;
	}
	target[n] = '\0';
	snprintf(buf, size, "%s", strncmp(target, cgroupfs_dir, root) ? target :
		 target[root] ? target + root : "/");
	return buf;
}
