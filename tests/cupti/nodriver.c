/* SPDX-License-Identifier: MIT */
/*
 * What the CUDA driver does with CUDA_INJECTION64_PATH, on a machine with no
 * driver: loads libgputool.so and calls InitializeInjection. The backend
 * must say once that it is off, and the program must run on.
 * Usage: nodriver LIBGPUTOOL
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *lib = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	int (*init)(void) = lib ? (int (*)(void))dlsym(lib, "InitializeInjection") : NULL;
	volatile double x = 0;

	if (!init) {
		fprintf(stderr, "cannot load InitializeInjection from %s\n", argc > 1 ? argv[1] : "?");
		return 2;
	}
	printf("InitializeInjection: %d\n", init());
	for (int i = 0; i < 1000000; i++)
		x += i;
	printf("done %.0f\n", x);
	return 0;
}
