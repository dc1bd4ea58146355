/*
 * policy attach/detach/list/show: OOM policies and PSI handlers attached to
 * cgroups (struct bpf_oom_ops, struct bpf_psi_ops: a struct_ops link each)
 * and handlers on the OOM and PSI hooks (fmod_ret links), pinned under
 * bpffs_dir/policy/NAME/ and described in the registry.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "backend.h"
#include "bpffs.h"
#include "kernel.h"
#include "oom_explain.h"
#include "largest_leaf.skel.h"
#include "oomd.skel.h"

static const struct builtin {
	const char *name;
	const void *(*elf)(size_t *size);
} builtins[] = {
	{ "largest-leaf", largest_leaf_bpf__elf_bytes },
	{ "oomd", oomd_bpf__elf_bytes },
};

const char *policy_builtin_names(const char *sep, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]) &&
			   len < size; i++)
		len += snprintf(buf + len, size - len, "%s%s", i ? sep : "",
				builtins[i].name);
	return buf;
}

static const struct builtin *builtin_find(const char *name)
{
	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (!strcmp(builtins[i].name, name))
			return &builtins[i];
	return NULL;
}

/*
 * Which hook a program attaches to, from its section: 0 if none of ours. A
 * struct_ops program belongs to a cgroup policy or handler (ops_map_hook()),
 * which says its hook; libbpf loads it with its map.
 */
static enum policy_hook prog_hook(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog);
	const char *target = strchr(sec, '/');

	if (bpf_program__type(prog) == BPF_PROG_TYPE_STRUCT_OPS)
		return HOOK_OOM;
	if (!target || strncmp(sec, "fmod_ret", 8))
		return 0;
	if (!strcmp(target + 1, "bpf_handle_out_of_memory"))
		return HOOK_OOM;
	if (!strcmp(target + 1, "bpf_handle_psi_event"))
		return HOOK_PSI;
	return 0;
}

/*
 * The object's explain program (oom_explain.h) and its ring, or NULL: loaded
 * and pinned with the policy, so that policy explain runs the code that is
 * attached, with its maps. Room for some 14,000 units a run.
 */
#define EXPLAIN_PINNED_RING_SIZE	(1U << 20)

static struct bpf_program *explain_prog(struct bpf_object *obj,
					struct bpf_map **ring)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(obj,
							OOM_EXPLAIN_PROG);

	*ring = bpf_object__find_map_by_name(obj, "explain_records");
	if (!prog || strcmp(bpf_program__section_name(prog), "syscall") ||
	    !*ring || bpf_map__type(*ring) != BPF_MAP_TYPE_RINGBUF)
		return NULL;
	return prog;
}

/*
 * What the object starts when it is attached, or NULL: its SEC("syscall")
 * program POLICY_START_PROG, run once after the pins, and its map
 * POLICY_TIMERS_MAP, pinned with the policy, so that the timers that
 * program arms live until the policy is detached (the kernel cancels a
 * map's timers when its last user reference goes). oomd samples its units
 * this way.
 */
#define POLICY_START_PROG	"policy_start"
#define POLICY_TIMERS_MAP	"policy_timers"

static struct bpf_program *start_prog(struct bpf_object *obj,
				      struct bpf_map **timers)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(obj,
							POLICY_START_PROG);

	*timers = bpf_object__find_map_by_name(obj, POLICY_TIMERS_MAP);
	if (!prog || strcmp(bpf_program__section_name(prog), "syscall"))
		return NULL;
	return prog;
}

