# Included from tests/unit/CMakeLists.txt: tests of the runtime headers in
# kernels_templates/ (Philox and derived draws, fixed point, ring helpers,
# portable math). The C-only ones are fast and run in the sanitizer build too;
# the OpenCL ones compare the device with the C path bit for bit.
if(DEFINED NESTCL_UNIT_ENV)
  set(NESTCL_NUMERIC_ENV ${NESTCL_UNIT_ENV})
else()
  set(NESTCL_NUMERIC_ENV ${NESTCL_TEST_ENV})
endif()

foreach(t philox fixed ring)
  add_executable(test_numeric_${t} ${CMAKE_CURRENT_SOURCE_DIR}/test_numeric_${t}.c)
  target_link_libraries(test_numeric_${t} PRIVATE nestcl_kernels OpenMP::OpenMP_C m)
  add_test(NAME unit.numeric_${t} COMMAND test_numeric_${t})
  set_tests_properties(unit.numeric_${t} PROPERTIES
    ENVIRONMENT "${NESTCL_NUMERIC_ENV}" LABELS "unit;sanitize" TIMEOUT 120)
endforeach()

add_executable(test_numeric_opencl ${CMAKE_CURRENT_SOURCE_DIR}/test_numeric_opencl.c)
target_link_libraries(test_numeric_opencl PRIVATE nestcl nestcl_kernels m)
add_test(NAME unit.numeric_opencl COMMAND test_numeric_opencl)
set_tests_properties(unit.numeric_opencl PROPERTIES
  ENVIRONMENT "${NESTCL_NUMERIC_ENV}" LABELS "unit" SKIP_RETURN_CODE ${NESTCL_SKIP_CODE} TIMEOUT 300)

# The portable transcendental functions (nestcl_math.h): accuracy against glibc
# on the C path (fast, sanitizer build too), and C against OpenCL bit for bit.
add_executable(test_numeric_math ${CMAKE_CURRENT_SOURCE_DIR}/test_numeric_math.c)
target_link_libraries(test_numeric_math PRIVATE nestcl_kernels m)
add_test(NAME unit.numeric_math COMMAND test_numeric_math)
set_tests_properties(unit.numeric_math PROPERTIES
  ENVIRONMENT "${NESTCL_NUMERIC_ENV}" LABELS "unit;sanitize" SKIP_RETURN_CODE ${NESTCL_SKIP_CODE} TIMEOUT 120)

add_executable(test_numeric_math_opencl ${CMAKE_CURRENT_SOURCE_DIR}/test_numeric_math_opencl.c)
target_link_libraries(test_numeric_math_opencl PRIVATE nestcl nestcl_kernels m)
add_test(NAME unit.numeric_math_opencl COMMAND test_numeric_math_opencl)
set_tests_properties(unit.numeric_math_opencl PROPERTIES
  ENVIRONMENT "${NESTCL_NUMERIC_ENV}" LABELS "unit" SKIP_RETURN_CODE ${NESTCL_SKIP_CODE} TIMEOUT 300)

# glibc's exp and pow reproduced (nestcl_libm.h): against the host's libm in both of
# glibc's builds (the second run hides FMA and AVX2 from glibc's ifunc
# selection), and C against OpenCL bit for bit when a device exists.
add_executable(test_numeric_libm ${CMAKE_CURRENT_SOURCE_DIR}/test_numeric_libm.c)
target_link_libraries(test_numeric_libm PRIVATE nestcl nestcl_kernels m)
# nestcl_libm_variants(NAME TARGET LABELS TIMEOUT): the test NAME in glibc's FMA build, and NAME_plain in
# its plain one (FMA and AVX2 hidden from glibc's ifunc selection).
function(nestcl_libm_variants name target labels timeout)
  add_test(NAME ${name} COMMAND ${target})
  add_test(NAME ${name}_plain COMMAND ${target})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${NESTCL_NUMERIC_ENV}" LABELS "${labels}" TIMEOUT ${timeout})
  set_tests_properties(${name}_plain PROPERTIES
    ENVIRONMENT "${NESTCL_NUMERIC_ENV};GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA" LABELS "${labels}" TIMEOUT ${timeout})
