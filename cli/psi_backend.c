/*
 * psi add/list/del: memory pressure triggers that declare an OOM. Each is
 * owned by a psi-declare handler (struct bpf_psi_ops) attached to its cgroup,
 * whose link is pinned as bpffs_dir/psi/ID; the kernel lists the triggers
 * in /proc/pressure/bpf_triggers. They need no process to stay armed.
 * Triggers that tools made for the PSI hook (bpf_psi_create_trigger()) are
 * listed and deleted too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "backend.h"
#include "bpffs.h"
#include "kernel.h"
#include "psi_declare.skel.h"
#include "psi_trigger.skel.h"

/* Where the handlers' links are pinned, by trigger id */
#define PSI_HANDLERS_DIR	"psi"

/*
 * A value of the kernel's enum psi_states (PSI_MEM_SOME, ...), read from
 * the running kernel's BTF: the BPF side takes the same names from
 * vmlinux.h, and user space keeps no copy of the numbers to drift.
 */
static int psi_state(const char *name, int *val)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t;
	const struct btf_enum *e;
	int id, i, err = -ENOENT;

	if (!btf) {
		err = errno ? -errno : -ENOENT;
		p_err("cannot read the kernel's BTF: %s", strerror(-err));
		return err;
	}
	id = btf__find_by_name_kind(btf, "psi_states", BTF_KIND_ENUM);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	for (i = 0, e = t ? btf_enum(t) : NULL; t && i < btf_vlen(t); i++, e++)
		if (!strcmp(btf__name_by_offset(btf, e->name_off), name)) {
			*val = e->val;
			err = 0;
			break;
		}
	btf__free(btf);
	if (err)
		p_err("the kernel's BTF has no %s in enum psi_states", name);
	return err;
}

/*
 * The kernel's list, in *@trsp (free() it; on the heap, as it has no
 * bound); returns the count, or -errno (reported).
 */
int kernel_triggers_read(struct kernel_trigger **trsp)
{
	FILE *f = fopen(BPF_TRIGGERS, "r");
	struct kernel_trigger *trs = NULL, *p;
	char line[256];
	int n = 0, cap = 0;

	if (!f) {
		int err = -errno;	/* p_err() may change errno */

		p_err("cannot read %s: %s", BPF_TRIGGERS, strerror(-err));
		return err;
	}
	while (fgets(line, sizeof(line), f)) {
		struct kernel_trigger *t;

		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			p = realloc(trs, cap * sizeof(*trs));
			if (!p) {
				fclose(f);
				free(trs);
				p_err("out of memory");
				return -ENOMEM;
			}
			trs = p;
		}
		t = &trs[n];

		/* The owner column is absent before bpf_psi_ops, "-" for none */
		strcpy(t->owner, "-");
		if (sscanf(line, "%d %lu %15s %7s %lu %lu %lu %31s", &t->id,
			   &t->cgroup_id, t->resource, t->kind,
			   &t->threshold_us, &t->window_us, &t->events,
			   t->owner) >= 7) {
			if (!strcmp(t->owner, "-"))
				t->owner[0] = '\0';
			n++;
		}
	}
	fclose(f);
	*trsp = trs;
	return n;
}

static int trigger_progs_load(struct psi_trigger_bpf **skelp)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct psi_trigger_bpf *skel;
	int err;

	open_opts_debug(&opts);
	skel = psi_trigger_bpf__open_opts(&opts);
	if (skel && !psi_trigger_bpf__load(skel)) {
		*skelp = skel;
		return 0;
	}
	err = -errno;
	psi_trigger_bpf__destroy(skel);
	return load_failed("the trigger program", err);
}

static int run_trigger_prog(struct bpf_program *prog, struct psi_trigger_args *args)
{
	int err = syscall_prog_run(bpf_program__fd(prog), args, sizeof(*args));

	if (err)
		p_err("cannot run the trigger program: %s", strerror(-err));
	return err;
}

/*
 * A psi-declare handler is detached on purpose: its link's pin removed by
 * itself would detach only when the kernel's deferred put runs, and psi
 * list would still show the trigger for a moment.
 */
static void handler_detach(const char *pin)
{
	int fd = bpf_obj_get(pin);

	if (fd >= 0) {
		bpf_link_detach(fd);
		close(fd);
	}
	unlink(pin);
}

static bool trigger_listed(const struct kernel_trigger *trs, int n, int id)
{
	for (int i = 0; i < n; i++)
		if (trs[i].id == id && !strcmp(trs[i].owner, PSI_DECLARE_NAME))
			return true;
	return false;
}

/*
 * Under the state lock: drop the pins of handlers whose trigger the kernel
 * destroyed with its cgroup. They declare nothing any more, and their pin
 * names an id the kernel may give to the next trigger.
 */
