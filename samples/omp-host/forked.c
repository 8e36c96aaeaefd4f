/* SPDX-License-Identifier: MIT */
/*
 * A process that forks without exec: the parent runs a region from
 * parent_work() before the fork, the child runs one from child_work() after
 * it. Each process's profile must hold its own work only.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static double work(void)
{
	double sum = 0.0;

#pragma omp parallel for reduction(+ : sum)
	for (long i = 0; i < 2000000; i++)
		sum += (double)(i % 3);
	return sum;
}

__attribute__((noinline)) static double parent_work(void)
{
	double r = work();

	__asm__ volatile("" ::: "memory");
	return r;
}

__attribute__((noinline)) static double child_work(void)
{
	double r = work();

	__asm__ volatile("" ::: "memory");
	return r;
}

int main(void)
{
	double a = parent_work();
	pid_t pid;
	int status = 0;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		printf("child: %.1f\n", child_work());
		return 0;
	}
	waitpid(pid, &status, 0);
	printf("parent: %.1f, child exit %d\n", a, WEXITSTATUS(status));
	return 0;
}
