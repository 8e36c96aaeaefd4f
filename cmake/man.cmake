# Writes the gputool(1) man page from the command's own help text, so the
# two never disagree: cmake -DGPUTOOL=path/to/gputool -DVERSION=x.y.z
# -DOUT=gputool.1 -P man.cmake
execute_process(COMMAND ${GPUTOOL} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${GPUTOOL} --help failed (${rc})")
endif()
execute_process(COMMAND ${GPUTOOL} help env OUTPUT_VARIABLE env RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${GPUTOOL} help env failed (${rc})")
endif()
# roff: a leading dot or quote would start a request, a backslash an escape.
foreach(part help env)
  string(REPLACE "\\" "\\e" ${part} "${${part}}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" ${part} "${${part}}")
endforeach()
string(TIMESTAMP today "%Y-%m-%d" UTC)
file(WRITE ${OUT} ".TH GPUTOOL 1 \"${today}\" \"gputool ${VERSION}\" \"User Commands\"
.SH NAME
gputool \\- measure where CPU threads and GPUs spend their time, and report it
.SH SYNOPSIS
.B gputool run
[\\fIOPTIONS\\fR] [\\fB\\-\\-\\fR] \\fIPROGRAM\\fR [\\fIARGS\\fR...]
.br
.B gputool report
\\fIPATH\\fR [\\fIOPTIONS\\fR]
.SH DESCRIPTION
.B gputool run
runs PROGRAM measured by libgputool.so (OpenMP, OpenACC, CUDA, OpenCL, MPI);
.B gputool report
merges and reports what it measured. The command's help follows.
.PP
.nf
${help}.fi
.SH ENVIRONMENT
.nf
${env}.fi
.SH FILES
.TP
.I gputool-<program>-<job or pid>/
the measurement directory: one profile (.gtprof) and one report (.txt) per process.
.SH SEE ALSO
The documentation installed with gputool (README.md, REPORT.md, PROFILE.md).
")
