# Device layer of libnestcl (device discovery, program cache, accounted
# buffers, error messages) and the nestcl-info tool. Included from
# host/CMakeLists.txt.
target_sources(nestcl_objects PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/src/error.c
  ${CMAKE_CURRENT_LIST_DIR}/src/hash.c
  ${CMAKE_CURRENT_LIST_DIR}/src/device.c
  ${CMAKE_CURRENT_LIST_DIR}/src/program_cache.c
  ${CMAKE_CURRENT_LIST_DIR}/src/buffer.c
  ${CMAKE_CURRENT_LIST_DIR}/src/specialise.c
  ${CMAKE_CURRENT_LIST_DIR}/src/update_fill.c
  ${CMAKE_CURRENT_LIST_DIR}/src/poisson_cdf.c
  ${CMAKE_CURRENT_LIST_DIR}/src/model_failure.c
  ${CMAKE_CURRENT_LIST_DIR}/src/block.c
  ${CMAKE_CURRENT_LIST_DIR}/src/block_host.c
  ${CMAKE_CURRENT_LIST_DIR}/src/block_events.c
  ${CMAKE_CURRENT_LIST_DIR}/src/block_set.c
  ${CMAKE_CURRENT_LIST_DIR}/src/block_set_source.c
  ${CMAKE_CURRENT_LIST_DIR}/src/block_loop.c
  ${CMAKE_CURRENT_LIST_DIR}/src/plastic_dev.c
  ${CMAKE_CURRENT_LIST_DIR}/src/kprof.c)

add_executable(nestcl-info ${CMAKE_CURRENT_LIST_DIR}/tools/nestcl_info.c)
target_link_libraries(nestcl-info PRIVATE nestcl)
set_target_properties(nestcl-info PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
install(TARGETS nestcl-info RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
