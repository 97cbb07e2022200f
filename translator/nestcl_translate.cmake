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
  set(synapses)
  foreach(h IN LISTS headers)
    file(STRINGS ${h} lines REGEX "^[ \t]*class[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*(final[ \t]*)?:[ \t]*public[ \t]+")
    foreach(line IN LISTS lines)
      if(line MATCHES "class[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*(final[ \t]*)?:[ \t]*public[ \t]+(nest::)?([A-Za-z_]*ArchivingNode|Node|StructuralPlasticityNode)([ \t<{,]|$)")
        list(APPEND models ${CMAKE_MATCH_1})
      elseif(line MATCHES "class[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*(final[ \t]*)?:[ \t]*public[ \t]+(nest::)?Connection[ \t]*<")
        list(APPEND synapses ${CMAKE_MATCH_1})
      endif()
    endforeach()
  endforeach()
  if(NOT models)
    message(FATAL_ERROR "nestcl_translate_models: no model class found in ${src_dir}")
  endif()

  set(outputs ${gen}/nestcl_models.c ${gen}/nestcl_glue_table.hpp ${gen}/nestcl_syn_glue_table.hpp)
  set(c_sources ${gen}/nestcl_models.c)
  foreach(m IN LISTS models)
    list(APPEND outputs ${gen}/${m}.cl ${gen}/${m}_cpu.c ${gen}/${m}_desc.c ${gen}/${m}_glue.hpp)
    list(APPEND c_sources ${gen}/${m}_cpu.c ${gen}/${m}_desc.c)
  endforeach()
  # Synapse models (a class template 'class <name> : public Connection< T >'): send() for the delivery.
  foreach(m IN LISTS synapses)
    list(APPEND outputs ${gen}/${m}_syn.cl ${gen}/${m}_syn.c ${gen}/${m}_syn_glue.hpp)
    list(APPEND c_sources ${gen}/${m}_syn.c)
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
    COMMAND ${CMAKE_COMMAND} -DREPORT=${gen}/report.json "-DEXPECTED=${models};${synapses}"
            -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/check_models.cmake
    DEPENDS ${translator_dep} ${headers} ${sources} ${include_deps} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/check_models.cmake
    COMMENT "Translating models in ${src_dir} (${models} ${synapses})"
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
  set(${NTM_TARGET}_SYNAPSES ${synapses} PARENT_SCOPE)
endfunction()

