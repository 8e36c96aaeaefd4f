# SPDX-License-Identifier: MIT
"""libgputool.so exports its entry points and nothing else, and needs no GPU
or MPI library to load. Usage: test_exports.py BUILD_DIR"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from gtrun import check, main  # noqa: E402

LIB = os.path.join(os.path.abspath(sys.argv[1]), "libgputool.so")
ENTRY_POINTS = {"ompt_start_tool", "acc_register_library", "InitializeInjection", "clGetLayerInfo", "clInitLayer",
                # a preloaded library writes its output before an exec (core/exec.c)
                "execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle", "fexecve",
                # preloaded, with wall-clock sampling: waits measured whole (core/wall.c)
                "nanosleep", "clock_nanosleep", "usleep", "sleep", "poll", "ppoll", "select", "pselect",
                "epoll_wait", "epoll_pwait", "pause", "sigsuspend", "sigtimedwait", "sigwaitinfo",
                "semop", "semtimedop", "msgrcv",
                # preloaded: the program's threads sampled from their start (core/thread-create.c)
                "pthread_create",
                # Kokkos Tools (kokkos/kokkos.c): Kokkos looks each one up with dlsym
                "kokkosp_init_library", "kokkosp_finalize_library", "kokkosp_request_tool_settings",
                "kokkosp_begin_parallel_for", "kokkosp_end_parallel_for", "kokkosp_begin_parallel_reduce",
                "kokkosp_end_parallel_reduce", "kokkosp_begin_parallel_scan", "kokkosp_end_parallel_scan",
                "kokkosp_begin_fence", "kokkosp_end_fence", "kokkosp_push_profile_region",
                "kokkosp_pop_profile_region", "kokkosp_begin_deep_copy", "kokkosp_end_deep_copy",
                "kokkosp_allocate_data", "kokkosp_deallocate_data", "kokkosp_create_profile_section",
                "kokkosp_start_profile_section", "kokkosp_stop_profile_section",
                "kokkosp_destroy_profile_section", "kokkosp_declare_metadata"}
# NVTX's injection entry point, in a build that found the NVTX headers (nvtx/)
with open(os.path.join(os.path.abspath(sys.argv[1]), "CMakeCache.txt")) as f:
    if "GT_HAVE_NVTX:INTERNAL=ON" in f.read():
        ENTRY_POINTS.add("InitializeInjectionNvtx2")
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def mpi_entry_points():
    """Preloaded, in an MPI program: the wrappers of mpi/calls.h (C) and of
    mpi/fortran.c's table (the four spellings of each Fortran name)."""
    with open(os.path.join(SRC, "mpi", "calls.h")) as f:
        names = {"MPI_" + n for n in re.findall(r"\bX\((\w+), [A-Z_0-9]+,", f.read())}
    with open(os.path.join(SRC, "mpi", "fortran.c")) as f:
        for low, up in re.findall(r"\bX\((\w+), (\w+), \w+, [A-Z_0-9]+,", f.read()):
            names |= {"mpi_" + low, "mpi_" + low + "_", "mpi_" + low + "__", "MPI_" + up}
    return names


def test_exports():
    out = subprocess.run(["nm", "-D", "--defined-only", LIB], capture_output=True, text=True,
                         check=True).stdout
    names = {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}
    # The MPI layer is built where CMake found MPI: all of it or none.
    mpi = mpi_entry_points()
    want = ENTRY_POINTS | (mpi if names & mpi else set())
    check(names == want, "exported: %s, expected %s" % (sorted(names - want), sorted(want - names)))
    check(len(mpi) > 100 and "MPI_Allreduce" in mpi and "mpi_allreduce_" in mpi, "MPI tables read: %d names" % len(mpi))


def test_no_gpu_libraries_linked():
    out = subprocess.run(["readelf", "-d", LIB], capture_output=True, text=True, check=True).stdout
    needed = [l.split("[")[1].rstrip("]") for l in out.splitlines() if "(NEEDED)" in l]
    for n in needed:
        check(not any(n.startswith(p) for p in ("libcuda", "libcupti", "libOpenCL", "libomp", "libgomp", "libmpi")),
              "libgputool.so links %s" % n)


main([("only entry points exported", test_exports),
      ("no runtime or GPU library linked", test_no_gpu_libraries_linked)])
