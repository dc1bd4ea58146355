/* Cgroups named on the command line (cgroup.h): the front ends' half. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "main.h"

int cgroup_parse(const char *arg, struct cgroup_ref *cg)
{
	/* --cgroupfs / would give "//a" */
	const char *fs = strcmp(cgroupfs_dir, "/") ? cgroupfs_dir : "";
	const char *rel;
	int err, n;

	cg->arg = arg;
	cg->id = 0;
	if (*arg == '-') {
		/* most likely an option typed after OBJECT */
		p_err("invalid cgroup '%s': options go before OBJECT, and a "
		      "cgroup of that name is './%s'", arg, arg);
		return OOMCTL_EXIT_USAGE;
	}
	err = cgroup_path_norm(cgroupfs_dir, arg, cg->path, sizeof(cg->path));
	if (!err) {
		rel = strcmp(cg->path, "/") ? cg->path : *fs ? "" : "/";
		n = snprintf(cg->fspath, sizeof(cg->fspath), "%s%s", fs, rel);
		if (n >= (int)sizeof(cg->fspath))
			err = -ENAMETOOLONG;
	}
	if (err == -ENAMETOOLONG)
		p_err("cgroup path too long: '%s'", arg);
	else if (err)
		p_err("invalid cgroup '%s': %s", arg,
		      *arg ? "'..' is not allowed" : "empty path");
	return err ? OOMCTL_EXIT_USAGE : OOMCTL_EXIT_OK;
}

int cgroup_resolve(struct cgroup_ref *cg)
{
	int err = cgroup_id_from_path(cg->fspath, &cg->id);

	switch (err) {
	case 0:
		return OOMCTL_EXIT_OK;
	case -ENOENT:
		p_err("cgroup '%s' not found: no %s", cg->arg, cg->fspath);
		break;
	case -ENOTDIR:
		p_err("'%s' is not a cgroup: %s is not a directory", cg->arg,
		      cg->fspath);
		break;
	case -EMEDIUMTYPE:
		p_err("'%s' is not a cgroup: %s is not on cgroup2 (see --cgroupfs)",
		      cg->arg, cg->fspath);
		break;
	default:
		p_err("cannot resolve cgroup '%s' (%s): %s", cg->arg,
		      cg->fspath, strerror(-err));
	}
	return OOMCTL_EXIT_FAIL;
}