/* Set a `const volatile` global of the object before load. */
static int set_rodata(struct bpf_object *obj, const char *var, const void *val,
		      size_t size)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	struct bpf_map *map;
	size_t map_size;
	const void *init;
	char *data;
	int id, err = -ENOENT;

	map = bpf_object__find_map_by_name(obj, ".rodata");
	id = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -1;
	if (!map || id < 0)
		return -ENOENT;
	sec = btf__type_by_id(btf, id);
	init = bpf_map__initial_value(map, &map_size);
	data = malloc(map_size);
	if (!init || !data) {
		free(data);
		return -ENOMEM;
	}
	memcpy(data, init, map_size);
	vs = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *v = btf__type_by_id(btf, vs->type);

		if (strcmp(btf__name_by_offset(btf, v->name_off), var))
			continue;
		if (vs->size != size || vs->offset + size > map_size) {
			err = -EINVAL;
			break;
		}
		memcpy(data + vs->offset, val, size);
		err = bpf_map__set_initial_value(map, data, map_size);
		break;
	}
	free(data);
	return err;
}

/*
 * The hook of @map if it is a cgroup's policy or handler: HOOK_OOM for a
 * struct bpf_oom_ops, HOOK_PSI for a struct bpf_psi_ops; 0 otherwise.
 */
static enum policy_hook ops_map_hook(const struct bpf_object *obj,
				     const struct bpf_map *map)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *t;
	const char *type;

	if (bpf_map__type(map) != BPF_MAP_TYPE_STRUCT_OPS || !btf)
		return 0;
	t = btf__type_by_id(btf, bpf_map__btf_value_type_id(map));
	type = t ? btf__name_by_offset(btf, t->name_off) : "";
	if (!strcmp(type, "bpf_oom_ops"))
		return HOOK_OOM;
	if (!strcmp(type, "bpf_psi_ops"))
		return HOOK_PSI;
	return 0;
}

/*
 * The recorder names a cgroup policy's kills by the cgroup the kernel says
 * it is attached to: tell it the policy's cookie there (!@attached: forget
 * it, if it is still @meta's).
 */
static void policy_cgroup_set(const struct policy_meta *meta, bool attached)
{
	uint64_t cgid = meta->scope_id ?: 1, cookie;
	int fd = state_map_fd("policy_cgroups");

	if (fd < 0)
		return;
	if (attached)
		bpf_map_update_elem(fd, &cgid, &meta->cookie, BPF_ANY);
	else if (!bpf_map_lookup_elem(fd, &cgid, &cookie) &&
		 cookie == meta->cookie)
		bpf_map_delete_elem(fd, &cgid);
	close(fd);
}

/* Make the object's maps of the event log (oom_events.bpf.h) the pinned ones */
static void share_maps(struct bpf_object *obj)
{
	static const char * const logs[][2] = {
		{ "oom_events", "events" }, { "oom_events_head", "events_head" },
		{ "oom_counts", "counts" }, { "oom_counts_other", "counts_other" },
	};
	struct bpf_map *map;
	int fd;

	for (size_t i = 0; i < sizeof(logs) / sizeof(*logs); i++) {
		map = bpf_object__find_map_by_name(obj, logs[i][0]);
		if (!map)
			continue;
		fd = state_map_fd(logs[i][1]);
		if (fd >= 0) {
			bpf_map__reuse_fd(map, fd);
			close(fd);
		}
	}
}

/* Unpinning drops the last reference to its links: detached */
static void unpin_policy(const char *name)
{
	char dir[PATH_MAX];

	state_path(dir, sizeof(dir), "policy/%s", name);
	state_unpin_dir(dir);
	state_path(dir, sizeof(dir), "policy-new/%s", name);
	state_unpin_dir(dir);
}

static void registry_drop(const char *name)
{
	char key[POLICY_NAME_LEN] = {};
	int reg = registry_fd(false);

	snprintf(key, sizeof(key), "%s", name);
	if (reg >= 0)
		bpf_map_delete_elem(reg, key);
	if (reg >= 0)
		close(reg);
	scope_path_drop(name);
}

