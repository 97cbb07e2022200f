# The `nestcl` command: its dispatcher and the helpers every `nestcl run` shares
# live here (host/cli); each benchmark's driver lives in benchmarks/ and the
# performance model's commands in perfmodel/cli/. Included from host/CMakeLists.txt.
#
# The driver needs the translated models (nestcl_models, defined later in
# models/), so it is added once every folder has been read; without that
# library the driver is skipped with a message.
function(nestcl_add_driver)
  if(NOT TARGET nestcl_models)
    message(STATUS "nestcl driver: skipped (no nestcl_models library: translator or models not built)")
    return()
  endif()
  set(cli ${PROJECT_SOURCE_DIR}/host/cli)
  set(bench ${PROJECT_SOURCE_DIR}/benchmarks)
  set(pm ${PROJECT_SOURCE_DIR}/perfmodel/cli)
  # The dispatcher, the shared run helpers, and the benchmarks (networks on the public engine API, their drivers:
  # benchmarks/CMakeLists.txt lists them).
  get_property(bench_sources GLOBAL PROPERTY NESTCL_BENCHMARK_SOURCES)
  add_executable(nestcl_cli ${cli}/nestcl_main.c ${cli}/run_common.c ${cli}/json.c ${bench_sources})
  target_include_directories(nestcl_cli PRIVATE ${bench} ${cli} ${pm})
  target_link_libraries(nestcl_cli PRIVATE nestcl nestcl_models)
  if(NESTCL_WITH_MPI)
    target_link_libraries(nestcl_cli PRIVATE MPI::MPI_C)
  endif()
  # `nestcl perfmodel ...` and --gpu-fraction auto need the fitted model (GSL).
  if(TARGET nestcl_perfmodel)
    get_property(pm_sources GLOBAL PROPERTY NESTCL_PERFMODEL_CLI_SOURCES)
    get_property(bench_pm_sources GLOBAL PROPERTY NESTCL_BENCHMARK_PERFMODEL_SOURCES)
    target_sources(nestcl_cli PRIVATE ${pm_sources} ${bench_pm_sources})
    target_link_libraries(nestcl_cli PRIVATE nestcl_perfmodel)
    target_compile_definitions(nestcl_cli PRIVATE NESTCL_WITH_PERFMODEL=1)
  endif()
  execute_process(COMMAND git -C ${PROJECT_SOURCE_DIR} rev-parse --short=12 HEAD
    OUTPUT_VARIABLE _commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  target_compile_definitions(nestcl_cli PRIVATE NESTCL_GIT_COMMIT="${_commit}")
  set_target_properties(nestcl_cli PROPERTIES OUTPUT_NAME nestcl RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
  install(TARGETS nestcl_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL nestcl_add_driver)
