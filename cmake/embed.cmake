# nestcl_embed(OUT_C VAR FILES...): at build time, writes a C file that defines
#   const char VAR[] = "<contents of FILES, concatenated>";
# so OpenCL sources travel inside the binaries and nothing is read from the
# source tree at run time.
set(NESTCL_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_file.cmake)
function(nestcl_embed out_c var)
  add_custom_command(OUTPUT ${out_c}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out_c} -DVAR=${var} "-DFILES=${ARGN}" -P ${NESTCL_EMBED_SCRIPT}
    DEPENDS ${ARGN} ${NESTCL_EMBED_SCRIPT}
    COMMENT "Embedding ${var}" VERBATIM)
endfunction()
