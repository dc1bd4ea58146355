/* oomctl's state in bpffs, the event log's recorder, and small helpers. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "main.h"
#include "state.h"
#include "recorder.skel.h"

int kernel_check(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int id;

	if (!btf) {
		p_err("cannot read the kernel's BTF (/sys/kernel/btf/vmlinux): %s",
		      strerror(errno));
		return -EOPNOTSUPP;
	}
	id = btf__find_by_name_kind(btf, "bpf_handle_out_of_memory", BTF_KIND_FUNC);
	btf__free(btf);
	if (id < 0) {
		p_err("this kernel lacks the BPF OOM hooks (no bpf_handle_out_of_memory)");
		return -EOPNOTSUPP;
	}
	return 0;
}

int state_path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n, m;

	n = snprintf(buf, size, "%s/", bpffs_dir);
	va_start(ap, fmt);
	m = vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
	return n + m < (int)size ? 0 : -ENAMETOOLONG;
}

int state_init(void)
{
	char parent[PATH_MAX], *slash;
	struct statfs st;

	snprintf(parent, sizeof(parent), "%s", bpffs_dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	if (statfs(parent, &st) || st.f_type != BPF_FS_MAGIC) {
		p_err("no bpf file system at %s (mount -t bpf bpf %s)", parent, parent);
		return -ENOENT;
	}
	if (mkdir(bpffs_dir, 0700) && errno != EEXIST) {
		p_err("cannot create %s: %s", bpffs_dir, strerror(errno));
		return -errno;
	}
	return 0;
}

int state_lock(void)
{
	int fd = open(bpffs_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	/* Held until exit; bpffs directories can be flock()ed */
	if (fd < 0 || flock(fd, LOCK_EX)) {
		p_err("cannot lock %s: %s", bpffs_dir, strerror(errno));
		return -errno;
	}
	return 0;
}

int state_map_fd(const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (state_path(path, sizeof(path), "%s", name))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

void open_opts_debug(struct bpf_object_open_opts *opts)
{
	if (debug)
		opts->kernel_log_level = 1 | 2 | 4;
}

int state_unpin_dir(const char *dir)
{
	char path[PATH_MAX + 256];
	struct dirent *de;
	int err = 0;
	DIR *d;

	/* Our pin folders are flat: links and maps, no subfolders */
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path))
			err = -errno;
	}
	closedir(d);
	if (rmdir(dir) && !err)
		err = -errno;
	if (err)
		p_info("could not remove %s: %s", dir, strerror(-err));
	return err;
}

int recorder_ensure(void)
{
	static const char * const names[] = { "events", "events_head", "policy_kills" };
	char dir[PATH_MAX], tmp[PATH_MAX + 8], pin[PATH_MAX + 64];
	bool pinned[3] = {};
	struct recorder_bpf *skel;
	struct bpf_program *prog;
	struct bpf_map *maps[3];
	struct stat st;
	int err = 0, fd;

	if (state_path(dir, sizeof(dir), "recorder"))
		return -ENAMETOOLONG;
	if (!stat(dir, &st))
		return 0;

	skel = recorder_bpf__open();
	if (!skel) {
		p_err("cannot open the event recorder: %s", strerror(errno));
		return -errno;
	}
	maps[0] = skel->maps.oom_events;
	maps[1] = skel->maps.oom_events_head;
	maps[2] = skel->maps.policy_kills;
	/* Keep a log that outlived an earlier recorder */
	for (int i = 0; i < 3; i++) {
		fd = state_map_fd(names[i]);
		if (fd >= 0) {
			bpf_map__reuse_fd(maps[i], fd);
			close(fd);
			pinned[i] = true;	/* not ours to remove */
		}
	}
	err = recorder_bpf__load(skel);
	if (err) {
		if (kernel_check())
			err = -EOPNOTSUPP;
		else
			p_err("the kernel refused the event recorder: %s", strerror(-err));
		goto out;
	}
	for (int i = 0; i < 3; i++) {
		if (pinned[i])
			continue;
		state_path(pin, sizeof(pin), "%s", names[i]);
		err = bpf_map__pin(maps[i], pin);
		if (err) {
			p_err("cannot pin %s: %s", pin, strerror(-err));
			goto out;
		}
	}

	/* Pin the links in a scratch folder, then publish it with rename() */
	snprintf(tmp, sizeof(tmp), "%s-new", dir);	/* bpffs names have no dots */
	state_unpin_dir(tmp);
	if (mkdir(tmp, 0700)) {
		err = -errno;
		p_err("cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_link *link = bpf_program__attach(prog);

		if (!link) {
			err = -errno;
			p_err("cannot attach the recorder's %s: %s",
			      bpf_program__name(prog), strerror(errno));
			break;
		}
		snprintf(pin, sizeof(pin), "%s/%s", tmp, bpf_program__name(prog));
		err = bpf_link__pin(link, pin);
		bpf_link__disconnect(link);
		bpf_link__destroy(link);
		if (err) {
			p_err("cannot pin %s: %s", pin, strerror(-err));
			break;
		}
	}
	if (!err && rename(tmp, dir)) {
		err = -errno;
		p_err("cannot rename %s: %s", tmp, strerror(errno));
	}
	if (err)
		state_unpin_dir(tmp);
out:
	if (err)
		for (int i = 0; i < 3; i++)
			if (!pinned[i]) {
				state_path(pin, sizeof(pin), "%s", names[i]);
				unlink(pin);
			}
	recorder_bpf__destroy(skel);
	return err;
}

int registry_fd(bool create)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	char path[PATH_MAX];
	int fd, err;

	fd = state_map_fd("policies");
	if (fd >= 0 || !create)
		return fd;
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "oomctl_policies",
			    POLICY_NAME_LEN, sizeof(struct policy_meta), 256,
			    &opts);
	if (fd < 0) {
		p_err("cannot create the policy registry: %s", strerror(errno));
		return -errno;
	}
	state_path(path, sizeof(path), "policies");
	if (bpf_obj_pin(fd, path)) {
		err = -errno;
		p_err("cannot pin %s: %s", path, strerror(errno));
		close(fd);
		return err;
	}
	return fd;
}

