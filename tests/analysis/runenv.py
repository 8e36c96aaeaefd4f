# SPDX-License-Identifier: MIT
"""What the `gputool run` tests share: checks that collect failures instead
of stopping, and an environment without any tool, job or preload setting."""
import os

TOOL_VARS = ("OMP_TOOL_LIBRARIES", "OPENCL_LAYERS", "ACC_PROFLIB", "CUDA_INJECTION64_PATH", "KOKKOS_TOOLS_LIBS",
             "NVTX_INJECTION64_PATH")
JOB_VARS = ("SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE")
failures = []


def check(cond, msg):
    """Records a failure (and goes on) unless cond; returns cond."""
    if not cond:
        failures.append(msg)
        print("FAIL " + msg)
    return cond


def clean_env(unset=(), **extra):
    """The environment without gputool's, the tool interfaces', the job's
    and LD_PRELOAD (and the names in unset), then extra."""
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("GPUTOOL_", "OMPI_", "PMIX_", "SLURM_")) and k not in TOOL_VARS + JOB_VARS + tuple(unset)
         and k != "KOKKOS_PROFILE_LIBRARY"
         and k != "LD_PRELOAD"}
    e.update(extra)
    return e


def sanitized(build):
    """Whether build is a sanitizer build of the library (ASan or TSan),
    which is preloaded only into programs that carry the sanitizer's
    runtime (analysis/launch.c)."""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            cache = f.read()
    except OSError:
        return False
    return "GT_SANITIZE:BOOL=ON" in cache or "GT_TSAN:BOOL=ON" in cache