# nestcl_translate_models_now(TARGET <lib> SOURCES_DIR <dir> OUTPUT_DIR <dir>
#                             [INCLUDES <dirs...>] [DEFINES <macros...>] [STD <c++std>] [LINK <nestcl library>])
#
# For a tree of models of which only some translate, such as NEST's own
# models/: runs nestcl-translate now, at configure time, so that the set of
# translated models is known when the build is generated. The models that
# translate go into the STATIC library <lib> (PIC, generated C loops,
# descriptors and registry, with OUTPUT_DIR as its public include directory for
# the glue headers and nestcl_glue_table.hpp); the others stay CPU-only and are
# listed with the reason. A failure never stops the configuration: at worst
# nothing translates. Editing a model or the translator re-runs it (configure
# dependencies). Sets <lib>_MODELS and <lib>_CPU_ONLY ("model: reason") in the
# caller's scope.
function(nestcl_translate_models_now)
  cmake_parse_arguments(NTN "" "TARGET;SOURCES_DIR;OUTPUT_DIR;STD;LINK" "INCLUDES;DEFINES" ${ARGN})
  if(NOT NTN_TARGET OR NOT NTN_SOURCES_DIR OR NOT NTN_OUTPUT_DIR)
    message(FATAL_ERROR "nestcl_translate_models_now: TARGET, SOURCES_DIR and OUTPUT_DIR are required")
  endif()
  if(NOT NTN_STD)
    set(NTN_STD c++17)
  endif()
  if(NOT NTN_LINK)
    set(NTN_LINK nestcl::nestcl)
  endif()
  get_target_property(translator nestcl::translate LOCATION)
  get_filename_component(src_dir ${NTN_SOURCES_DIR} ABSOLUTE)
  set(out ${NTN_OUTPUT_DIR})
  set(args)
  foreach(d IN LISTS NTN_INCLUDES)
    if(d)
      list(APPEND args -I ${d})
    endif()
  endforeach()
  foreach(d IN LISTS NTN_DEFINES)
    list(APPEND args -D ${d})
  endforeach()
  file(GLOB inputs ${src_dir}/*.h ${src_dir}/*.cpp)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${inputs} ${translator})
  file(MAKE_DIRECTORY ${out})
  message(STATUS "nestcl: translating the models in ${src_dir} (nestcl-translate ${translator})")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env
            "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_FUNCTION_LIST_DIR}/lsan.supp:print_suppressions=0"
            ${translator} ${src_dir} -o ${out} ${args} -std=${NTN_STD} --report json --report-file ${out}/report.json
    RESULT_VARIABLE rc ERROR_VARIABLE diagnostics OUTPUT_QUIET)
  file(WRITE ${out}/diagnostics.txt "${diagnostics}")
  set(translated)
  set(translated_synapses)
  set(cpu_only)
  set(ok 0)
  if((rc EQUAL 0 OR rc EQUAL 3) AND EXISTS ${out}/report.json)
    set(ok 1)
    file(READ ${out}/report.json report)
    string(JSON n LENGTH "${report}" models)
    if(n GREATER 0)
      math(EXPR last "${n} - 1")
      foreach(k RANGE ${last})
        string(JSON name GET "${report}" models ${k} name)
        string(JSON status GET "${report}" models ${k} status)
        string(JSON kind GET "${report}" models ${k} kind)
        if(status STREQUAL "translated" AND kind STREQUAL "synapse")
          list(APPEND translated_synapses ${name})
        elseif(status STREQUAL "translated")
          list(APPEND translated ${name})
        else()
          set(reason "")
          string(JSON nd LENGTH "${report}" models ${k} diagnostics)
          if(nd GREATER 0)
            string(JSON d GET "${report}" models ${k} diagnostics 0)
            # the message and where: "<message> (<file>:<line>:<col>)"
            if(d MATCHES "([^/\n]*:[0-9]+:[0-9]+): error: ([^\n]*)")
              set(reason "${CMAKE_MATCH_2} (${CMAKE_MATCH_1})")
            elseif(d MATCHES "error: ([^\n]*)")
              set(reason "${CMAKE_MATCH_1}")
            endif()
          endif()
          string(REPLACE ";" "," reason "${reason}")
          list(APPEND cpu_only "${name}: ${reason}")
        endif()
      endforeach()
    endif()
  else()
    message(WARNING "nestcl: nestcl-translate failed (exit ${rc}); every model stays on the CPU. "
                    "Its messages are in ${out}/diagnostics.txt")
  endif()
  set(sources ${out}/nestcl_models.c)
  if(NOT ok)
    # Nothing translated at all: the translator's empty registry and table, from an empty folder.
    file(MAKE_DIRECTORY ${out}/empty)
    execute_process(COMMAND ${translator} ${out}/empty -o ${out} OUTPUT_QUIET ERROR_QUIET)
    set(translated)
    set(translated_synapses)
  endif()
  foreach(m IN LISTS translated)
    list(APPEND sources ${out}/${m}_cpu.c ${out}/${m}_desc.c)
  endforeach()
  foreach(m IN LISTS translated_synapses)
    list(APPEND sources ${out}/${m}_syn.c)
  endforeach()
  add_library(${NTN_TARGET} STATIC ${sources})
  set_target_properties(${NTN_TARGET} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_compile_options(${NTN_TARGET} PRIVATE -ffp-contract=off)
  target_include_directories(${NTN_TARGET} PUBLIC ${out})
  target_link_libraries(${NTN_TARGET} PUBLIC ${NTN_LINK} nestcl::kernels)
  list(LENGTH translated nt)
  list(LENGTH cpu_only nc)
  string(REPLACE ";" ", " tlist "${translated}")
  message(STATUS "nestcl: ${nt} models translate for the device: ${tlist}")
  string(REPLACE ";" ", " slist "${translated_synapses}")
  message(STATUS "nestcl: synapse models whose send() translates: ${slist}")
  message(STATUS "nestcl: ${nc} stay on the CPU (details in ${out}/report.json):")
  foreach(c IN LISTS cpu_only)
    message(STATUS "  ${c}")
  endforeach()
  set(${NTN_TARGET}_MODELS ${translated} PARENT_SCOPE)
  set(${NTN_TARGET}_SYNAPSES ${translated_synapses} PARENT_SCOPE)
  set(${NTN_TARGET}_CPU_ONLY ${cpu_only} PARENT_SCOPE)
endfunction()
