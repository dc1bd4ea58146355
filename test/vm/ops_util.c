// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "ops_util.h"
#include "scenario.h"

struct bpf_object *ops_load(const char *path)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);

	if (!obj || bpf_object__load(obj))
		bail("cannot load %s", path);
	return obj;
}

void *ops_global_data(struct bpf_object *obj, const char *suffix, size_t size)
{
	size_t len, slen = strlen(suffix), have = 0;
	struct bpf_map *m;
	void *data = NULL;

	bpf_object__for_each_map(m, obj) {
		const char *name = bpf_map__name(m);

		len = strlen(name);
		if (len > slen && !strcmp(name + len - slen, suffix))
			data = bpf_map__initial_value(m, &have);
	}
	if (!data || have < size)
		bail("no %s of %zu bytes in %s", suffix, size, bpf_object__name(obj));
	return data;
}

struct bpf_link *ops_attach(struct bpf_object *obj, const char *name,
			    const char *cg)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);
	LIBBPF_OPTS(bpf_struct_ops_opts, opts);
	struct bpf_link *link;
	char path[256];
	int fd = -1, err;

	if (!m)
		bail("no map %s in %s", name, bpf_object__name(obj));
	if (*cg) {
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s", cg);
		fd = open(path, O_RDONLY | O_DIRECTORY);
		if (fd < 0)
			bail("cannot open %s", path);
		opts.flags = BPF_F_CGROUP_FD;
		opts.target_fd = fd;
	}
	link = bpf_map__attach_struct_ops_opts(m, &opts);
	err = errno;
	if (fd >= 0)
		close(fd);
	errno = err;
	return link;
}