static int open_policy(const struct policy_attach_opts *opts, char *name,
		       struct bpf_object **objp)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts);
	const struct builtin *b = NULL;
	struct bpf_object *obj;
	char base[PATH_MAX], *dot;

	open_opts_debug(&open_opts);
	if (opts->name) {
		b = builtin_find(opts->name);
		if (!b) {
			p_err("no built-in policy '%s' (%s)", opts->name,
			      policy_builtin_names(", ", base, sizeof(base)));
			return -ENOENT;
		}
		snprintf(name, POLICY_NAME_LEN, "%s", opts->as ?: b->name);
	} else if (opts->as) {
		snprintf(name, POLICY_NAME_LEN, "%s", opts->as);
	} else {
		snprintf(base, sizeof(base), "%s", opts->file);
		snprintf(name, POLICY_NAME_LEN, "%s", basename(base));
		dot = strstr(name, ".bpf.o") ?: strrchr(name, '.');
		/* The name is a map key: no bytes of the suffix may remain */
		if (dot)
			memset(dot, 0, name + POLICY_NAME_LEN - dot);
		if (policy_name_check(name)) {
			p_err("cannot name a policy after '%s': rename the file to 1-15 of [a-z0-9_-] + .bpf.o",
			      opts->file);
			return -EINVAL;
		}
	}

	if (b) {
		size_t size;
		const void *elf = b->elf(&size);

		/* the object, and so its maps, keep the built-in's name
		 * whatever this instance is called (the kernel's report
		 * names the ops by their .name, set in the object) */
		open_opts.object_name = b->name;
		obj = bpf_object__open_mem(elf, size, &open_opts);
	} else {
		obj = bpf_object__open_file(opts->file, &open_opts);
	}
	if (!obj) {
		int err = -errno;	/* p_err() may change errno */

		p_err("cannot open %s: %s", opts->file ?: name,
		      err == -EINVAL || err == -ENOEXEC ?
		      "not a BPF object file" : strerror(-err));
		return err;
	}
	*objp = obj;
	return 0;
}

/*
 * Where the object counts its own runs: the offset of `__u64 nr_runs` in its
 * .bss, which attach pins as map-bss; -1 if it has none. The kernel's own
 * run count needs the sysctl kernel.bpf_stats_enabled, which times every
 * BPF program of the machine: not ours to switch on.
 */
static int runs_counter(struct bpf_object *obj, struct bpf_map **bss)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	int id;

	*bss = bpf_object__find_map_by_name(obj, ".bss");
	id = btf && *bss ? btf__find_by_name_kind(btf, ".bss", BTF_KIND_DATASEC) : -1;
	if (id < 0)
		return -1;
	sec = btf__type_by_id(btf, id);
	vs = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, vs++)
		if (!strcmp(btf__name_by_offset(btf, btf__type_by_id(btf,
				vs->type)->name_off), "nr_runs") &&
		    vs->size == sizeof(uint64_t))
			return vs->offset;
	return -1;
}

