# Runs nestcl-translate over NEST's own models/ (cmake -P). Needs the
# environment variables NEST_SOURCE_DIR (a NEST 3.x source tree) and, for
# NEST's generated config.h, NEST_BUILD_DIR (a configured NEST build tree, or
# any directory holding config.h); NEST_CXX_STD overrides the C++ standard
# (default c++20, which NEST 3.10 needs). Configuring NEST is done by hand,
# outside this repository. Without NEST_SOURCE_DIR the test reports itself
# skipped (matched by the test's SKIP_REGULAR_EXPRESSION).
#
# Writes ${OUT}/coverage.md (model, translated or not, reason) and requires
# iaf_psc_alpha, iaf_psc_exp, iaf_psc_delta and six GSL models to translate, every translated
# kernel to build on the OpenCL device (-DCLBUILD=<nestcl_tr_clbuild>), with
# -DMPI_INCLUDES=<dirs separated by |> for a NEST built with MPI, and, with
# -DCC=<C compiler> -DKERNELS_DIR=... -DHOST_INCLUDE=..., the generated C to compile.
foreach(v TRANSLATOR OUT CLBUILD)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_real_nest.cmake: -D${v}=... is required")
  endif()
endforeach()
if(NOT DEFINED ENV{NEST_SOURCE_DIR} OR "$ENV{NEST_SOURCE_DIR}" STREQUAL "")
  message(STATUS "skipped: NEST_SOURCE_DIR is unset (set it to a NEST 3.x source tree, and NEST_BUILD_DIR to a configured build)")
  return()
endif()
set(src $ENV{NEST_SOURCE_DIR})
set(std c++20)
if(DEFINED ENV{NEST_CXX_STD})
  set(std $ENV{NEST_CXX_STD})
endif()
set(incs)
foreach(d nestkernel libnestutil models sli nestkernel/spatial thirdparty nest)
  if(IS_DIRECTORY ${src}/${d})
    list(APPEND incs -I ${src}/${d})
  endif()
endforeach()
if(DEFINED ENV{NEST_BUILD_DIR})
  foreach(d libnestutil nestkernel "")
    if(IS_DIRECTORY $ENV{NEST_BUILD_DIR}/${d})
      list(APPEND incs -I $ENV{NEST_BUILD_DIR}/${d})
    endif()
  endforeach()
endif()
# A NEST configured with MPI includes mpi.h from its headers (HAVE_MPI in
# config.h): give the MPI include directories this build found (MPI_INCLUDES,
# '|'-separated).
if(DEFINED MPI_INCLUDES AND NOT MPI_INCLUDES STREQUAL "")
  string(REPLACE "|" ";" mpi_dirs "${MPI_INCLUDES}")
  foreach(d IN LISTS mpi_dirs)
    list(APPEND incs -I ${d})
  endforeach()
endif()
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${TRANSLATOR} ${src}/models -o ${OUT}/gen ${incs} -std=${std}
                        --report json --report-file ${OUT}/report.json
  RESULT_VARIABLE rc ERROR_VARIABLE err)
file(WRITE ${OUT}/diagnostics.txt "${err}")
if(NOT rc EQUAL 0 AND NOT rc EQUAL 3)
  message(FATAL_ERROR "nestcl-translate failed (exit ${rc}):\n${err}")
endif()
file(READ ${OUT}/report.json report)
string(JSON n LENGTH "${report}" models)
string(JSON ntr GET "${report}" translated)
set(table "# nestcl-translate over ${src}/models\n\n${ntr} of ${n} models (neurons, the few devices deriving from a node base, and synapse models) translate.\n\n| model | translated | reason |\n|---|---|---|\n")
math(EXPR last "${n} - 1")
foreach(k RANGE ${last})
  string(JSON name GET "${report}" models ${k} name)
  string(JSON status GET "${report}" models ${k} status)
  set(reason "")
  if(status STREQUAL "cpu-only")
    string(JSON nd LENGTH "${report}" models ${k} diagnostics)
    math(EXPR dl "${nd} - 1")
    foreach(j RANGE ${dl})
      string(JSON d GET "${report}" models ${k} diagnostics ${j})
      if(d MATCHES "error: (.*)$")
        set(reason "${CMAKE_MATCH_1}")
        break()
      endif()
    endforeach()
    string(REPLACE "|" "\\|" reason "${reason}")
  endif()
  if(status STREQUAL "translated")
    string(APPEND table "| ${name} | yes | |\n")
  else()
    string(APPEND table "| ${name} | no | ${reason} |\n")
  endif()
endforeach()
file(WRITE ${OUT}/coverage.md "${table}")
message(STATUS "${ntr} of ${n} NEST models (neurons, node devices, synapses) translate; table in ${OUT}/coverage.md")

# and NEST's GSL models, integrated by nestcl_rkf45.h on the device
foreach(m iaf_psc_alpha iaf_psc_exp iaf_psc_delta iaf_cond_alpha iaf_cond_exp aeif_cond_alpha aeif_cond_exp hh_psc_alpha
          hh_cond_exp_traub)
  if(NOT EXISTS ${OUT}/gen/${m}.cl)
    message(FATAL_ERROR "NEST's ${m} does not translate; see ${OUT}/coverage.md and ${OUT}/diagnostics.txt")
  endif()
endforeach()
# NEST's spike synapses with STDP: send() translates (the _hpc variants are the same templates).
foreach(m static_synapse stdp_synapse stdp_synapse_hom stdp_pl_synapse_hom)
  if(NOT EXISTS ${OUT}/gen/${m}_syn.cl)
    message(FATAL_ERROR "NEST's ${m} does not translate; see ${OUT}/coverage.md and ${OUT}/diagnostics.txt")
  endif()
endforeach()
# Every translated model's C compiles warning-free (as the build would compile it).
if(DEFINED CC)
  file(GLOB csources ${OUT}/gen/*_cpu.c ${OUT}/gen/*_desc.c ${OUT}/gen/*_syn.c)
  foreach(c IN LISTS csources)
    # An assert copied verbatim compiles away under NDEBUG with its C++ inside.
    file(READ ${c} text)
    if(text MATCHES "assert *\\(")
      message(FATAL_ERROR "${c} contains an untranslated assert")
    endif()
    execute_process(COMMAND ${CC} -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -ffp-contract=off
                            -fsyntax-only -I ${KERNELS_DIR} -I ${HOST_INCLUDE} ${c}
      RESULT_VARIABLE crc ERROR_VARIABLE cerr)
    if(NOT crc EQUAL 0)
      message(FATAL_ERROR "${c} does not compile:\n${cerr}")
    endif()
  endforeach()
endif()
file(GLOB kernels ${OUT}/gen/*.cl)
execute_process(COMMAND ${CLBUILD} ${kernels} RESULT_VARIABLE brc OUTPUT_VARIABLE bout ERROR_VARIABLE berr)
if(brc EQUAL 77)
  message(STATUS "skipped: no OpenCL device to build NEST's kernels")
  return()
endif()
if(NOT brc EQUAL 0)
  message(FATAL_ERROR "kernels of NEST's models do not build:\n${bout}${berr}")
endif()
message(STATUS "NEST's iaf_psc_alpha, iaf_psc_exp, iaf_psc_delta, its GSL models iaf_cond_alpha, iaf_cond_exp, aeif_cond_alpha, aeif_cond_exp, hh_psc_alpha, hh_cond_exp_traub and its static and STDP synapses translate; every translated kernel builds and its C compiles")
