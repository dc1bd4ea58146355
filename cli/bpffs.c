/*
 * oomctl's state in bpffs (bpffs.h): the folder, its lock, the pinned maps,
 * the policy registry and the event log's recorder.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <zlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "options.h"
#include "output.h"
#include "bpffs.h"
#include "kernel.h"
#include "recorder.skel.h"

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
	if ((mkdir(bpffs_dir, 0700) && errno != EEXIST) ||
	    access(bpffs_dir, R_OK | W_OK | X_OK)) {
		int err = -errno;	/* p_err() may change errno */

		/* Root's folder: an empty answer would be a false one */
		if (err == -EACCES || err == -EPERM)
			p_err("%s is root's: this needs root", bpffs_dir);
		else
			p_err("cannot create %s: %s", bpffs_dir, strerror(-err));
		return err;
	}
	return 0;
}

/* Ours while >= 0: a second flock() of ours would wait forever */
static int lock_fd = -1;

int state_lock(void)
{
	int fd;

	if (lock_fd >= 0)
		return 0;
	fd = open(bpffs_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* Held until exit or state_unlock(); bpffs folders can be flock()ed */
	if (fd < 0 || flock(fd, LOCK_EX)) {
		int err = -errno;	/* p_err() may change errno */

		p_err("cannot lock %s: %s", bpffs_dir, strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	lock_fd = fd;
	return 0;
}

static void state_unlock(void)
{
	if (lock_fd >= 0)
		close(lock_fd);
	lock_fd = -1;
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

/*
 * Once pinned, free @link and close our fd, without detaching. A
 * disconnected link's bpf_link__destroy() leaves its fd open: a process
 * that lives on (oomctl units) would hold the link, and a policy it
 * unpins later would stay attached. Not pinned, it is destroyed: detached.
 */
int link_pin_release(struct bpf_link *link, const char *pin)
{
	int fd = bpf_link__fd(link), err = bpf_link__pin(link, pin);

	if (err) {
		bpf_link__destroy(link);
		p_err("cannot pin %s: %s", pin, strerror(-err));
		return err;
	}
	bpf_link__disconnect(link);
	bpf_link__destroy(link);
	close(fd);
	return 0;
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

/*
 * An older oomctl's log, whose records have another layout (struct
 * oom_event's size tells): it would be misread, and the programs here
 * cannot share its maps.
 */
static bool log_stale(void)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);
	int fd = state_map_fd("events");
	bool stale;

	if (fd < 0)
		return false;
	stale = !bpf_obj_get_info_by_fd(fd, &info, &len) &&
		info.value_size != sizeof(struct oom_event);
	close(fd);
	return stale;
}

/*
 * A recorder of an older oomctl: one that saw PSI events at the PSI hook
 * only, before handlers owned triggers, or one that kept no counts
 * (oom_counts) or kill times (oom_kill_times) beside the log. Its links
 * go, its log stays.
 */
#define RECORDER_CURRENT_PROG	"record_psi_event"

static bool recorder_outdated(const char *recorder_dir)
{
	char pin[PATH_MAX + 32];
	struct stat st;

	if (stat(recorder_dir, &st))
		return false;
	snprintf(pin, sizeof(pin), "%s/" RECORDER_CURRENT_PROG, recorder_dir);
	if (stat(pin, &st))
		return true;
	state_path(pin, sizeof(pin), "counts");
	if (stat(pin, &st))
		return true;
	state_path(pin, sizeof(pin), "kill_times");
	return stat(pin, &st);
}

/* Unpin a stale log and its recorder, for a new one */
static void drop_stale_log(const char *recorder_dir)
{
	char pin[PATH_MAX];

	if (!log_stale())
		return;
	p_info("the event log under %s is in an older format: starting a new one",
	       bpffs_dir);
	state_unpin_dir(recorder_dir);
	state_path(pin, sizeof(pin), "events");
	unlink(pin);
	state_path(pin, sizeof(pin), "events_head");
	unlink(pin);
}

static int recorder_create(const char *dir);

/*
 * Under the state lock: two first uses at once (the boot unit and an
 * exporter's timer) must not both create it, nor the loser remove what the
 * winner pinned. A reader that finds it whole takes no lock; one that had
 * to create it lets the lock go after.
 */
int recorder_ensure(void)
{
	char dir[PATH_MAX];
	bool had_lock = lock_fd >= 0;
	struct stat st;
	int err;

	if (state_path(dir, sizeof(dir), "recorder"))
		return -ENAMETOOLONG;
	if (!stat(dir, &st) && !log_stale() && !recorder_outdated(dir))
		return 0;
	err = state_lock();
	if (err)
		return err;
	drop_stale_log(dir);
	if (recorder_outdated(dir))
		state_unpin_dir(dir);
	err = stat(dir, &st) ? recorder_create(dir) : 0;
	if (!had_lock)
		state_unlock();
	return err;
}

static int recorder_create(const char *dir)
{
	static const char * const names[] = {
		"events", "events_head", "policy_kills", "policy_cgroups",
		"counts", "counts_other", "kill_times",
	};
	enum { NR_MAPS = sizeof(names) / sizeof(*names) };
	char tmp[PATH_MAX + 8], pin[PATH_MAX + 64];
	bool pinned[NR_MAPS] = {}, created[NR_MAPS] = {};
	struct recorder_bpf *skel;
	struct bpf_program *prog;
	struct bpf_map *maps[NR_MAPS];
	int err = 0, fd;

	skel = recorder_bpf__open();
	if (!skel) {
		err = -errno;
		p_err("cannot open the event recorder: %s", strerror(-err));
		return err;
	}
	maps[0] = skel->maps.oom_events;
	maps[1] = skel->maps.oom_events_head;
	maps[2] = skel->maps.policy_kills;
	maps[3] = skel->maps.policy_cgroups;
	maps[4] = skel->maps.oom_counts;
	maps[5] = skel->maps.oom_counts_other;
	maps[6] = skel->maps.oom_kill_times;
	/* Keep a log that outlived an earlier recorder */
	for (int i = 0; i < NR_MAPS; i++) {
		fd = state_map_fd(names[i]);
		if (fd >= 0) {
			bpf_map__reuse_fd(maps[i], fd);
			close(fd);
			pinned[i] = true;	/* not ours to remove */
		}
	}
	err = recorder_bpf__load(skel);
	if (err) {
		load_failed("the event recorder", err);
		goto out;
	}
	for (int i = 0; i < NR_MAPS; i++) {
		if (pinned[i])
			continue;
		state_path(pin, sizeof(pin), "%s", names[i]);
		err = bpf_map__pin(maps[i], pin);
		if (err) {
			p_err("cannot pin %s: %s", pin, strerror(-err));
			goto out;
		}
		created[i] = true;
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
		err = link_pin_release(link, pin);
		if (err)
			break;
	}
	if (!err && rename(tmp, dir)) {
		err = -errno;
		p_err("cannot rename %s: %s", tmp, strerror(errno));
	}
	if (err)
		state_unpin_dir(tmp);
out:
	/* Only what this call pinned: the rest is an earlier log's */
	if (err)
		for (int i = 0; i < NR_MAPS; i++)
			if (created[i]) {
				state_path(pin, sizeof(pin), "%s", names[i]);
				unlink(pin);
			}
	recorder_bpf__destroy(skel);
	return err;
}

/* A map an older oomctl pinned, with another layout, would be misread */
static int state_map_layout_check(const struct state_map_def *def, int fd)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    (info.key_size == def->key_size &&
	     info.value_size == def->value_size))
		return fd;
	close(fd);
	if (def->what)
		p_err("%s under %s is another oomctl version's: detach its policies with that version, or remove %s",
		      def->what, bpffs_dir, bpffs_dir);
	return -EPROTO;
}

int state_map_get(const struct state_map_def *def, bool create)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = def->flags);
	char path[PATH_MAX];
	int fd, err;

	fd = state_map_fd(def->pin);
	if (fd >= 0)
		return state_map_layout_check(def, fd);
	if (!create)
		return fd;
	fd = bpf_map_create(def->type, def->name, def->key_size,
			    def->value_size, def->max_entries, &opts);
	if (fd < 0) {
		err = -errno;
		if (def->what)
			p_err("cannot create %s: %s", def->what, strerror(-err));
		return err;
	}
	state_path(path, sizeof(path), "%s", def->pin);
	if (bpf_obj_pin(fd, path)) {
		err = -errno;
		if (def->what)
			p_err("cannot pin %s: %s", path, strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

int registry_fd(bool create)
{
	static const struct state_map_def def = {
		.pin = "policies", .name = "oomctl_policies",
		.what = "the policy registry", .type = BPF_MAP_TYPE_HASH,
		.key_size = POLICY_NAME_LEN,
		.value_size = sizeof(struct policy_meta),
		.max_entries = REGISTRY_MAX,
		/* entries of 4 KiB paths: memory only for those in use */
		.flags = BPF_F_NO_PREALLOC,
	};

	return state_map_get(&def, create);
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

int registry_list(struct policy_meta **metasp)
{
	char key[POLICY_NAME_LEN], next[POLICY_NAME_LEN];
	/* on the heap: the whole registry is some 50 KiB */
	struct policy_meta *metas = calloc(REGISTRY_MAX, sizeof(*metas));
	int fd, n = 0;
	void *prev = NULL;

	*metasp = metas;
	if (!metas) {
		p_err("out of memory");
		return -ENOMEM;
	}
	fd = registry_fd(false);
	if (fd < 0)
		return 0;
	while (n < REGISTRY_MAX && !bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, sizeof(key));
		prev = key;
		if (!bpf_map_lookup_elem(fd, key, &metas[n]))
			n++;
	}
	close(fd);
	qsort(metas, n, sizeof(*metas), by_attach_time);
	return n;
}

static int scope_paths_fd(bool create)
{
	/* no what: the registry says what is attached, this only names it */
	static const struct state_map_def def = {
		.pin = "scope_paths", .name = "oomctl_scopes",
		.type = BPF_MAP_TYPE_HASH, .key_size = POLICY_NAME_LEN,
		.value_size = PATH_MAX, .max_entries = REGISTRY_MAX,
		.flags = BPF_F_NO_PREALLOC,
	};

	return state_map_get(&def, create);
}

int scope_path_set(const char *name, const char *path)
{
	char key[POLICY_NAME_LEN], value[PATH_MAX] = {};
	int fd = scope_paths_fd(true), err;

	if (fd < 0)
		return fd;
	registry_key(name, key);
	snprintf(value, sizeof(value), "%s", path);
	err = bpf_map_update_elem(fd, key, value, BPF_ANY) ? -errno : 0;
	close(fd);
	return err;
}

int scope_path_get(const char *name, char *buf, size_t size)
{
	char key[POLICY_NAME_LEN], value[PATH_MAX];
	int fd = scope_paths_fd(false), err;

	if (fd < 0)
		return fd;
	registry_key(name, key);
	err = bpf_map_lookup_elem(fd, key, value) ? -errno : 0;
	close(fd);
	if (!err)
		snprintf(buf, size, "%.*s", (int)sizeof(value), value);
	return err;
}

void scope_path_drop(const char *name)
{
	char key[POLICY_NAME_LEN];
	int fd = scope_paths_fd(false);

	if (fd < 0)
		return;
	registry_key(name, key);
	bpf_map_delete_elem(fd, key);
	close(fd);
}

/*
 * Names of every policy ever attached, by cookie, kept after detach so the
 * log still says who killed. LRU: bounded, the oldest names go first.
 */
int policy_names_fd(bool create)
{
	/* no what: a missing name is no reason to fail an attach */
	static const struct state_map_def def = {
		.pin = "policy_names", .name = "oomctl_names",
		.type = BPF_MAP_TYPE_LRU_HASH, .key_size = sizeof(uint64_t),
		.value_size = POLICY_NAME_LEN, .max_entries = 4096,
	};

	return state_map_get(&def, create);
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

int policy_link_progs(const char *name, uint32_t *prog_ids, uint32_t *link_ids,
		      int max)
{
	char dir[PATH_MAX], path[PATH_MAX + 256];
	struct dirent *de;
	int n = 0;
	DIR *d;

	state_path(dir, sizeof(dir), "policy/%s", name);
	d = opendir(dir);
	while (d && n < max && (de = readdir(d))) {
		struct bpf_link_info li = {};
		__u32 len = sizeof(li);
		int fd;

		/* explain, its ring and the maps are no part of the OOM path */
		if (de->d_name[0] == '.' || !strncmp(de->d_name, "explain", 7) ||
		    !strncmp(de->d_name, "map-", 4))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		if (!strncmp(de->d_name, "prog-", 5)) {
			/* A cgroup policy's program (its link has none) */
			struct bpf_prog_info pi = {};

			len = sizeof(pi);
			if (!bpf_obj_get_info_by_fd(fd, &pi, &len)) {
				if (prog_ids)
					prog_ids[n] = pi.id;
				if (link_ids)
					link_ids[n] = 0;
				n++;
			}
		} else if (!bpf_obj_get_info_by_fd(fd, &li, &len)) {
			/* prog id 0 for a struct_ops link */
			if (prog_ids)
				prog_ids[n] = li.prog_id;
			if (link_ids)
				link_ids[n] = li.id;
			n++;
		}
		close(fd);
	}
	if (d)
		closedir(d);
	return n;
}

const char *policy_source_builtin(const char *source, const char *name)
{
	if (!strcmp(source, "built-in"))
		return name;
	if (!strncmp(source, "built-in:", strlen("built-in:")))
		return source + strlen("built-in:");
	return NULL;
}

int file_digest(const char *path, uint64_t *size, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong sum = crc32(0L, Z_NULL, 0);
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	*size = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		sum = crc32(sum, buf, n);
		*size += n;
	}
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	*crc = sum;
	return 0;
}
