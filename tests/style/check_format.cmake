# Checks that the project's own C and C++ follow its .clang-format files
# (cmake -P): -DCLANG_FORMAT=<clang-format 14> -DSOURCE_DIR=<repository root>.
# Lists every file that clang-format would change and fails; `clang-format -i`
# on those files fixes them. models/ and the translator's test inputs carry
# DisableFormat (they are translator inputs, kept as written).
foreach(v CLANG_FORMAT SOURCE_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_format.cmake: -D${v}=... is required")
  endif()
endforeach()
set(globs)
foreach(dir host translator perfmodel benchmarks kernels_templates fuzz nest_patch tests)
  foreach(ext c h cpp hpp cl)
    list(APPEND globs ${SOURCE_DIR}/${dir}/*.${ext})
  endforeach()
endforeach()
file(GLOB_RECURSE files ${globs})
set(bad)
set(n 0)
foreach(f IN LISTS files)
  math(EXPR n "${n} + 1")
  execute_process(COMMAND ${CLANG_FORMAT} --dry-run -Werror ${f}
    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 0)
    file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
    list(APPEND bad ${rel})
  endif()
endforeach()
if(bad)
  list(LENGTH bad nbad)
  string(REPLACE ";" "\n  " lines "${bad}")
  message(FATAL_ERROR "${nbad} of ${n} files do not follow .clang-format (run clang-format -i on them):\n  ${lines}")
endif()
message(STATUS "all ${n} files follow .clang-format")
