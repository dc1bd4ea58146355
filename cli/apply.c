/*
 * oomctl apply [--check] [FILE]: make the attached policies and PSI
 * triggers what the configuration (config.h) says, and start the event
 * recorder, so that a unit can run it at boot (packaging/oomctl.service).
 *
 * - Everything is read and checked first (no bpf() call); a bad file is one
 *   "FILE:LINE: problem" line and nothing is applied. --check stops there.
 * - What apply attached is marked in two pinned maps under bpffs_dir
 *   (config_policies: name -> attach cookie, config_triggers: id -> the
 *   trigger), so a later apply detaches what is no longer configured and
 *   leaves alone what an admin attached by hand.
 * - Configured and already attached as configured: left alone (same prog).
 *   Ours with other options, or a rebuilt object file: detached and
 *   attached again. Attached by hand with other options: an error, before
 *   any change.
 * - Changes run removals first, as a cgroup has one OOM policy and a new one
 *   may take the cgroup of one that goes; on any failure the changes made
 *   so far are undone in reverse order, the removed policies attached back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "main.h"
#include "bpffs.h"
#include "config.h"


static int do_help(void)
{
	FILE *f = json_output ? stderr : stdout;

	fprintf(f,
		"Usage: %1$s apply [--check] [FILE]\n"
		"       %1$s apply help\n"
		"\n"
		"       FILE := a configuration file (default " OOMCTL_CONF_FILE
		" and the drop-ins {/etc,/run,/usr/local/lib,/usr/lib}/"
		OOMCTL_CONF_DROPINS
		"/*.conf)\n"
		"       " HELP_SPEC_OPTIONS "\n", bin_name);
	return OOMCTL_EXIT_OK;
}

/* A PSI trigger as the kernel lists it, and as apply marks it */
struct trig {
	uint64_t cgroup_id;
	uint64_t stall_us;
	uint64_t window_us;
	uint32_t type;			/* enum psi_stall */
	uint32_t pause_us;		/* psi-declare's; 0 in an older oomctl's marks */
};

struct ktrig {
	uint32_t id;
	struct trig t;
	bool used;			/* matched by a configured trigger */
};

static int marks_fd(bool policies, bool create)
{
	static const struct state_map_def pol = {
		.pin = "config_policies", .name = "oomctl_cfg_pol",
		.what = "the configuration's policy marks",
		.type = BPF_MAP_TYPE_HASH, .key_size = POLICY_NAME_LEN,
		.value_size = sizeof(uint64_t), .max_entries = REGISTRY_MAX,
	}, trg = {
		.pin = "config_triggers", .name = "oomctl_cfg_psi",
		.what = "the configuration's trigger marks",
		.type = BPF_MAP_TYPE_HASH, .key_size = sizeof(uint32_t),
		.value_size = sizeof(struct trig), .max_entries = 1024,
	};

	return state_map_get(policies ? &pol : &trg, create);
}

static int mark_policy(const char *name, bool set)
{
	char key[POLICY_NAME_LEN] = {};
	struct policy_meta meta;
	int fd = marks_fd(true, set), err = 0;

	if (fd < 0)
		return set ? fd : 0;
	snprintf(key, sizeof(key), "%s", name);
	if (set && registry_get(name, &meta))
		err = -ENOENT;
	else if (set && bpf_map_update_elem(fd, key, &meta.cookie, BPF_ANY))
		err = -errno;
	else if (!set && bpf_map_delete_elem(fd, key) && errno != ENOENT)
		err = -errno;
	close(fd);
	if (err)
		p_err("cannot mark policy %s as configured: %s", name,
		      strerror(-err));
	return err;
}

