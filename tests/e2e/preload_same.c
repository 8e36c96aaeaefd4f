/* SPDX-License-Identifier: MIT */
/*
 * Opens every library a runtime would open for the tool, as the runtime
 * does (dlopen of the path in OMP_TOOL_LIBRARIES, OPENCL_LAYERS,
 * ACC_PROFLIB, CUDA_INJECTION64_PATH), in a process where `gputool run` has
 * preloaded the tool, and prints one line per variable: "VAR same" when the
 * runtime would get the preloaded instance (the process holds one copy of
 * the library, whose ompt_start_tool is the one the program sees), "VAR
 * other ..." when not. Then "copies N": how many libgputool.so are loaded.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int copies__visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *slash = strrchr(info->dlpi_name, '/');
	const char *base = slash ? slash + 1 : info->dlpi_name;

	(void)size;
	if (!strcmp(base, "libgputool.so"))
		(*(int *)arg)++;
	return 0;
}

int main(void)
{
	static const char *const vars[] = { "OMP_TOOL_LIBRARIES", "OPENCL_LAYERS", "ACC_PROFLIB",
					    "CUDA_INJECTION64_PATH" };
	void *seen = dlsym(RTLD_DEFAULT, "ompt_start_tool");
	int copies = 0;

	for (size_t i = 0; i < sizeof(vars) / sizeof(*vars); i++) {
		const char *v = getenv(vars[i]);
		char path[4096];
		void *h, *sym;

		if (!v || !*v) {
			printf("%s unset\n", vars[i]);
			continue;
		}
		/* The entry naming the tool: the first of OMP_TOOL_LIBRARIES, the
		 * last of OPENCL_LAYERS, as gputool run places it. */
		if (!strcmp(vars[i], "OPENCL_LAYERS") && strrchr(v, ':'))
			v = strrchr(v, ':') + 1;
		snprintf(path, sizeof(path), "%.*s", (int)strcspn(v, ":"), v);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		sym = h ? dlsym(h, "ompt_start_tool") : NULL;
		if (h && sym && sym == seen)
			printf("%s same\n", vars[i]);
		else
			printf("%s other (%s)\n", vars[i], h ? "another copy" : dlerror());
	}
	dl_iterate_phdr(copies__visit, &copies);
	printf("copies %d\n", copies);
	return 0;
}
