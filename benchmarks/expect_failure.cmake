# cmake -DCMD=<program> -DARGS=<arguments separated by @> -DCODE=<exit code> -DMESSAGE=<regex> [-DOUT=<file>]
#       -P expect_failure.cmake
#
# Bad input must fail cleanly: the given exit code (2 usage, 1 run time), one
# "error: ..." line on stderr matching MESSAGE, no crash, and no results file
# (OUT) left behind, not even a partial one.
if(OUT)
  file(REMOVE "${OUT}")
endif()
string(REPLACE "@" ";" args "${ARGS}")
execute_process(COMMAND ${CMD} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "${CODE}")
  message(FATAL_ERROR "expect_failure: exit '${rc}', want ${CODE}\nstderr: ${err}")
endif()
if(NOT err MATCHES "error: ")
  message(FATAL_ERROR "expect_failure: no 'error: ' line on stderr: ${err}")
endif()
if(NOT err MATCHES "${MESSAGE}")
  message(FATAL_ERROR "expect_failure: stderr does not match '${MESSAGE}': ${err}")
endif()
if(OUT)
  file(GLOB leftovers "${OUT}*")
  if(leftovers)
    message(FATAL_ERROR "expect_failure: results file left behind: ${leftovers}")
  endif()
endif()
string(STRIP "${err}" err)
message(STATUS "expect_failure: exit ${rc}: ${err}")