static int mark_trigger(uint32_t id, const struct trig *t)
{
	int fd = marks_fd(false, t != NULL), err = 0;

	if (fd < 0)
		return t ? fd : 0;
	if (t && bpf_map_update_elem(fd, &id, t, BPF_ANY))
		err = -errno;
	else if (!t && bpf_map_delete_elem(fd, &id) && errno != ENOENT)
		err = -errno;
	close(fd);
	if (err)
		p_err("cannot mark trigger %u as configured: %s", id,
		      strerror(-err));
	return err;
}

/* The kernel's memory triggers in *@ksp (free() it): count or -errno */
static int read_triggers(struct ktrig **ksp)
{
	struct kernel_trigger *trs;
	struct ktrig *ks;
	int nr, n = 0, err = 0;

	*ksp = NULL;
	nr = kernel_triggers_read(&trs);
	if (nr < 0)
		return nr;
	ks = calloc(nr ?: 1, sizeof(*ks));
	if (!ks) {
		free(trs);
		p_err("out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < nr && !err; i++) {
		const struct kernel_trigger *kt = &trs[i];
		struct ktrig *k = &ks[n];
		bool declare = !strcmp(kt->owner, PSI_DECLARE_NAME);
		enum psi_stall type;
		uint64_t pause_us;

		/* psi add's triggers are psi-declare's (an older oomctl's
		 * the PSI hook's, no owner); other handlers' are not the
		 * configuration's */
		if (strcmp(kt->resource, "memory") || (kt->owner[0] && !declare) ||
		    parse_psi_stall(kt->kind, &type))
			continue;
		k->id = kt->id;
		k->t = (struct trig){ .cgroup_id = kt->cgroup_id,
				      .stall_us = kt->threshold_us,
				      .window_us = kt->window_us, .type = type };
		if (!declare) {
			n++;	/* the PSI hook's: no pause */
			continue;
		}
		/* An older oomctl's handler has none (0): it is replaced. One
		 * whose pause cannot be read is not ours to manage. */
		err = psi_handler_read(k->id, &pause_us, NULL);
		if (err == -ENOENT) {
			err = 0;
			continue;
		}
		if (err && err != -ENODATA) {
			p_err("cannot read the pause of trigger %u: %s", k->id,
			      strerror(-err));
			break;
		}
		k->t.pause_us = err ? 0 : pause_us;
		err = 0;
		n++;
	}
	free(trs);
	if (err) {
		free(ks);
		return err;
	}
	*ksp = ks;
	return n;
}

static bool trig_eq(const struct trig *a, const struct trig *b)
{
	return a->cgroup_id == b->cgroup_id && a->type == b->type &&
	       a->stall_us == b->stall_us && a->window_us == b->window_us &&
	       a->pause_us == b->pause_us;
}

static struct trig conf_trig(const struct conf_trigger *c)
{
	return (struct trig){ .cgroup_id = c->cgroup_id, .type = c->type,
			      .stall_us = c->stall_us, .window_us = c->window_us,
			      .pause_us = c->pause_us };
}

/* What this run changed, to undo it in reverse */
enum act { ADD_POLICY, DEL_POLICY, ADD_TRIGGER, DEL_TRIGGER };

struct done {
	enum act act;
	struct policy_meta meta;	/* DEL_POLICY: what to attach back */
	uint32_t id;			/* ADD_TRIGGER */
	struct trig t;			/* DEL_TRIGGER */
};

struct run {
	struct done *done;
	int ndone, cap;
	int added, removed, kept;
};

static int record(struct run *r, const struct done *d)
{
	if (r->ndone == r->cap) {
		int cap = r->cap ? 2 * r->cap : 16;
		struct done *grown = realloc(r->done, cap * sizeof(*grown));

		if (!grown) {
			p_err("out of memory");
			return -ENOMEM;
		}
		r->done = grown;
		r->cap = cap;
	}
	r->done[r->ndone++] = *d;
	return 0;
}

/*
 * Attach and mark: from a configured entry, or back from its old meta.
 * Policy @name runs the built-in @builtin, or else the object @file.
 */
static int attach(struct run *r, const char *name, const char *builtin,
		  const char *file, uint64_t scope_id, bool dry_run,
		  bool kill_unit)
{
	struct cgroup_ref scope = { .arg = "", .id = scope_id };
	struct policy_attach_opts opts = {
		.name = builtin, .file = builtin ? NULL : file, .as = name,
		.scope = scope_id ? &scope : NULL, .dry_run = dry_run,
		.kill_unit = kill_unit,
	};
	struct done d = { .act = ADD_POLICY };
	struct policy_attached res;
	char path[PATH_MAX];
	int err;

	/* A cgroup policy is attached to the cgroup's directory */
	cgroup_path_of_id(scope_id, path, sizeof(path));
	if (scope_id && cgroup_parse(path, &scope))
		return -EINVAL;
	scope.id = scope_id;
	err = policy_attach(&opts, &res);
	if (err)
		return err;
	out_open_object(NULL);
	policy_attached_print(&res, dry_run);
	out_close();
	snprintf(d.meta.name, sizeof(d.meta.name), "%s", name);
	/* recorded first: a failed mark still undoes the attach */
	return record(r, &d) ?: mark_policy(name, true);
}

static int detach(struct run *r, const struct policy_meta *meta)
{
	struct done d = { .act = DEL_POLICY, .meta = *meta };
	int err;

	err = policy_detach(meta->name);
	if (err)
		return err;
	out_open_object(NULL);
	policy_detached_print(meta->name);
	out_close();
	mark_policy(meta->name, false);
	return record(r, &d);
}

static int trigger_add(struct run *r, const struct trig *t)
{
	struct cgroup_ref cg;
	struct done d = { .act = ADD_TRIGGER };
	int err, id = 0;
	struct psi_add_opts opts = {
		.cg = &cg, .type = t->type, .stall_us = t->stall_us,
		.window_us = t->window_us, .pause_us = t->pause_us,
	};
	char path[PATH_MAX];

	cgroup_path_of_id(t->cgroup_id, path, sizeof(path));
	err = cgroup_parse(path, &cg);
	if (err)
		return -EINVAL;
	cg.id = t->cgroup_id;
	err = psi_add(&opts, &id);
	if (err)
		return err;
	out_open_object(NULL);
	psi_added_print(&opts, id);
	out_close();
	d.id = id;
	return record(r, &d) ?: mark_trigger(d.id, t);
}

static int trigger_del(struct run *r, uint32_t id, const struct trig *t)
{
	struct psi_del_opts opts = { .id = id };
	struct done d = { .act = DEL_TRIGGER, .t = *t };
	int err, *ids, n;

	err = psi_del(&opts, &ids, &n);
	out_open_object(NULL);
	psi_deleted_print(ids, n);
	out_close();
	free(ids);
	if (err)
		return err;
	mark_trigger(id, NULL);
	return record(r, &d);
}

/* Put back what this run changed, newest first; best effort */
static void undo(struct run *r)
{
	struct run scratch = {};

	if (r->ndone)
		p_info("Undoing the %d change%s of this run", r->ndone,
		       r->ndone == 1 ? "" : "s");
	for (int i = r->ndone - 1; i >= 0; i--) {
		struct done *d = &r->done[i];
		const char *builtin = policy_source_builtin(d->meta.source,
							     d->meta.name);

		switch (d->act) {
		case ADD_POLICY:
			if (!policy_detach(d->meta.name)) {
				out_open_object(NULL);
				policy_detached_print(d->meta.name);
				out_close();
			}
			mark_policy(d->meta.name, false);
			break;
		case DEL_POLICY:
			attach(&scratch, d->meta.name, builtin, d->meta.source,
			       d->meta.scope_id, d->meta.flags & POLICY_DRY_RUN,
			       d->meta.flags & POLICY_KILL_UNIT);
			break;
		case ADD_TRIGGER: {
			struct psi_del_opts opts = { .id = d->id };
			int *ids, n;

			psi_del(&opts, &ids, &n);
			out_open_object(NULL);
			psi_deleted_print(ids, n);
			out_close();
			free(ids);
			mark_trigger(d->id, NULL);
			break;
		}
		case DEL_TRIGGER:
			trigger_add(&scratch, &d->t);
			break;
		}
	}
	free(scratch.done);
}

static bool meta_matches(const struct policy_meta *m,
			 const struct conf_policy *p, bool ours)
{
	if (m->scope_id != p->scope_id ||
	    !(m->flags & POLICY_DRY_RUN) != !p->dry_run ||
	    !(m->flags & POLICY_KILL_UNIT) != !p->kill_unit)
		return false;
	if (p->builtin) {
		const char *builtin = policy_source_builtin(m->source, m->name);

		return builtin && !strcmp(builtin, p->kind);
	}
	if (strcmp(m->source, p->file))
		return false;
	/* an object changed since it was attached is attached again */
	return !ours || (m->source_size == p->file_size &&
			 m->source_crc32 == p->file_crc32);
}

static int apply_run(const struct config *conf)
{
	struct policy_meta *metas = NULL;
	struct ktrig *ks = NULL;
	struct run r = {};
	char key[POLICY_NAME_LEN];
	uint64_t cookie;
	bool *ours = NULL, *configured = NULL;
	int nmeta, nk, fd, err, i, j;

	err = state_init() ?: state_lock() ?: recorder_ensure();
	if (err)
		return err;
	nmeta = registry_list(&metas);
	if (nmeta < 0) {
		free(metas);
		return nmeta;
	}
	nk = read_triggers(&ks);
	if (nk < 0) {
		free(metas);
		return nk;
	}
	ours = calloc(nmeta + 1, sizeof(*ours));
	configured = calloc(nmeta + 1, sizeof(*configured));
	if (!ours || !configured) {
		p_err("out of memory");
		err = -ENOMEM;
		goto out;
	}

	/* Which attached policies and triggers an earlier apply made */
	fd = marks_fd(true, false);
	for (i = 0; fd >= 0 && i < nmeta; i++) {
		memset(key, 0, sizeof(key));
		snprintf(key, sizeof(key), "%s", metas[i].name);
		ours[i] = !bpf_map_lookup_elem(fd, key, &cookie) &&
			  cookie == metas[i].cookie;
	}
	if (fd >= 0)
		close(fd);

	/* Plan the policies; a conflict stops us before any change */
	for (i = 0; i < conf->npolicies; i++) {
		const struct conf_policy *p = &conf->policies[i];

		for (j = 0; j < nmeta && strcmp(metas[j].name, p->name); j++)
			;
		if (j == nmeta)
			continue;
		configured[j] = true;
		if (!ours[j] && !meta_matches(&metas[j], p, false)) {
			p_err("%s: policy %s is attached by hand with other options (oomctl policy detach %s)",
			      p->where, p->name, p->name);
			err = -EEXIST;
			goto out;
		}
	}

	out_open_array("changes");
	/*
	 * 1. Ours, no longer configured. First, since a cgroup has one OOM
	 * policy: a new one may take its cgroup. What fails later is undone,
	 * these detaches included.
	 */
	for (i = 0; i < nmeta; i++) {
		if (!ours[i] || configured[i])
			continue;
		err = detach(&r, &metas[i]);
		if (err)
			goto undo;
		r.removed++;
	}
	/* 2. Ours, changed in the configuration: detach, attach anew */
	for (i = 0; i < conf->npolicies; i++) {
		const struct conf_policy *p = &conf->policies[i];

		for (j = 0; j < nmeta && strcmp(metas[j].name, p->name); j++)
			;
		if (j == nmeta)
			continue;
		if (meta_matches(&metas[j], p, ours[j])) {
			r.kept++;
			continue;
		}
		err = detach(&r, &metas[j]) ?:
		      attach(&r, p->name, p->builtin ? p->kind : NULL,
			     p->file, p->scope_id, p->dry_run, p->kill_unit);
		if (err) {
			p_info("%s: this line failed", p->where);
			goto undo;
		}
		r.added++;
		r.removed++;
	}
	/* 3. New policies and triggers */
	for (i = 0; i < conf->npolicies; i++) {
		const struct conf_policy *p = &conf->policies[i];

		if (registry_get(p->name, &(struct policy_meta){}) == 0)
			continue;
		err = attach(&r, p->name, p->builtin ? p->kind : NULL,
			     p->file, p->scope_id, p->dry_run, p->kill_unit);
		if (err) {
			p_info("%s: this line failed", p->where);
			goto undo;
		}
		r.added++;
	}
	for (i = 0; i < conf->ntriggers; i++) {
		struct trig t = conf_trig(&conf->triggers[i]);

		for (j = 0; j < nk && (ks[j].used || !trig_eq(&ks[j].t, &t)); j++)
			;
		if (j < nk) {
			ks[j].used = true;
			r.kept++;
			continue;
		}
		err = trigger_add(&r, &t);
		if (err) {
			p_info("%s: this line failed", conf->triggers[i].where);
			goto undo;
		}
		r.added++;
	}
	fd = marks_fd(false, false);
	for (i = 0; i < nk; i++) {
		struct trig mark;

		if (ks[i].used || fd < 0 ||
		    bpf_map_lookup_elem(fd, &ks[i].id, &mark) ||
		    !trig_eq(&mark, &ks[i].t))
			continue;
		err = trigger_del(&r, ks[i].id, &ks[i].t);
		if (err)
			break;
		r.removed++;
	}
	if (fd >= 0)
		close(fd);
	if (err)
		goto undo;
	out_close();

	out_u64("added", "applied: %s added", r.added);
	out_u64("kept", ", %s kept", r.kept);
	out_u64("removed", ", %s removed", r.removed);
	out_u64("files", " (%s configuration file", conf->nfiles);
	out_text("%s)", conf->nfiles == 1 ? "" : "s");
	out_newline();
	goto out;
undo:
	out_close();
	/* The undo's own output, keyed: in JSON a keyless object would
	 * land in the document's root object */
	out_open_array("undone");
	undo(&r);
	out_close();
out:
	free(r.done);
	free(ours);
	free(configured);
	free(metas);
	free(ks);
	return err;
}

int apply_configured(void)
{
	struct config conf;
	int err = config_read(NULL, &conf);

	if (err)
		return err;
	err = apply_run(&conf) ? OOMCTL_EXIT_FAIL : OOMCTL_EXIT_OK;
	config_free(&conf);
	return err;
}

int do_apply(int argc, char **argv)
{
	const char *file = NULL;
	struct config conf;
	bool check = false;
	int err;

	if (argc == 1 && !strcmp(*argv, "help"))
		return do_help();
	while (argc > 0) {
		if (ARG_IS("--check") && !check) {
			NEXT_ARG();
			check = true;
		} else if (**argv != '-' && !file) {
			file = GET_ARG();
		} else {
			usage_err("unexpected argument '%s'", *argv);
			return OOMCTL_EXIT_USAGE;
		}
	}

	/* all of it first, with no bpf() call: nothing is half-applied */
	err = config_read(file, &conf);
	if (err)
		return err;
	if (check) {
		out_u64("policies", "configuration OK: %s policies", conf.npolicies);
		out_u64("triggers", ", %s triggers", conf.ntriggers);
		out_u64("files", " in %s file", conf.nfiles);
		out_text("%s", conf.nfiles == 1 ? "" : "s");
		out_newline();
		config_free(&conf);
		return OOMCTL_EXIT_OK;
	}
	err = cmd_backend(apply_run(&conf));
	config_free(&conf);
	return err;
}
