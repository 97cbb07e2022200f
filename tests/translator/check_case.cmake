# One translator diagnostics case, run as cmake -P (no tools beyond CMake):
#   -DTRANSLATOR=<nestcl-translate> -DCASE=<name> -DSOURCE_DIR=<tests/translator>
#   -DSHIM=<models/shim> -DOUT=<scratch dir> -DEXPECT_RC=<code>
# The model inputs/<CASE>.h must give exactly the diagnostics of
# inputs/<CASE>.expected on stderr, exit with EXPECT_RC and leave no output file
# for the model: a stale file from an earlier run is planted and must be gone.
# Its --report json must list it as cpu-only with the same diagnostic.
foreach(v TRANSLATOR CASE SOURCE_DIR SHIM OUT EXPECT_RC)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_case.cmake: -D${v}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
file(WRITE ${OUT}/${CASE}.cl "stale output of an earlier run\n")
execute_process(COMMAND ${TRANSLATOR} inputs/${CASE}.h -o ${OUT} -I ${SHIM} --report json --report-file ${OUT}/report.json
  WORKING_DIRECTORY ${SOURCE_DIR}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL EXPECT_RC)
  message(FATAL_ERROR "${CASE}: exit code ${rc}, expected ${EXPECT_RC}\nstderr:\n${err}")
endif()
file(READ ${SOURCE_DIR}/inputs/${CASE}.expected expected)
if(NOT err STREQUAL expected)
  message(FATAL_ERROR "${CASE}: diagnostics differ\n--- expected\n${expected}--- got\n${err}")
endif()
foreach(suffix .cl _cpu.c _desc.c _glue.hpp _syn.cl _syn.c)
  if(EXISTS ${OUT}/${CASE}${suffix})
    message(FATAL_ERROR "${CASE}: ${CASE}${suffix} exists although the model failed")
  endif()
endforeach()
file(GLOB leftovers ${OUT}/*.tmp.*)
if(leftovers)
  message(FATAL_ERROR "${CASE}: temporary files left: ${leftovers}")
endif()
file(READ ${OUT}/nestcl_models.c reg)
if(NOT reg MATCHES "nestcl_builtin_model_count = 0;")
  message(FATAL_ERROR "${CASE}: the registry lists a failed model:\n${reg}")
endif()
# The JSON report lists the model as CPU-only with the same first diagnostic.
file(READ ${OUT}/report.json report)
string(JSON status ERROR_VARIABLE jerr GET "${report}" models 0 status)
if(jerr OR NOT status STREQUAL "cpu-only")
  message(FATAL_ERROR "${CASE}: report status '${status}' ${jerr}\n${report}")
endif()
string(JSON d0 GET "${report}" models 0 diagnostics 0)
string(REGEX REPLACE "\n.*" "" first_expected "${expected}")
if(NOT d0 STREQUAL first_expected)
  message(FATAL_ERROR "${CASE}: report diagnostic '${d0}', expected '${first_expected}'")
endif()
string(JSON ncpu GET "${report}" cpu_only)
if(NOT ncpu EQUAL 1)
  message(FATAL_ERROR "${CASE}: report counts ${ncpu} cpu-only models")
endif()
message(STATUS "${CASE}: exit ${rc}, diagnostics as expected, no output files, report says cpu-only")
