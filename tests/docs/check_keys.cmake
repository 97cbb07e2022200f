# check_keys.cmake: docs/using-with-nest.md's table of kernel keys and
# nest_patch's one table of them (nestcl_keys.def) name the same keys.
#
#   cmake -DROOT=<repository root> -P check_keys.cmake
#
# A key of the table is the first argument of a NESTCL_KEY( ... ) line; a key
# of the document is each `nestcl_...` in the first cell of a row of its table
# (a row may name several keys). Every key missing on either side is listed,
# then the script fails.
cmake_minimum_required(VERSION 3.20)

if(NOT DEFINED ROOT OR NOT IS_DIRECTORY "${ROOT}")
  message(FATAL_ERROR "usage: cmake -DROOT=<repository root> -P check_keys.cmake")
endif()

file(STRINGS "${ROOT}/nest_patch/nest/nestkernel/nestcl/nestcl_keys.def" _def REGEX "^NESTCL_KEY\\( *nestcl_[a-z_]+,")
set(_table "")
foreach(_line IN LISTS _def)
  string(REGEX REPLACE "^NESTCL_KEY\\( *(nestcl_[a-z_]+),.*" "\\1" _key "${_line}")
  list(APPEND _table "${_key}")
endforeach()

file(STRINGS "${ROOT}/docs/using-with-nest.md" _rows REGEX "^\\| `nestcl_")
set(_doc "")
foreach(_row IN LISTS _rows)
  string(REGEX REPLACE "^\\| ([^|]*)\\|.*" "\\1" _cell "${_row}")
  string(REGEX MATCHALL "`nestcl_[a-z_]+`" _keys "${_cell}")
  foreach(_k IN LISTS _keys)
    string(REPLACE "`" "" _k "${_k}")
    list(APPEND _doc "${_k}")
  endforeach()
endforeach()

set(_bad 0)
foreach(_k IN LISTS _table)
  if(NOT _k IN_LIST _doc)
    message("docs/using-with-nest.md: no row for ${_k} (nestcl_keys.def has it)")
    math(EXPR _bad "${_bad} + 1")
  endif()
endforeach()
foreach(_k IN LISTS _doc)
  if(NOT _k IN_LIST _table)
    message("docs/using-with-nest.md: ${_k} is not a key of nestcl_keys.def")
    math(EXPR _bad "${_bad} + 1")
  endif()
endforeach()
list(LENGTH _table _n)
if(_bad GREATER 0 OR _n EQUAL 0)
  message(FATAL_ERROR "${_bad} kernel keys differ between nestcl_keys.def (${_n} keys) and docs/using-with-nest.md")
endif()
message("${_n} kernel keys: each in nestcl_keys.def and in docs/using-with-nest.md's table")
