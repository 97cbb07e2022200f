# Runs a command and checks its exit code and output, for CLI behaviour that
# PASS_REGULAR_EXPRESSION/WILL_FAIL cannot express (a specific exit code).
#   cmake -DCMD="prog;arg;..." -DEXIT=2 [-DSTDOUT_RE=regex] [-DSTDERR_RE=regex]
#         [-DSTDERR_EMPTY=1] [-DJSON_DEVICES=1] -P check_cli.cmake
# JSON_DEVICES=1 parses stdout as nestcl-info --json and requires a device list.
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "exit ${rc}\n--- stdout\n${out}--- stderr\n${err}")
if(NOT rc STREQUAL "${EXIT}")
  message(FATAL_ERROR "expected exit code ${EXIT}, got ${rc}")
endif()
if(DEFINED STDOUT_RE AND NOT out MATCHES "${STDOUT_RE}")
  message(FATAL_ERROR "stdout does not match: ${STDOUT_RE}")
endif()
if(DEFINED STDERR_RE AND NOT err MATCHES "${STDERR_RE}")
  message(FATAL_ERROR "stderr does not match: ${STDERR_RE}")
endif()
if(STDERR_EMPTY AND NOT err STREQUAL "")
  message(FATAL_ERROR "stderr should be empty")
endif()
if(JSON_DEVICES)
  string(JSON n LENGTH "${out}" devices)
  if(n LESS 1)
    message(FATAL_ERROR "JSON lists no devices")
  endif()
  foreach(key name platform type global_mem_bytes max_alloc_bytes preferred_wg_multiple fp64 int64_atomics
              int64_extended_atomics max_work_group_size local_mem_bytes)
    string(JSON v GET "${out}" devices 0 ${key})
  endforeach()
endif()
