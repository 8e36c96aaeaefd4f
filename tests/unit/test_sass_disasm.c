/* SPDX-License-Identifier: MIT */
/*
 * gpu/sass/disasm.c and cache.c: nvdisasm run on a cubin (a stand-in
 * program here), its environment, its failures, a module's kernels
 * disassembled alone by their ELF symbols, a run ended by a cancel, and
 * the text kept across runs by the cubin's contents.
 */
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "gpu/sass/sass.h"
#include "tests/unit/test.h"

static void test_disassemble(void)
{
	char dir[] = "/tmp/gputool-sass-XXXXXX", prog[256], *text = NULL;
	static const uint8_t cubin[] = { 0x7f, 'E', 'L', 'F', 1, 2, 3 };
	size_t len = 0;

	CHECK(mkdtemp(dir));
	gt_config.cache = "0"; /* every call runs the stand-in */
	snprintf(prog, sizeof(prog), "%s/nvdisasm", dir);
	test__script(prog, "%s", "#!/bin/sh\n"
	      "[ \"$1 $2 $3\" = \"-c -g -gi\" ] || exit 4\n"
	      "[ -z \"$LD_PRELOAD$CUDA_INJECTION64_PATH\" ] || exit 5\n"
	      "head -c 4 \"$4\" | grep -q ELF || exit 6\n"
	      "echo \"  /*0000*/  EXIT ;\"\n"
	      "echo \"keep $KEEP\"\n");
	setenv("LD_PRELOAD", "/nonexistent/libgputool.so", 1);
	setenv("CUDA_INJECTION64_PATH", "/nonexistent/libgputool.so", 1);
	setenv("KEEP", "this", 1);
	CHECK(gt_sass__disassemble(prog, cubin, sizeof(cubin), NULL, 0, &text, &len) == 0);
	unsetenv("LD_PRELOAD");
	CHECK(text && len == strlen(text));
	CHECK(!strcmp(text, "  /*0000*/  EXIT ;\nkeep this\n"));
	free(text);
	/* A failing one, a missing one, one switched off. */
	CHECK(gt_sass__disassemble("/bin/false", cubin, sizeof(cubin), NULL, 0, &text, &len) == -EIO && !text);
	snprintf(prog, sizeof(prog), "%s/none", dir);
	CHECK(gt_sass__disassemble(prog, cubin, sizeof(cubin), NULL, 0, &text, &len) == -ENOENT && !text);
	CHECK(gt_sass__disassemble("0", cubin, sizeof(cubin), NULL, 0, &text, &len) == -ECANCELED);
	snprintf(prog, sizeof(prog), "%s/nvdisasm", dir);
	unlink(prog);
	rmdir(dir);
}

static int runs(const char *dir);

/* A CUDA ELF of three functions: kernels k1 and k2 (symbols 1 and 2,
 * STO_CUDA_ENTRY) and a device function dev (3); into @buf, its size. */
static size_t three_functions(uint8_t *buf)
{
	static const char strtab[] = "\0k1\0k2\0dev";
	static const char shstrtab[] = "\0.symtab\0.strtab\0.shstrtab";
	Elf64_Ehdr *eh = (Elf64_Ehdr *)(void *)buf;
	Elf64_Sym *sym;
	Elf64_Shdr *sh;
	size_t at = sizeof(*eh), symtab, str, shstr;

	memset(buf, 0, 1024);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = 190; /* EM_CUDA */
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 4;
	eh->e_shstrndx = 3;
	symtab = at;
	sym = (Elf64_Sym *)(void *)(buf + at);
	sym[1] = (Elf64_Sym){ .st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_other = 0x10 };
	sym[2] = (Elf64_Sym){ .st_name = 4, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_other = 0x10 };
	sym[3] = (Elf64_Sym){ .st_name = 7, .st_info = ELF64_ST_INFO(STB_LOCAL, STT_FUNC) };
	at += 4 * sizeof(*sym);
	str = at;
	memcpy(buf + at, strtab, sizeof(strtab));
	at += sizeof(strtab);
	shstr = at;
	memcpy(buf + at, shstrtab, sizeof(shstrtab));
	at = (at + sizeof(shstrtab) + 7) & ~(size_t)7;
	eh->e_shoff = at;
	sh = (Elf64_Shdr *)(void *)(buf + at);
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_SYMTAB, .sh_offset = symtab, .sh_size = 4 * sizeof(*sym),
			      .sh_link = 2, .sh_info = 3, .sh_entsize = sizeof(*sym), .sh_addralign = 8 };
	sh[2] = (Elf64_Shdr){ .sh_name = 9, .sh_type = SHT_STRTAB, .sh_offset = str, .sh_size = sizeof(strtab),
			      .sh_addralign = 1 };
	sh[3] = (Elf64_Shdr){ .sh_name = 17, .sh_type = SHT_STRTAB, .sh_offset = shstr, .sh_size = sizeof(shstrtab),
			      .sh_addralign = 1 };
	return at + 4 * sizeof(*sh);
}

