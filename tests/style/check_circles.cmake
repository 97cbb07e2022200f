# Runs nestcl_circles over the object files of the project's own programs and
# libraries (cmake -P): -DCIRCLES=<nestcl_circles> -DBUILD_DIR=<top build dir>
# -DEXCEPTIONS=<circles.txt> -DTARGETS=<target names separated by |>.
# Fails when a target's objects are missing (build it first).
foreach(v CIRCLES BUILD_DIR EXCEPTIONS TARGETS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_circles.cmake: -D${v}=... is required")
  endif()
endforeach()
string(REPLACE "|" ";" targets "${TARGETS}")
set(all)
foreach(t IN LISTS targets)
  file(GLOB_RECURSE objs ${BUILD_DIR}/*/CMakeFiles/${t}.dir/*.o ${BUILD_DIR}/CMakeFiles/${t}.dir/*.o)
  if(NOT objs)
    message(FATAL_ERROR "no object files of ${t} under ${BUILD_DIR}: build it first")
  endif()
  list(APPEND all ${objs})
endforeach()
execute_process(COMMAND ${CIRCLES} --exceptions ${EXCEPTIONS} ${all}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "source files depend on each other in a circle (see above)")
endif()