/* The id of the program @fd, or 0 */
static uint32_t policy_prog_id(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/*
 * Attach the cgroup policy @map to @scope's cgroup (the root, i.e. the
 * whole machine, for NULL) and pin its link in @dir. 0 or -errno, reported.
 */
static int attach_ops(struct bpf_map *map, enum policy_hook hook,
		      const struct cgroup_ref *scope, const char *dir,
		      uint32_t *link_id)
{
	LIBBPF_OPTS(bpf_struct_ops_opts, ops_opts);
	char pin[PATH_MAX + 64];
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	struct bpf_link *link;
	int fd = -1, err;

	if (scope) {
		fd = open(scope->fspath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			p_err("cannot open %s: %s", scope->fspath, strerror(errno));
			return err;
		}
		ops_opts.flags = BPF_F_CGROUP_FD;
		ops_opts.target_fd = fd;
	}
	link = bpf_map__attach_struct_ops_opts(map, &ops_opts);
	err = link ? 0 : -errno;
	if (fd >= 0)
		close(fd);
	if (err == -EBUSY && hook == HOOK_OOM) {
		p_err("%s has a policy attached already (oomctl policy list): one a cgroup",
		      scope ? scope->path : "the root cgroup");
		return err;
	}
	if (err) {
		p_err("cannot attach %s: %s", bpf_map__name(map), strerror(-err));
		return err;
	}
	snprintf(pin, sizeof(pin), "%s/%s", dir, bpf_map__name(map));
	if (!bpf_obj_get_info_by_fd(bpf_link__fd(link), &info, &len))
		*link_id = *link_id ?: info.id;
	return link_pin_release(link, pin);
}

int policy_attach(const struct policy_attach_opts *opts,
		  struct policy_attached *res)
{
	struct policy_meta meta = {}, other;
	char dir[PATH_MAX], pin[PATH_MAX + 64];
	struct bpf_object *obj = NULL;
	struct bpf_program *prog, *explain, *start;
	struct bpf_map *map, *explain_ring, *bss, *timers;
	struct timespec now;
	int err, reg = -1, names, nprogs = 0, nops = 0, noom_ops = 0;
	bool cgroup_set = false;
	uint32_t link_id = 0, prog_id = 0;

	err = state_init() ?: state_lock() ?: recorder_ensure();
	if (err)
		return err;
	err = open_policy(opts, meta.name, &obj);
	if (err)
		return err;
	if (!registry_get(meta.name, &other)) {
		p_err("a policy named '%s' is attached already%s (oomctl policy detach %s)",
		      meta.name, other.flags & POLICY_ATTACHING ?
		      ", incomplete: its attach was interrupted" : "",
		      meta.name);
		err = -EEXIST;
		goto out;
	}

	explain = explain_prog(obj, &explain_ring);
	start = start_prog(obj, &timers);
	bpf_object__for_each_program(prog, obj) {
		enum policy_hook hook = prog_hook(prog);

		bpf_program__set_autoload(prog, hook != 0 || prog == explain ||
					  prog == start);
		if (bpf_program__type(prog) != BPF_PROG_TYPE_STRUCT_OPS)
			meta.hooks |= hook;
		nprogs += hook != 0;
	}
	if (explain)
		bpf_map__set_max_entries(explain_ring, EXPLAIN_PINNED_RING_SIZE);
	meta.runs_offset = runs_counter(obj, &bss);
	bpf_object__for_each_map(map, obj) {
		enum policy_hook hook = ops_map_hook(obj, map);

		meta.hooks |= hook;
		nops += hook != 0;
		noom_ops += hook == HOOK_OOM;
	}
	if (!nprogs) {
		p_err("%s has no struct bpf_oom_ops or bpf_psi_ops, nor an fmod_ret program for bpf_handle_out_of_memory or bpf_handle_psi_event",
		      opts->file ?: meta.name);
		err = -EINVAL;
		goto out;
	}
	if (opts->scope) {
		/* A cgroup policy is attached there; the policy may read it too */
		err = set_rodata(obj, "scope_cgroup_id", &opts->scope->id,
				 sizeof(uint64_t));
		if (err && !nops) {
			p_err("%s cannot be scoped: it has no struct bpf_oom_ops or bpf_psi_ops, and no 'const volatile __u64 scope_cgroup_id'",
			      meta.name);
			goto out;
		}
		meta.scope_id = opts->scope->id;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	meta.attach_time_ns = now.tv_sec * 1000000000ULL + now.tv_nsec;
	/* Never reused, so old log records and kill counts stay with theirs */
	meta.cookie = meta.attach_time_ns;
	/* What its dry-run records carry (oom_events.bpf.h); optional */
	set_rodata(obj, "policy_cookie", &meta.cookie, sizeof(meta.cookie));
	if (opts->dry_run) {
		bool yes = true;

		err = set_rodata(obj, "dry_run", &yes, sizeof(yes));
		if (err) {
			p_err("%s has no dry-run mode: it has no 'const volatile bool dry_run'",
			      meta.name);
			goto out;
		}
		meta.flags |= POLICY_DRY_RUN;
	}
	if (opts->kill_unit) {
		bool yes = true;

		err = set_rodata(obj, "kill_unit", &yes, sizeof(yes));
		if (err) {
			p_err("%s cannot kill whole units: it has no 'const volatile bool kill_unit'",
			      meta.name);
			goto out;
		}
		meta.flags |= POLICY_KILL_UNIT;
	}
	share_maps(obj);

	err = bpf_object__load(obj);
	if (err) {
		snprintf(pin, sizeof(pin), "policy %s", meta.name);
		load_failed(pin, err);
		goto out;
	}

	if (opts->file) {
		char *abs = realpath(opts->file, NULL);

		/* The digest of the file libbpf read; a race with its
		 * replacement makes the next apply attach it again */
		err = !abs ? -errno :
		      snprintf(meta.source, sizeof(meta.source), "%s", abs) >=
		      (int)sizeof(meta.source) ? -ENAMETOOLONG :
		      file_digest(abs, &meta.source_size, &meta.source_crc32);
		free(abs);
		if (err) {
			p_err("cannot read %s: %s", opts->file, strerror(-err));
			goto out;
		}
	} else if (!strcmp(meta.name, opts->name)) {
		snprintf(meta.source, sizeof(meta.source), "built-in");
	} else {
		snprintf(meta.source, sizeof(meta.source), "built-in:%s",
			 opts->name);
	}
	if (nops)
		meta.flags |= POLICY_CGROUP_OPS;

	/*
	 * Crash-safe order: the registry entry first, marked attaching, so
	 * that no link exists that policy list does not show; the links in a
	 * scratch folder, moved in place whole by rename(); then the mark
	 * cleared. Killed at any step, oomctl leaves nothing, or a policy
	 * that is listed and that detach removes.
	 */
	reg = registry_fd(true);
	if (reg < 0) {
		err = reg;
		goto out;
	}
	meta.flags |= POLICY_ATTACHING;
	if (bpf_map_update_elem(reg, meta.name, &meta, BPF_NOEXIST)) {
		err = -errno;
		p_err("cannot record policy %s: %s", meta.name, strerror(errno));
		goto out;
	}
	/* Its scope is named after removal too (scope_of()) */
	if (opts->scope)
		scope_path_set(meta.name, opts->scope->path);
	/* Its kills are named after it from the first one on */
	names = policy_names_fd(true);
	if (names >= 0) {
		bpf_map_update_elem(names, &meta.cookie, meta.name, BPF_ANY);
		close(names);
	}

	state_path(dir, sizeof(dir), "policy");
	mkdir(dir, 0700);
	state_path(dir, sizeof(dir), "policy-new");
	mkdir(dir, 0700);
	state_path(dir, sizeof(dir), "policy-new/%s", meta.name);
	state_unpin_dir(dir);	/* no registry entry owned it: debris */
	if (mkdir(dir, 0700)) {
		err = -errno;
		p_err("cannot create %s: %s", dir, strerror(errno));
		goto unpin;
	}
	bpf_object__for_each_program(prog, obj) {
		LIBBPF_OPTS(bpf_trace_opts, trace_opts, .cookie = meta.cookie);
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);
		struct bpf_link *link;

		if (!prog_hook(prog))
			continue;
		if (bpf_program__type(prog) == BPF_PROG_TYPE_STRUCT_OPS) {
			/* Attached by its map below; pinned for its run count */
			snprintf(pin, sizeof(pin), "%s/prog-%s", dir,
				 bpf_program__name(prog));
			err = bpf_program__pin(prog, pin);
			if (err) {
				p_err("cannot pin %s: %s", pin, strerror(-err));
				goto unpin;
			}
			prog_id = prog_id ?: policy_prog_id(bpf_program__fd(prog));
			continue;
		}
		link = bpf_program__attach_trace_opts(prog, &trace_opts);
		if (!link) {
			err = -errno;
			p_err("cannot attach %s of policy %s: %s",
			      bpf_program__name(prog), meta.name, strerror(errno));
			goto unpin;
		}
		snprintf(pin, sizeof(pin), "%s/%s", dir, bpf_program__name(prog));
		if (!bpf_obj_get_info_by_fd(bpf_link__fd(link), &info, &len)) {
			link_id = link_id ?: info.id;
			prog_id = prog_id ?: info.prog_id;
		}
		err = link_pin_release(link, pin);
		if (err)
			goto unpin;
	}
	bpf_object__for_each_map(map, obj) {
		enum policy_hook hook = ops_map_hook(obj, map);

		if (!hook)
			continue;
		err = attach_ops(map, hook, opts->scope, dir, &link_id);
		if (err)
			goto unpin;
	}
	/* The kernel took its OOM policy at its cgroup, the only one there:
	 * the log may name it there now */
	cgroup_set = noom_ops;
	if (cgroup_set)
		policy_cgroup_set(&meta, true);
	if (meta.runs_offset >= 0) {
		snprintf(pin, sizeof(pin), "%s/map-bss", dir);
		err = bpf_map__pin(bss, pin);
		if (err) {
			p_err("cannot pin %s: %s", pin, strerror(-err));
			goto unpin;
		}
	}
	if (explain) {
		snprintf(pin, sizeof(pin), "%s/explain", dir);
		err = bpf_program__pin(explain, pin);
		if (!err) {
			snprintf(pin, sizeof(pin), "%s/explain_records", dir);
			err = bpf_map__pin(explain_ring, pin);
		}
		if (err) {
			p_err("cannot pin %s: %s", pin, strerror(-err));
			goto unpin;
		}
	}
	if (timers) {
		snprintf(pin, sizeof(pin), "%s/map-timers", dir);
		err = bpf_map__pin(timers, pin);
		if (err) {
			p_err("cannot pin %s: %s", pin, strerror(-err));
			goto unpin;
		}
	}
	if (start) {
		err = syscall_prog_run(bpf_program__fd(start), NULL, 0);
		if (err) {
			p_err("policy %s did not start: %s (its %s program)",
			      meta.name, strerror(-err), POLICY_START_PROG);
			goto unpin;
		}
	}
	state_path(pin, sizeof(pin), "policy/%s", meta.name);
	if (rename(dir, pin)) {
		err = -errno;
		p_err("cannot rename %s to %s: %s", dir, pin, strerror(errno));
		goto unpin;
	}
	meta.flags &= ~POLICY_ATTACHING;
	if (bpf_map_update_elem(reg, meta.name, &meta, BPF_EXIST)) {
		err = -errno;
		p_err("cannot record policy %s: %s", meta.name, strerror(errno));
		goto unpin;
	}

	snprintf(res->name, sizeof(res->name), "%s", meta.name);
	res->prog_id = prog_id;
	res->link_id = link_id;
	goto out;
unpin:
	unpin_policy(meta.name);
	if (cgroup_set)
		policy_cgroup_set(&meta, false);
	registry_drop(meta.name);
out:
	if (reg >= 0)
		close(reg);
	bpf_object__close(obj);
	return err;
}

int policy_detach(const char *name)
{
	struct policy_meta meta;
	char key[POLICY_NAME_LEN] = {};
	int err, reg;

	err = state_init() ?: state_lock();
	if (err)
		return err;
	if (registry_get(name, &meta)) {
		p_err("no policy named '%s' is attached (oomctl policy list)", name);
		return -ENOENT;
	}
	/* Unpinning drops the last reference to the links: detached */
	unpin_policy(name);
	reg = registry_fd(false);
	snprintf(key, sizeof(key), "%s", name);
	if (reg < 0 || bpf_map_delete_elem(reg, key)) {
		err = -errno;
		p_err("cannot remove policy %s from the registry: %s", name,
		      strerror(errno));
	}
	if (reg >= 0)
		close(reg);
	scope_path_drop(name);
	policy_cgroup_set(&meta, false);
	return err;
}

static bool bpf_stats_on(void)
{
	char on = '0';
	int fd = open("/proc/sys/kernel/bpf_stats_enabled", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, &on, 1) != 1)
			on = '0';
		close(fd);
	}
	return on == '1';
}

