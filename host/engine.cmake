# The engine of libnestcl (issue 4): populations, CSR connectivity, the super
# step cycle over CPU threads (OpenMP) and OpenCL streams, MPI spike exchange.
# (The `nestcl` driver: host/cli/cli.cmake.) Included from host/CMakeLists.txt.
set(NESTCL_CORE_DIR ${PROJECT_SOURCE_DIR}/kernels_templates/core)
# The hand-written kernels travel inside the library: nestcl_core.h (shared with
# the C twins) followed by engine_kernels.cl; nestcl_rt_source is prepended at
# run time (compiled into libnestcl from the embedded text, see
# kernels_templates/CMakeLists.txt).
nestcl_embed(${CMAKE_CURRENT_BINARY_DIR}/engine_kernels_source.c nestcl_engine_kernels_source
  ${NESTCL_CORE_DIR}/nestcl_core.h ${NESTCL_CORE_DIR}/engine_kernels.cl)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/engine_kernels_source.h.in
  "/* Generated: the engine's OpenCL kernels as text (engine.cmake). */\nextern const char nestcl_engine_kernels_source[];\n")
configure_file(${CMAKE_CURRENT_BINARY_DIR}/engine_kernels_source.h.in
  ${CMAKE_CURRENT_BINARY_DIR}/engine_kernels_source.h COPYONLY)
# The delivery through a translated synapse model: nestcl_core.h and the
# template kernel, behind a prelude naming the model and its <model>_syn.cl
# (assembled at run time, host/src/engine/plastic.c).
nestcl_embed(${CMAKE_CURRENT_BINARY_DIR}/plastic_kernels_source.c nestcl_plastic_kernels_source
  ${NESTCL_CORE_DIR}/nestcl_core.h ${NESTCL_CORE_DIR}/plastic_kernels.cl)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/plastic_kernels_source.h.in
  "/* Generated: the plastic delivery kernel as text (engine.cmake). */\nextern const char nestcl_plastic_kernels_source[];\n")
configure_file(${CMAKE_CURRENT_BINARY_DIR}/plastic_kernels_source.h.in
  ${CMAKE_CURRENT_BINARY_DIR}/plastic_kernels_source.h COPYONLY)

# The synapses drawn on the device (connect_device.c): nestcl_core.h's constants, the draws of
# nestcl_connect.h (shared with the host's build, connect.c) and the kernels.
nestcl_embed(${CMAKE_CURRENT_BINARY_DIR}/connect_kernels_source.c nestcl_connect_kernels_source
  ${NESTCL_CORE_DIR}/nestcl_core.h ${NESTCL_CORE_DIR}/nestcl_connect.h ${NESTCL_CORE_DIR}/connect_kernels.cl)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/connect_kernels_source.h.in
  "/* Generated: the build's kernels as text (engine.cmake). */\nextern const char nestcl_connect_kernels_source[];\n")
configure_file(${CMAKE_CURRENT_BINARY_DIR}/connect_kernels_source.h.in
  ${CMAKE_CURRENT_BINARY_DIR}/connect_kernels_source.h COPYONLY)

get_property(_nestcl_rt_headers GLOBAL PROPERTY NESTCL_RT_HEADERS)
nestcl_embed(${CMAKE_CURRENT_BINARY_DIR}/nestcl_rt_source.c nestcl_rt_source ${_nestcl_rt_headers})
target_sources(nestcl_objects PRIVATE
  ${CMAKE_CURRENT_BINARY_DIR}/nestcl_rt_source.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/api.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/clock.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/value.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/mpi.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/vp.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/partition.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/build.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/connect.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/connect_device.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/stream_upload.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/estimate.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/cycle.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/device_loop/resident.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/device_loop/resident_run.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/device_loop/resident_merge.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/device_loop/resident_update.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/device_loop/resident_step.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/device_loop/resident_graph.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/device_loop/resident_plastic.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/device_loop/resident_persist.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/core_cpu.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/plastic.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/plastic_cpu.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/record.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/kernel_profile.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/psp.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/checkpoint.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/checkpoint_write.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/checkpoint_read.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/checkpoint_restore.c
  ${CMAKE_CURRENT_LIST_DIR}/src/engine/synapse_check.c
  ${CMAKE_CURRENT_BINARY_DIR}/engine_kernels_source.c
  ${CMAKE_CURRENT_BINARY_DIR}/plastic_kernels_source.c
  ${CMAKE_CURRENT_BINARY_DIR}/connect_kernels_source.c)
target_include_directories(nestcl_objects PRIVATE
  ${CMAKE_CURRENT_BINARY_DIR}
  ${PROJECT_SOURCE_DIR}/kernels_templates)
if(NESTCL_WITH_MPI)
  target_link_libraries(nestcl_objects PRIVATE MPI::MPI_C)
  target_compile_definitions(nestcl_objects PRIVATE NESTCL_WITH_MPI=1)
endif()