static void handlers_gc(const struct kernel_trigger *trs, int n)
{
	char dir[PATH_MAX], pin[PATH_MAX + 256];
	struct dirent *de;
	DIR *d;

	state_path(dir, sizeof(dir), PSI_HANDLERS_DIR);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long id = strtol(de->d_name, &end, 10);

		if (de->d_name[0] == '.' || *end || trigger_listed(trs, n, id))
			continue;
		snprintf(pin, sizeof(pin), "%s/%s", dir, de->d_name);
		handler_detach(pin);
	}
	closedir(d);
}

/* Pin the handler's @link for trigger @id, as link_pin_release() does:
 * 0 or -errno, reported (and @link detached) */
static int handler_pin(struct bpf_link *link, int id)
{
	char dir[PATH_MAX], pin[PATH_MAX + 32];
	int err;

	state_path(dir, sizeof(dir), PSI_HANDLERS_DIR);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		p_err("cannot create %s: %s", dir, strerror(errno));
		bpf_link__destroy(link);
		return err;
	}
	snprintf(pin, sizeof(pin), "%s/%d", dir, id);
	/* A handler whose trigger had this id went with its cgroup */
	if (!access(pin, F_OK))
		handler_detach(pin);
	return link_pin_release(link, pin);
}

#define PSI_HANDLER_CAPS \
	"attaching a PSI handler needs CAP_SYS_ADMIN and CAP_KILL"

/* What the kernel asks of psi-declare: attaching it, and its declares */
static bool psi_handler_capable(void)
{
	return cap_effective(CAP_SYS_ADMIN) && cap_effective(CAP_KILL);
}

/*
 * Attach a psi-declare handler to the cgroup; its init arms the trigger.
 * Crash-safe without a registry: until the pin exists, only our fd holds the
 * link, and the kernel detaches it (destroying the trigger) when we die.
 */
int psi_add(const struct psi_add_opts *opts, int *idp)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts);
	LIBBPF_OPTS(bpf_struct_ops_opts, attach_opts);
	struct psi_declare_bpf *skel;
	struct kernel_trigger *trs;
	struct bpf_link *link;
	int state, err, n, id, fd = -1;

	err = psi_state(opts->type == PSI_FULL ? "PSI_MEM_FULL" :
			"PSI_MEM_SOME", &state);
	if (err)
		return err;
	err = state_init() ?: state_lock() ?: recorder_ensure();
	if (err)
		return err;
	n = kernel_triggers_read(&trs);
	if (n < 0)
		return n;
	handlers_gc(trs, n);
	free(trs);

	open_opts_debug(&open_opts);
	skel = psi_declare_bpf__open_opts(&open_opts);
	if (!skel)
		return load_failed("the psi-declare handler", -errno);
	skel->rodata->trigger_state = state;
	skel->rodata->trigger_stall_us = opts->stall_us;
	skel->rodata->trigger_window_us = opts->window_us;
	skel->rodata->pause_ns = opts->pause_us * 1000;
	/* Its pause reads the recorder's kill times (recorder_ensure()) */
	fd = state_map_fd("kill_times");
	if (fd < 0) {
		err = fd;
		p_err("cannot open the event log's kill times under %s: %s",
		      bpffs_dir, strerror(-err));
		goto out;
	}
	err = bpf_map__reuse_fd(skel->maps.oom_kill_times, fd);
	close(fd);
	fd = -1;
	if (err) {
		p_err("cannot share the event log's kill times: %s", strerror(-err));
		goto out;
	}
	err = psi_declare_bpf__load(skel);
	if (err && !psi_handler_capable()) {
		/* The verifier refuses bpf_out_of_memory() without CAP_KILL */
		p_err(PSI_HANDLER_CAPS);
		goto out;
	}
	if (err) {
		err = load_failed("the psi-declare handler", err);
		goto out;
	}

	/* The root cgroup's handlers take no target */
	if (opts->cg->id != 1) {
		fd = open(opts->cg->fspath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			p_err("cannot open %s: %s", opts->cg->fspath, strerror(errno));
			goto out;
		}
		attach_opts.flags = BPF_F_CGROUP_FD;
		attach_opts.target_fd = fd;
	}
	/* By name: the skeleton generator may predate struct_ops maps */
	link = bpf_map__attach_struct_ops_opts(
		bpf_object__find_map_by_name(skel->obj, "psi_declare"),
		&attach_opts);
	err = link ? 0 : -errno;
	if (fd >= 0)
		close(fd);
	switch (err) {
	case 0:
		break;
	case -ENOENT:
		p_err("cgroup '%s' is gone", opts->cg->arg);
		goto out;
	case -EOPNOTSUPP:
		p_err("pressure stall information is disabled in this kernel (psi=0?)");
		goto out;
	case -ENOSPC:
		p_err("too many triggers: the kernel keeps at most 1024 (oomctl psi del)");
		goto out;
	case -EPERM:
		p_err(PSI_HANDLER_CAPS);
		goto out;
	default:
		p_err("the kernel refused the trigger: %s", strerror(-err));
		goto out;
	}
	id = skel->bss->trigger_id;
	err = handler_pin(link, id);
	if (err)
		goto out;

	*idp = id;