/* The runs the policy counted itself (runs_counter()), if it does */
static void policy_own_runs(const struct policy_meta *meta,
			    struct policy_stats *st)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info), zero = 0;
	char path[PATH_MAX];
	uint64_t runs;
	void *bss;
	int fd;

	if (meta->runs_offset < 0)
		return;
	state_path(path, sizeof(path), "policy/%s/map-bss", meta->name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
	    info.value_size >= meta->runs_offset + sizeof(runs) &&
	    (bss = calloc(1, info.value_size))) {
		if (!bpf_map_lookup_elem(fd, &zero, bss)) {
			memcpy(&runs, (char *)bss + meta->runs_offset, sizeof(runs));
			st->runs = runs;
			st->runs_known = true;
		}
		free(bss);
	}
	close(fd);
}

void policy_stats(const struct policy_meta *meta, struct policy_stats *st)
{
	uint32_t prog_ids[8], link_ids[8];
	int n, kills_fd;

	memset(st, 0, sizeof(*st));
	n = policy_link_progs(meta->name, prog_ids, link_ids, 8);
	for (int i = 0; i < n; i++) {
		struct bpf_prog_info pi = {};
		__u32 len = sizeof(pi);
		int pfd = bpf_prog_get_fd_by_id(prog_ids[i]);

		st->link_id = st->link_id ?: link_ids[i];
		st->prog_id = st->prog_id ?: prog_ids[i];
		if (pfd >= 0 && !bpf_obj_get_info_by_fd(pfd, &pi, &len)) {
			st->runs += pi.run_cnt;
			st->missed += pi.recursion_misses;
		}
		if (pfd >= 0)
			close(pfd);
	}
	/* The kernel counts only while kernel.bpf_stats_enabled is 1 */
	st->runs_known = bpf_stats_on();
	policy_own_runs(meta, st);
	kills_fd = state_map_fd("policy_kills");
	if (kills_fd >= 0) {
		bpf_map_lookup_elem(kills_fd, &meta->cookie, &st->kills);
		close(kills_fd);
	}
}