static void registry_key(const char *name, char key[POLICY_NAME_LEN])
{
	memset(key, 0, POLICY_NAME_LEN);
	snprintf(key, POLICY_NAME_LEN, "%s", name);
}

int registry_get(const char *name, struct policy_meta *meta)
{
	char key[POLICY_NAME_LEN];
	int fd = registry_fd(false), err;

	if (fd < 0)
		return -ENOENT;
	registry_key(name, key);
	err = bpf_map_lookup_elem(fd, key, meta) ? -errno : 0;
	close(fd);
	return err;
}

static int by_attach_time(const void *a, const void *b)
{
	const struct policy_meta *x = a, *y = b;

	return x->attach_time_ns < y->attach_time_ns ? -1 :
	       x->attach_time_ns > y->attach_time_ns;
}

int registry_list(struct policy_meta *metas, int max)
{
	char key[POLICY_NAME_LEN], next[POLICY_NAME_LEN];
	int fd = registry_fd(false), n = 0;
	void *prev = NULL;

	if (fd < 0)
		return 0;
	while (n < max && !bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, sizeof(key));
		prev = key;
		if (!bpf_map_lookup_elem(fd, key, &metas[n]))
			n++;
	}
	close(fd);
	qsort(metas, n, sizeof(*metas), by_attach_time);
	return n;
}

/*
 * Names of every policy ever attached, by cookie, kept after detach so the
 * log still says who killed. LRU: bounded, the oldest names go first.
 */
int policy_names_fd(bool create)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	char path[PATH_MAX];
	int fd;

	fd = state_map_fd("policy_names");
	if (fd >= 0 || !create)
		return fd;
	fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "oomctl_names", sizeof(uint64_t),
			    POLICY_NAME_LEN, 4096, &opts);
	if (fd < 0)
		return -errno;
	state_path(path, sizeof(path), "policy_names");
	if (bpf_obj_pin(fd, path)) {
		close(fd);
		return -errno;
	}
	return fd;
}

const char *policy_name_of_cookie(uint64_t cookie, char *buf, size_t size)
{
	char name[POLICY_NAME_LEN];
	int fd = policy_names_fd(false);

	if (fd >= 0 && !bpf_map_lookup_elem(fd, &cookie, name))
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "policy#%llu", (unsigned long long)cookie);
	if (fd >= 0)
		close(fd);
	return buf;
}

int syscall_prog_run(int prog_fd, void *ctx, size_t size)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = ctx, .ctx_size_in = size);

	/* A syscall program's context is copied back into ctx_in */

	return bpf_prog_test_run_opts(prog_fd, &opts) ? -errno : 0;
}

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

uint64_t boot_to_realtime(uint64_t boot_ns)
{
	struct timespec real, boot;

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	return real.tv_sec * 1000000000ULL + real.tv_nsec -
	       (boot.tv_sec * 1000000000ULL + boot.tv_nsec - boot_ns);
}
