# nest_patch: nestcl in NEST's build (included by nestkernel/CMakeLists.txt
# once nest_patch/apply has run). The manager is always compiled, so the
# patched NEST runs as unpatched NEST with nestcl_streams 0. With
# -Dwith-nestcl=<nestcl install prefix> (or ON to search the default paths)
# it finds the installed nestcl (find_package(nestcl)), translates NEST's
# models/ at configure time with nestcl-translate, and links both into
# nestkernel. That part runs at the end of the top-level CMakeLists.txt
# (deferred): config.h, which the models include, is configured only there,
# and the imported targets must be visible to every directory.
set( with-nestcl OFF CACHE STRING "Build with nestcl, for OpenCL stream VPs [default=OFF]. Give nestcl's install prefix, or ON." )
target_sources( nestkernel PRIVATE ${PROJECT_SOURCE_DIR}/nestkernel/nestcl/nestcl_manager.cpp
  ${PROJECT_SOURCE_DIR}/nestkernel/nestcl/nestcl_placement.cpp )
# NEST's installed vp_manager_impl.h includes it (external modules compile against it).
if ( NOT "${SKBUILD}" STREQUAL "" )
  set( nestcl_include_dir "nest/include" ) # as nestkernel/CMakeLists.txt sets it for wheels
else ()
  set( nestcl_include_dir "${CMAKE_INSTALL_INCLUDEDIR}" )
endif ()
install( FILES ${PROJECT_SOURCE_DIR}/nestkernel/nestcl/nestcl_placement.h
  DESTINATION ${nestcl_include_dir}/nest/nestcl )

function( nestcl_nest_configure )
  if ( NOT "${with-nestcl}" STREQUAL "ON" )
    list( PREPEND CMAKE_PREFIX_PATH "${with-nestcl}" )
  endif ()
  find_package( nestcl 0.1 REQUIRED )
  message( STATUS "nestcl: found ${nestcl_VERSION} in ${nestcl_DIR}" )
  # The models see what NEST compiles them with: its own folders and the
  # include directories its options added (MPI, GSL, Boost, OpenMP, ...).
  get_property( option_incs DIRECTORY ${PROJECT_SOURCE_DIR} PROPERTY INCLUDE_DIRECTORIES )
  set( incs
    ${PROJECT_SOURCE_DIR}/nestkernel ${PROJECT_SOURCE_DIR}/nestkernel/spatial
    ${PROJECT_SOURCE_DIR}/libnestutil ${PROJECT_BINARY_DIR}/libnestutil
    ${PROJECT_SOURCE_DIR}/models ${PROJECT_SOURCE_DIR}/thirdparty
    ${option_incs} ${MPI_CXX_HEADER_DIR} ${GSL_INCLUDE_DIRS} ${BOOST_INCLUDE_DIR} )
  nestcl_translate_models_now( TARGET nestcl_nest_models SOURCES_DIR ${PROJECT_SOURCE_DIR}/models
    OUTPUT_DIR ${PROJECT_BINARY_DIR}/nestkernel/nestcl_models INCLUDES ${incs} STD c++20 )
  target_link_libraries( nestkernel nestcl_nest_models nestcl::nestcl )
  target_include_directories( nestkernel PRIVATE ${PROJECT_BINARY_DIR}/nestkernel/nestcl_models )
  target_compile_definitions( nestkernel PRIVATE HAVE_NESTCL=1 )
  # nestcl_gpu_fraction "auto" reads the performance profiles (nestcl built with GSL).
  if ( TARGET nestcl::perfmodel )
    target_link_libraries( nestkernel nestcl::perfmodel )
    target_compile_definitions( nestkernel PRIVATE HAVE_NESTCL_PERFMODEL=1 )
    message( STATUS "nestcl: with the performance model (nestcl_gpu_fraction \"auto\" uses the device's profile)" )
  endif ()
endfunction()

if ( with-nestcl )
  cmake_language( DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL nestcl_nest_configure )
endif ()