/* Part of a module: nvdisasm is asked for the kernels named and every
 * function that is not a kernel, by symbol index; the part is kept apart
 * from the whole in the cache; a kernel the module lacks asks nothing. */
static void test_disassemble_part(void)
{
	char dir[] = "/tmp/gputool-sass-part-XXXXXX", prog[256], cache[300], path[600], *text = NULL;
	static uint8_t elf[1024];
	const char *k1[] = { "k1" }, *k2[] = { "k2" }, *none[] = { "nope" };
	size_t size = three_functions(elf), len = 0;

	CHECK(size < sizeof(elf));
	CHECK(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/nvdisasm", dir);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	/* Its arguments, then a section for each function asked for. */
	test__script(prog,
		"#!/bin/sh\nprintf x >> %s/runs\necho \"$1 $2 $3 $4 $5\"\n"
		"[ \"$4\" = -fun ] || exit 0\n"
		"for i in $(echo $5 | tr , ' '); do\n"
		"  case $i in 1) n=k1;; 2) n=k2;; 3) n=dev;; esac\n"
		"  printf '\\t.section\\t.text.%%s,@progbits\\n' $n\n"
		"done\n",
		dir);
	gt_config.cache = cache;
	CHECK(gt_sass__disassemble(prog, elf, size, k2, 1, &text, &len) == 0 && runs(dir) == 1);
	CHECK(text && !strcmp(text, "-c -g -gi -fun 2,3\n\t.section\t.text.k2,@progbits\n"
				    "\t.section\t.text.dev,@progbits\n"));
	free(text);
	CHECK(gt_sass__disassemble(prog, elf, size, k2, 1, &text, &len) == 0 && runs(dir) == 1);
	CHECK(text && !strncmp(text, "-c -g -gi -fun 2,3\n", 19));
	free(text);
	/* k1 sampled in another run: the part kept grows to both. */
	CHECK(gt_sass__disassemble(prog, elf, size, k1, 1, &text, &len) == 0 && runs(dir) == 2);
	CHECK(text && !strncmp(text, "-c -g -gi -fun 1,2,3\n", 21));
	free(text);
	CHECK(gt_sass__disassemble(prog, elf, size, k2, 1, &text, &len) == 0 && runs(dir) == 2);
	CHECK(text && !strncmp(text, "-c -g -gi -fun 1,2,3\n", 21));
	free(text);
	CHECK(gt_sass__disassemble(prog, elf, size, NULL, 0, &text, &len) == 0 && runs(dir) == 3);
	CHECK(text && !strncmp(text, "-c -g -gi /", 11));
	free(text);
	CHECK(gt_sass__disassemble(prog, elf, size, none, 1, &text, &len) == -ENOENT && !text && runs(dir) == 3);
	/* Names of another module's kernels among them: left out. */
	{
		const char *mixed[] = { "elsewhere", "k2" };

		CHECK(gt_sass__disassemble(prog, elf, size, mixed, 2, &text, &len) == 0 && runs(dir) == 3);
		free(text);
	}
	gt_config.cache = "0";
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
}

struct slow_run {
	const char *prog;
	int err;
};

static void *slow_disassemble(void *arg)
{
	static const uint8_t cubin[] = { 0x7f, 'E', 'L', 'F', 9 };
	struct slow_run *r = arg;
	char *text = NULL;
	size_t len = 0;

	r->err = gt_sass__disassemble(r->prog, cubin, sizeof(cubin), NULL, 0, &text, &len);
	free(text);
	return NULL;
}

/* A run of nvdisasm ended by gt_sass__cancel (at exit, one for a module
 * without samples): it returns -ECANCELED at once, not after its 30 s. */
static void test_disassemble_cancel(void)
{
	char dir[] = "/tmp/gputool-sass-cancel-XXXXXX", prog[256], path[600];
	struct slow_run r = { .prog = prog, .err = 1 };
	struct timespec t0, t1;
	pthread_t th;

	CHECK(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/nvdisasm", dir);
	test__script(prog, "#!/bin/sh\nexec sleep 30\n");
	gt_config.cache = "0";
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(pthread_create(&th, NULL, slow_disassemble, &r) == 0);
	usleep(200000);
	gt_sass__cancel();
	CHECK(pthread_join(th, NULL) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(r.err == -ECANCELED);
	CHECK(t1.tv_sec - t0.tv_sec < 10);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
}

/* Runs of the stand-in nvdisasm of test_disassemble_cache so far. */
static int runs(const char *dir)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/runs", dir);
	return stat(path, &st) ? 0 : (int)st.st_size;
}

/* What nvdisasm wrote is kept by the cubin's contents: the same cubin is
 * not disassembled again, another one is; an entry cut short is a miss
 * and is written again; GPUTOOL_CACHE=0 keeps nothing. */
static void test_disassemble_cache(void)
{
	char dir[] = "/tmp/gputool-sass-cache-XXXXXX", prog[256], cache[300], path[600], *text = NULL;
	static const uint8_t a[] = { 0x7f, 'E', 'L', 'F', 1, 2, 3 }, b[] = { 0x7f, 'E', 'L', 'F', 1, 2, 4 };
	size_t len = 0;

	CHECK(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/nvdisasm", dir);
	snprintf(cache, sizeof(cache), "%s/cache/deeper", dir);
	test__script(prog, "#!/bin/sh\nprintf x >> %s/runs\necho \"  /*0000*/  EXIT ; // $(od -An -tx1 \"$4\" | tr -d ' ')\"\n",
		dir);
	gt_config.cache = cache;
	CHECK(gt_sass__disassemble(prog, a, sizeof(a), NULL, 0, &text, &len) == 0 && runs(dir) == 1);
	CHECK(text && !strcmp(text, "  /*0000*/  EXIT ; // 7f454c46010203\n"));
	free(text);
	CHECK(gt_sass__disassemble(prog, a, sizeof(a), NULL, 0, &text, &len) == 0 && runs(dir) == 1);
	CHECK(text && len == strlen(text) && !strcmp(text, "  /*0000*/  EXIT ; // 7f454c46010203\n"));
	free(text);
	CHECK(gt_sass__disassemble(prog, b, sizeof(b), NULL, 0, &text, &len) == 0 && runs(dir) == 2);
	CHECK(text && !strcmp(text, "  /*0000*/  EXIT ; // 7f454c46010204\n"));
	free(text);
	/* Every entry cut short by a byte: disassembled again, and kept whole. */
	snprintf(path, sizeof(path), "find %s -name '*.sass' -exec truncate -s -1 {} +", cache);
	CHECK(system(path) == 0);
	CHECK(gt_sass__disassemble(prog, a, sizeof(a), NULL, 0, &text, &len) == 0 && runs(dir) == 3);
	CHECK(text && !strcmp(text, "  /*0000*/  EXIT ; // 7f454c46010203\n"));
	free(text);
	CHECK(gt_sass__disassemble(prog, a, sizeof(a), NULL, 0, &text, &len) == 0 && runs(dir) == 3);
	free(text);
	gt_config.cache = "0";
	CHECK(gt_sass__disassemble(prog, a, sizeof(a), NULL, 0, &text, &len) == 0 && runs(dir) == 4);
	free(text);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
}

int main(void)
{
	test_disassemble();
	test_disassemble_cache();
	test_disassemble_part();
	test_disassemble_cancel();
	printf("ok\n");
	return 0;
}
