/* SPDX-License-Identifier: MIT */
/* The ELF images of the program's own modules, for the backends that look
 * for a runtime's code inside them (core/modmap.h). */
#include <fcntl.h>
#include <libelf.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "core/modmap.h"

struct visit {
	gt_modmap_elf_fn fn;
	void *arg;
};

static int module__visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
	const struct visit *v = arg;
	int fd;
	Elf *elf;

	(void)size;
	if (strstr(path, "linux-vdso") || gt_modmap__classify(path) != GT_MOD_USER)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		v->fn(elf, (uintptr_t)info->dlpi_addr, v->arg);
		elf_end(elf);
	}
	close(fd);
	return 0;
}

int gt_modmap__each_user_elf(gt_modmap_elf_fn fn, void *arg)
{
	struct visit v = { fn, arg };

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	dl_iterate_phdr(module__visit, &v);
	return 0;
}
