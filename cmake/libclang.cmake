# Locates libclang's C API (clang-c/Index.h and libclang.so). Order:
#   1. NESTCL_LLVM_CONFIG, an llvm-config the user names;
#   2. the newest Debian LLVM directory (/usr/lib/llvm-N) that has libclang:
#      newer clangs parse more of NEST's C++20 (NEST's headers use implicit
#      typename, P0634, which clang accepts from 16 on);
#   3. whatever llvm-config is on PATH.
# Sets LIBCLANG_INCLUDE_DIR, LIBCLANG_LIBRARY and the target nestcl::libclang.
set(NESTCL_LLVM_CONFIG "" CACHE FILEPATH "llvm-config of the LLVM whose libclang nestcl-translate uses")
set(_libclang_dirs)
if(NESTCL_LLVM_CONFIG)
  execute_process(COMMAND ${NESTCL_LLVM_CONFIG} --prefix OUTPUT_VARIABLE _prefix OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "NESTCL_LLVM_CONFIG=${NESTCL_LLVM_CONFIG} does not run")
  endif()
  list(APPEND _libclang_dirs ${_prefix})
else()
  file(GLOB _debian_llvm_dirs LIST_DIRECTORIES true /usr/lib/llvm-*)
  list(SORT _debian_llvm_dirs COMPARE NATURAL ORDER DESCENDING)
  list(APPEND _libclang_dirs ${_debian_llvm_dirs})
  find_program(_llvm_config_on_path NAMES llvm-config)
  if(_llvm_config_on_path)
    execute_process(COMMAND ${_llvm_config_on_path} --prefix OUTPUT_VARIABLE _prefix OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(APPEND _libclang_dirs ${_prefix})
  endif()
endif()
if(NOT LIBCLANG_INCLUDE_DIR OR NOT LIBCLANG_LIBRARY)
  foreach(d IN LISTS _libclang_dirs)
    if(EXISTS ${d}/include/clang-c/Index.h)
      find_library(_libclang_lib NAMES clang libclang PATHS ${d}/lib NO_DEFAULT_PATH)
      if(_libclang_lib)
        set(LIBCLANG_INCLUDE_DIR ${d}/include CACHE PATH "clang-c headers" FORCE)
        set(LIBCLANG_LIBRARY ${_libclang_lib} CACHE FILEPATH "libclang" FORCE)
        break()
      endif()
      unset(_libclang_lib CACHE)
    endif()
  endforeach()
endif()
if(NOT LIBCLANG_INCLUDE_DIR OR NOT LIBCLANG_LIBRARY)
  message(FATAL_ERROR "libclang not found (install libclang-19-dev or libclang-dev, or set NESTCL_LLVM_CONFIG)")
endif()
message(STATUS "libclang: ${LIBCLANG_LIBRARY} (headers ${LIBCLANG_INCLUDE_DIR})")
add_library(nestcl::libclang UNKNOWN IMPORTED)
set_target_properties(nestcl::libclang PROPERTIES
  IMPORTED_LOCATION ${LIBCLANG_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${LIBCLANG_INCLUDE_DIR})