out:
	psi_declare_bpf__destroy(skel);
	return err;
}

/* The byte offset of @member in struct @type of @btf, or -ENOENT */
static long btf_member_offset(const struct btf *btf, const char *type,
			      const char *member)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_member *m = t ? btf_members(t) : NULL;

	for (int i = 0; t && i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member))
			return btf_member_bit_offset(t, i) / 8;
	return -ENOENT;
}

/* The id of the program in slot handle_psi_event of the struct_ops map
 * @map_fd: the kernel gives ids where the value has function pointers */
static uint32_t handler_event_prog_id(int map_fd)
{
	/* Found once: the kernel's BTF is megabytes to parse */
	static long offset = -1;
	static bool tried;
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info), zero = 0, id = 0;
	char *value;

	if (offset < 0) {
		struct btf *btf;

		if (tried)
			return 0;
		tried = true;
		btf = btf__load_vmlinux_btf();
		long data = btf ? btf_member_offset(btf,
				"bpf_struct_ops_bpf_psi_ops", "data") : -1;
		long slot = btf ? btf_member_offset(btf, "bpf_psi_ops",
						    "handle_psi_event") : -1;

		btf__free(btf);
		if (data < 0 || slot < 0)
			return 0;
		offset = data + slot;
	}
	if (bpf_map_get_info_by_fd(map_fd, &info, &len) ||
	    info.type != BPF_MAP_TYPE_STRUCT_OPS ||
	    strcmp(info.name, "psi_declare") ||
	    offset + sizeof(uint64_t) > info.value_size)
		return 0;
	value = calloc(1, info.value_size);
	if (value && !bpf_map_lookup_elem(map_fd, &zero, value))
		id = *(uint64_t *)(value + offset);
	free(value);
	return id;
}

/* Whether @map is the object's @section map (".rodata"), of @size bytes */
static bool global_data_map(const struct bpf_map_info *map, const char *section,
			    uint32_t size)
{
	size_t len = strlen(map->name), sec_len = strlen(section);

	return len >= sec_len && !strcmp(map->name + len - sec_len, section) &&
	       map->value_size == size;
}

/*
 * Read .rodata's pause_ns of the program @prog_id, and its .bss's
 * nr_paused into *@paused (UINT64_MAX if unknown): -ENODATA if its
 * .rodata has another layout (an older oomctl's handler, which has no
 * pause).
 */
static int prog_handler_read(uint32_t prog_id, uint64_t *pause_us,
			     uint64_t *paused)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info), map_ids[16] = {}, zero = 0, n;
	struct psi_declare_bpf__rodata rodata;
	struct psi_declare_bpf__bss bss;
	int prog_fd, err = -ENODATA;

	prog_fd = bpf_prog_get_fd_by_id(prog_id);
	if (prog_fd < 0)
		return -errno;
	info.nr_map_ids = sizeof(map_ids) / sizeof(*map_ids);
	info.map_ids = (uintptr_t)map_ids;
	if (bpf_prog_get_info_by_fd(prog_fd, &info, &len)) {
		err = -errno;
		close(prog_fd);
		return err;
	}
	n = info.nr_map_ids < sizeof(map_ids) / sizeof(*map_ids) ?
	    info.nr_map_ids : sizeof(map_ids) / sizeof(*map_ids);
	*paused = UINT64_MAX;
	for (uint32_t i = 0; i < n; i++) {
		struct bpf_map_info map = {};
		uint32_t map_len = sizeof(map);
		int fd = bpf_map_get_fd_by_id(map_ids[i]);

		if (fd < 0)
			continue;
		if (bpf_map_get_info_by_fd(fd, &map, &map_len)) {
			/* unknown: skipped */
		} else if (global_data_map(&map, ".rodata", sizeof(rodata)) &&
			   !bpf_map_lookup_elem(fd, &zero, &rodata)) {
			*pause_us = rodata.pause_ns / 1000;
			err = 0;
		} else if (global_data_map(&map, ".bss", sizeof(bss)) &&
			   !bpf_map_lookup_elem(fd, &zero, &bss)) {
			*paused = bss.nr_paused;
		}
		close(fd);
	}
	close(prog_fd);
	return err;
}

