# check_links.cmake: every relative link in README.md and docs/*.md names a
# file or folder of the repository.
#
#   cmake -DROOT=<repository root> -P check_links.cmake
#
# A link is Markdown's [text](target) or ![alt](target), outside fenced code
# blocks and inline code spans (code is not a link, and NEST's test names and
# C expressions in docs/nest-testsuite*.md hold brackets). Targets with a
# scheme (http:, https:, mailto:) and pure #anchors are not checked; a #anchor
# suffix is stripped, since only GitHub renders anchors and a moved file is
# what breaks a reader's path. The target resolves against the folder of the
# file that holds it and must stay inside ROOT: the design notes outside the
# repository (../shared) are not part of a checkout. Every broken link is
# listed, then the script fails.
cmake_minimum_required(VERSION 3.20)

if(NOT DEFINED ROOT OR NOT IS_DIRECTORY "${ROOT}")
  message(FATAL_ERROR "usage: cmake -DROOT=<repository root> -P check_links.cmake")
endif()
get_filename_component(ROOT "${ROOT}" REALPATH)

file(GLOB _docs "${ROOT}/docs/*.md")
list(SORT _docs)
set(_files "${ROOT}/README.md" ${_docs})

# CMake lists split on ';' except inside square brackets or after a
# backslash, so the text's ';', '[', ']' and '\' are swapped for control
# characters before a file is cut into a list of lines (a shell line ending in
# '\' would otherwise join the next); the link pattern matches the stand-ins.
string(ASCII 1 _SC)
string(ASCII 2 _LB)
string(ASCII 3 _RB)
string(ASCII 4 _BS)

set(_broken 0)
set(_checked 0)

# Checks one target written in FILE at line LINENO; counts and reports.
function(check_target file lineno target)
  # [text](<target> "title"): drop the angle brackets and the title.
  string(REGEX REPLACE "^<([^>]*)>.*$" "\\1" target "${target}")
  string(REGEX REPLACE "[ \t].*$" "" target "${target}")
  if(target STREQUAL "" OR target MATCHES "^#" OR target MATCHES "^(https?|mailto):")
    return()
  endif()
  string(REGEX REPLACE "#.*$" "" path "${target}")
  math(EXPR _n "${_checked} + 1")
  set(_checked ${_n} PARENT_SCOPE)
  get_filename_component(dir "${file}" DIRECTORY)
  if(path MATCHES "^/")
    set(abs "${ROOT}${path}")
  else()
    set(abs "${dir}/${path}")
  endif()
  get_filename_component(abs "${abs}" ABSOLUTE)
  file(RELATIVE_PATH where "${ROOT}" "${file}")
  set(inside TRUE)
  if(NOT abs STREQUAL ROOT)
    string(FIND "${abs}/" "${ROOT}/" pos)
    if(NOT pos EQUAL 0)
      set(inside FALSE)
    endif()
  endif()
  if(NOT inside)
    message("${where}:${lineno}: link outside the repository: ${target}")
  elseif(NOT EXISTS "${abs}")
    message("${where}:${lineno}: broken link: ${target}")
  else()
    return()
  endif()
  math(EXPR _b "${_broken} + 1")
  set(_broken ${_b} PARENT_SCOPE)
endfunction()

foreach(file IN LISTS _files)
  if(NOT EXISTS "${file}")
    message("missing: ${file}")
    math(EXPR _broken "${_broken} + 1")
    continue()
  endif()
  file(READ "${file}" text)
  string(REPLACE "\\" "${_BS}" text "${text}")
  string(REPLACE ";" "${_SC}" text "${text}")
  string(REPLACE "[" "${_LB}" text "${text}")
  string(REPLACE "]" "${_RB}" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(lineno 0)
  set(fence FALSE)
  foreach(line IN LISTS lines)
    math(EXPR lineno "${lineno} + 1")
    if(line MATCHES "^[ \t]*```")
      if(fence)
        set(fence FALSE)
      else()
        set(fence TRUE)
      endif()
      continue()
    endif()
    if(fence)
      continue()
    endif()
    string(REGEX REPLACE "`[^`]*`" "" line "${line}")
    string(REGEX MATCHALL "${_RB}\\([^)]*\\)" links "${line}")
    foreach(link IN LISTS links)
      string(REGEX REPLACE "^${_RB}\\(([^)]*)\\)$" "\\1" target "${link}")
      string(REPLACE "${_SC}" ";" target "${target}")
      string(REPLACE "${_LB}" "[" target "${target}")
      string(REPLACE "${_RB}" "]" target "${target}")
      string(REPLACE "${_BS}" "\\" target "${target}")
      check_target("${file}" ${lineno} "${target}")
    endforeach()
  endforeach()
endforeach()

list(LENGTH _files _nfiles)
if(_broken GREATER 0)
  message(FATAL_ERROR "${_broken} broken link(s) among ${_checked} relative links in ${_nfiles} files")
endif()
message("docs links: ${_checked} relative links in ${_nfiles} files, all resolve")
