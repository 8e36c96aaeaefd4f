/* SPDX-License-Identifier: MIT */
/*
 * What an attacker (or a reused pid) leaves where a profiler writes:
 *
 *   plant_links DIR VICTIM   links DIR/<exe>-0-<pid>.gtprof and .txt, the
 *                            names the tool will pick, to VICTIM, then runs
 *                            a parallel region and exits
 *   plant_links --chdir      runs a parallel region, then moves to / and
 *                            exits there (a relative output directory must
 *                            still be the one of the start)
 *   plant_links --chdir-first DIR
 *                            moves to DIR before anything else (before the
 *                            OpenMP runtime starts), then runs a parallel
 *                            region
 *   plant_links --secure     also prints "secure N" (getauxval(AT_SECURE)):
 *                            installed setuid and run by another user, 1
 */
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int team = 0;

	if (argc > 2 && !strcmp(argv[1], "--chdir-first")) {
		if (chdir(argv[2])) {
			perror("chdir");
			return 1;
		}
	} else if (argc > 2) {
		static const char *const ext[] = { ".gtprof", ".txt" };

		for (int i = 0; i < 2; i++) {
			char link[4096];

			snprintf(link, sizeof(link), "%s/plant_links-0-%d%s", argv[1], (int)getpid(), ext[i]);
			if (symlink(argv[2], link)) {
				perror(link);
				return 1;
			}
		}
	}
#pragma omp parallel reduction(+ : team)
	team++;
	if (argc > 1 && !strcmp(argv[1], "--chdir") && chdir("/")) {
		perror("chdir");
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "--secure"))
		printf("secure %lu\n", getauxval(AT_SECURE));
	printf("team %s\n", team > 0 ? "ran" : "did not run");
	return 0;
}