endfunction()
nestcl_libm_variants(unit.numeric_libm test_numeric_libm "unit" 300)

# The postsynaptic spike history for STDP (nestcl_history.h): against a plain
# reference of NEST's ArchivingNode, overflow reporting, and OpenCL against C.
add_executable(test_history ${CMAKE_CURRENT_SOURCE_DIR}/test_history.c)
target_link_libraries(test_history PRIVATE nestcl nestcl_kernels m)
add_test(NAME unit.history COMMAND test_history)
set_tests_properties(unit.history PROPERTIES ENVIRONMENT "${NESTCL_NUMERIC_ENV}" LABELS "unit" TIMEOUT 300)

# The adaptive RKF45 integration of NEST's ODE models (nestcl_rkf45.h): against
# GSL's gsl_odeiv_evolve_apply bit for bit, call by call (fast, sanitizer build
# too), and the OpenCL text against the C path. rkf45_systems.h, the systems
# both run, is embedded for the device.
if(GSL_FOUND)
  add_executable(test_numeric_rkf45 ${CMAKE_CURRENT_SOURCE_DIR}/test_numeric_rkf45.c)
  target_include_directories(test_numeric_rkf45 PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(test_numeric_rkf45 PRIVATE nestcl_kernels GSL::gsl m)
  # Twice, as unit.numeric_libm: GSL's pow (the control) and the systems' exp
  # in glibc's FMA build, then in its plain one (FMA and AVX2 hidden).
  nestcl_libm_variants(unit.numeric_rkf45 test_numeric_rkf45 "unit;sanitize" 120)
else()
  message(STATUS "tests/unit: GSL not found (install libgsl-dev); unit.numeric_rkf45, nestcl_rkf45.h against GSL, is skipped")
endif()

nestcl_embed(${CMAKE_CURRENT_BINARY_DIR}/rkf45_systems_source.c rkf45_systems_source
  ${CMAKE_CURRENT_SOURCE_DIR}/rkf45_systems.h)
add_executable(test_numeric_rkf45_opencl ${CMAKE_CURRENT_SOURCE_DIR}/test_numeric_rkf45_opencl.c
  ${CMAKE_CURRENT_BINARY_DIR}/rkf45_systems_source.c)
target_include_directories(test_numeric_rkf45_opencl PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(test_numeric_rkf45_opencl PRIVATE nestcl nestcl_kernels m)
add_test(NAME unit.numeric_rkf45_opencl COMMAND test_numeric_rkf45_opencl)
set_tests_properties(unit.numeric_rkf45_opencl PROPERTIES
  ENVIRONMENT "${NESTCL_NUMERIC_ENV}" LABELS "unit" SKIP_RETURN_CODE ${NESTCL_SKIP_CODE} TIMEOUT 300)

# NEST's random distributions for translated models (nestcl_dist.h): moments
# and P(0) of 2 * 10^5 draws per distribution, and the OpenCL text against the
# C path bit for bit; the C part alone also in the sanitizer build.
add_executable(test_numeric_dist ${CMAKE_CURRENT_SOURCE_DIR}/test_numeric_dist.c)
target_link_libraries(test_numeric_dist PRIVATE nestcl nestcl_kernels m)
add_test(NAME unit.numeric_dist COMMAND test_numeric_dist)
set_tests_properties(unit.numeric_dist PROPERTIES
  ENVIRONMENT "${NESTCL_NUMERIC_ENV}" LABELS "unit" SKIP_RETURN_CODE ${NESTCL_SKIP_CODE} TIMEOUT 300)
add_test(NAME unit.numeric_dist_c COMMAND test_numeric_dist --no-opencl)
set_tests_properties(unit.numeric_dist_c PROPERTIES
  ENVIRONMENT "${NESTCL_NUMERIC_ENV}" LABELS "unit;sanitize" TIMEOUT 120)
