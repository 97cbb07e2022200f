# nestcl_translate_models(TARGET <lib> SOURCES_DIR <dir> INCLUDES <dirs...>
#                         [STD <c++std>] [LINK <nestcl library>]
#                         [SHARED <shared lib> [SHARED_LINK <nestcl library>]])
#
# Runs nestcl-translate over every model in SOURCES_DIR at build time, into
# ${CMAKE_CURRENT_BINARY_DIR}/gen, and builds the STATIC C library <lib> from the
# generated C loops, descriptors and registry (nestcl_builtin_models), and with
# SHARED also a shared library of the same objects. The generated directory is
# a public include directory of <lib> (for the <model>_glue.hpp headers). The
# static library links LINK (default nestcl::nestcl, the shared libnestcl), the
# shared one SHARED_LINK (default LINK).
#
# The same file serves this tree and an installed nestcl (find_package(nestcl)
# includes it): it names nestcl only through nestcl::translate,
# nestcl::kernels and LINK.
#
# The model list is known at configure time: a header declares a model when a
# line reads "class <name> : public <Node base>" with a base the translator
# also accepts (Node, StructuralPlasticityNode, ...ArchivingNode), so the
# custom command can name every file it produces. Any model the translator
# cannot translate makes it exit non-zero, which fails the build with its
# diagnostics on the console.

function(nestcl_translate_models)
  cmake_parse_arguments(NTM "" "TARGET;SOURCES_DIR;STD;LINK;SHARED;SHARED_LINK" "INCLUDES" ${ARGN})
  if(NOT NTM_TARGET OR NOT NTM_SOURCES_DIR)
    message(FATAL_ERROR "nestcl_translate_models: TARGET and SOURCES_DIR are required")
  endif()
  if(NOT NTM_STD)
    set(NTM_STD c++17)
  endif()
  if(NOT NTM_LINK)
    set(NTM_LINK nestcl::nestcl)
  endif()
  if(NOT NTM_SHARED_LINK)
    set(NTM_SHARED_LINK ${NTM_LINK})
  endif()
  # A target of this build gets a target-level dependency; an installed one a file-level one.
  if(TARGET nestcl-translate)
    set(translator_dep nestcl-translate)
  else()
    set(translator_dep $<TARGET_FILE:nestcl::translate>)
  endif()
  get_filename_component(src_dir ${NTM_SOURCES_DIR} ABSOLUTE)
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/gen)

  file(GLOB headers CONFIGURE_DEPENDS ${src_dir}/*.h)
  file(GLOB sources CONFIGURE_DEPENDS ${src_dir}/*.cpp)
  list(SORT headers)
  set(models)
  foreach(h IN LISTS headers)
    file(STRINGS ${h} lines REGEX "^[ \t]*class[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*(final[ \t]*)?:[ \t]*public[ \t]+")
    foreach(line IN LISTS lines)
      if(line MATCHES "class[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*(final[ \t]*)?:[ \t]*public[ \t]+(nest::)?([A-Za-z_]*ArchivingNode|Node|StructuralPlasticityNode)([ \t<{,]|$)")
        list(APPEND models ${CMAKE_MATCH_1})
      endif()
    endforeach()
  endforeach()
  if(NOT models)
    message(FATAL_ERROR "nestcl_translate_models: no model class found in ${src_dir}")
  endif()

  set(outputs ${gen}/nestcl_models.c ${gen}/nestcl_glue_table.hpp)
  set(c_sources ${gen}/nestcl_models.c)
  foreach(m IN LISTS models)
    list(APPEND outputs ${gen}/${m}.cl ${gen}/${m}_cpu.c ${gen}/${m}_desc.c ${gen}/${m}_glue.hpp)
    list(APPEND c_sources ${gen}/${m}_cpu.c ${gen}/${m}_desc.c)
  endforeach()

  set(include_args)
  set(include_deps)
  foreach(d IN LISTS NTM_INCLUDES)
    get_filename_component(ad ${d} ABSOLUTE)
    list(APPEND include_args -I ${ad})
    file(GLOB hs CONFIGURE_DEPENDS ${ad}/*.h)
    list(APPEND include_deps ${hs})
  endforeach()

  add_custom_command(OUTPUT ${outputs}
    # In a sanitizer build, LeakSanitizer would fail the build on libLLVM's
    # caches, which live until exit; the translator's own leaks stay reported.
    COMMAND ${CMAKE_COMMAND} -E env
            "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_FUNCTION_LIST_DIR}/lsan.supp:print_suppressions=0"
            $<TARGET_FILE:nestcl::translate> ${src_dir} -o ${gen} ${include_args} -std=${NTM_STD}
            --report json --report-file ${gen}/report.json
    COMMAND ${CMAKE_COMMAND} -DREPORT=${gen}/report.json "-DEXPECTED=${models}"
            -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/check_models.cmake
    DEPENDS ${translator_dep} ${headers} ${sources} ${include_deps} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/check_models.cmake
    COMMENT "Translating models in ${src_dir} (${models})"
    VERBATIM)
  add_custom_target(${NTM_TARGET}_translate DEPENDS ${outputs})

  add_library(${NTM_TARGET}_objects OBJECT ${c_sources})
  add_dependencies(${NTM_TARGET}_objects ${NTM_TARGET}_translate)
  set_target_properties(${NTM_TARGET}_objects PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_link_libraries(${NTM_TARGET}_objects PRIVATE ${NTM_LINK} nestcl::kernels)
  add_library(${NTM_TARGET} STATIC $<TARGET_OBJECTS:${NTM_TARGET}_objects>)
  target_link_libraries(${NTM_TARGET} PUBLIC ${NTM_LINK})
  set(libs ${NTM_TARGET})
  if(NTM_SHARED)
    add_library(${NTM_SHARED} SHARED $<TARGET_OBJECTS:${NTM_TARGET}_objects>)
    target_link_libraries(${NTM_SHARED} PUBLIC ${NTM_SHARED_LINK})
    list(APPEND libs ${NTM_SHARED})
  endif()
  foreach(l IN LISTS libs)
    target_include_directories(${l} PUBLIC $<BUILD_INTERFACE:${gen}>)
    target_link_libraries(${l} PUBLIC nestcl::kernels PRIVATE m)
  endforeach()
  set(${NTM_TARGET}_MODELS ${models} PARENT_SCOPE)
endfunction()