/*
 * From the handler itself, not from a note of ours that could disagree: the
 * pinned link names its struct_ops map, whose value names the programs,
 * whose .rodata has the pause it was loaded with, and whose .bss counts the
 * events it paused on (*@paused, UINT64_MAX if unknown; @paused may be
 * NULL). -ENOENT: no pin of ours for trigger @id; -ENODATA: a handler
 * without a pause (an older oomctl's).
 */
int psi_handler_read(int id, uint64_t *pause_us, uint64_t *paused)
{
	uint64_t ignored;
	struct bpf_link_info info = {};
	uint32_t len = sizeof(info), prog_id = 0;
	char pin[PATH_MAX + 32];
	int link_fd, map_fd, err = -ENODATA;

	state_path(pin, sizeof(pin), PSI_HANDLERS_DIR "/%d", id);
	link_fd = bpf_obj_get(pin);
	if (link_fd < 0)
		return -errno;
	if (bpf_link_get_info_by_fd(link_fd, &info, &len)) {
		err = -errno;
	} else if (info.type == BPF_LINK_TYPE_STRUCT_OPS) {
		map_fd = bpf_map_get_fd_by_id(info.struct_ops.map_id);
		if (map_fd < 0) {
			err = -errno;
		} else {
			prog_id = handler_event_prog_id(map_fd);
			close(map_fd);
		}
	}
	close(link_fd);
	return prog_id ? prog_handler_read(prog_id, pause_us,
					   paused ?: &ignored) : err;
}

int psi_list(struct psi_trigger_info **infosp)
{
	struct psi_trigger_info *infos;
	struct kernel_trigger *trs;
	int n;

	n = kernel_triggers_read(&trs);
	if (n < 0)
		return n;
	infos = calloc(n ?: 1, sizeof(*infos));
	if (!infos) {
		free(trs);
		p_err("out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		infos[i].k = trs[i];
		infos[i].pause_us = infos[i].paused = UINT64_MAX;
		if (!strcmp(trs[i].owner, PSI_DECLARE_NAME) &&
		    psi_handler_read(trs[i].id, &infos[i].pause_us,
				     &infos[i].paused))
			infos[i].pause_us = infos[i].paused = UINT64_MAX;
	}
	free(trs);
	*infosp = infos;
	return n;
}

int psi_del(const struct psi_del_opts *opts, int **idsp, int *deletedp)
{
	struct psi_trigger_bpf *skel = NULL;
	struct kernel_trigger *trs;
	char pin[PATH_MAX + 32];
	int n, err, *ids, deleted = 0;

	*idsp = NULL;
	*deletedp = 0;
	err = state_init() ?: state_lock();
	if (err)
		return err;
	n = kernel_triggers_read(&trs);
	if (n < 0)
		return n;
	ids = calloc(n ?: 1, sizeof(*ids));
	if (!ids) {
		free(trs);
		p_err("out of memory");
		return -ENOMEM;
	}
	handlers_gc(trs, n);
	for (int i = 0; i < n; i++) {
		struct psi_trigger_args args = { .id = trs[i].id };

		if (opts->cg ? trs[i].cgroup_id != opts->cg->id :
			       (uint32_t)trs[i].id != opts->id)
			continue;
		state_path(pin, sizeof(pin), PSI_HANDLERS_DIR "/%d", trs[i].id);
		if (!strcmp(trs[i].owner, PSI_DECLARE_NAME) && !access(pin, F_OK)) {
			/* Ours: the trigger goes with its handler */
			handler_detach(pin);
		} else if (trs[i].owner[0]) {
			/* Another tool's handler: it goes when that detaches */
			if (opts->cg)
				continue;
			p_err("trigger %d belongs to the PSI handler %s: it goes when that handler detaches",
			      trs[i].id, trs[i].owner);
			err = -EBUSY;
			break;
		} else {
			/* A tool's, on the PSI hook (an older oomctl's too) */
			if (!skel) {
				err = trigger_progs_load(&skel);
				if (err)
					break;
			}
			err = run_trigger_prog(skel->progs.psi_trigger_destroy, &args);
			if (err)
				break;
			/* -ENOENT: gone meanwhile (cgroup removed), as good as deleted */
			if (args.ret && args.ret != -ENOENT) {
				err = args.ret;
				if (err == -EPERM)
					p_err("deleting a PSI trigger needs CAP_SYS_RESOURCE and CAP_KILL");
				else
					p_err("cannot delete trigger %d: %s", trs[i].id,
					      strerror(-args.ret));
				break;
			}
		}
		ids[deleted++] = trs[i].id;
	}
	psi_trigger_bpf__destroy(skel);
	free(trs);
	*idsp = ids;
	*deletedp = deleted;
	if (!err && !deleted) {
		if (opts->cg)
			p_err("no trigger on cgroup '%s' (oomctl psi list)", opts->cg->arg);
		else
			p_err("no trigger with id %u (oomctl psi list)", opts->id);
		return -ENOENT;
	}
	return err;
}