/*
 * Its scope's path in @buf, or "system"; *@orphaned if that cgroup was
 * removed. The link holds the removed cgroup, so the kernel reaches the
 * policy no more, even once a cgroup of the same path is made again, as a
 * systemd unit's restart does. Named by the path it had at attach.
 */
static void scope_of(const struct policy_meta *meta, char *buf, size_t size,
		     bool *orphaned)
{
	*orphaned = false;
	if (!meta->scope_id) {
		snprintf(buf, size, "system");
		return;
	}
	cgroup_path_of_id(meta->scope_id, buf, size);
	if (buf[0] == '(') {
		*orphaned = true;
		scope_path_get(meta->name, buf, size);
	}
}

static void policy_info_fill(const struct policy_meta *meta,
			     struct policy_info *info)
{
	info->meta = *meta;
	policy_stats(meta, &info->st);
	scope_of(meta, info->scope, sizeof(info->scope), &info->orphaned);
}

int policy_list(struct policy_info **infosp)
{
	struct policy_meta *metas;
	struct policy_info *infos;
	int n, err;

	err = state_init();
	if (err)
		return err;
	n = registry_list(&metas);
	if (n < 0)
		return n;
	infos = calloc(n ?: 1, sizeof(*infos));
	if (!infos) {
		free(metas);
		p_err("out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++)
		policy_info_fill(&metas[i], &infos[i]);
	free(metas);
	*infosp = infos;
	return n;
}

int policy_show(const char *name, struct policy_info *info)
{
	struct policy_meta meta;
	int err;

	err = state_init();
	if (err)
		return err;
	if (registry_get(name, &meta)) {
		p_err("no policy named '%s' is attached (oomctl policy list)", name);
		return -ENOENT;
	}
	policy_info_fill(&meta, info);
	return 0;
}
