# What `cmake --install` adds beyond the targets' own install() rules: the
# CMake package (nestclConfig.cmake, nestclConfigVersion.cmake and the
# exported targets nestcl::nestcl, nestcl::nestcl_static, nestcl::models,
# nestcl::models_static, nestcl::kernels, nestcl::translate), the pkg-config
# file nestcl.pc, and the CPack settings of the Debian package.
include(CMakePackageConfigHelpers)

install(EXPORT nestclTargets NAMESPACE nestcl:: DESTINATION ${NESTCL_INSTALL_CMAKEDIR} COMPONENT dev)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/nestclConfig.cmake.in
  ${PROJECT_BINARY_DIR}/nestclConfig.cmake INSTALL_DESTINATION ${NESTCL_INSTALL_CMAKEDIR})
# 0.x: a minor release may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/nestclConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/nestclConfig.cmake ${PROJECT_BINARY_DIR}/nestclConfigVersion.cmake
  DESTINATION ${NESTCL_INSTALL_CMAKEDIR} COMPONENT dev)

# pkg-config: the prefix is found from the .pc file's own place, so the tree
# can be installed anywhere (cmake --install --prefix P, or the package's /usr).
set(NESTCL_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH NESTCL_PC_TO_PREFIX /prefix/${NESTCL_PC_DIR} /prefix)
string(REGEX REPLACE "/$" "" NESTCL_PC_TO_PREFIX "${NESTCL_PC_TO_PREFIX}")
set(NESTCL_PC_LIBS_PRIVATE "-lgomp -lpthread -lm")
if(NESTCL_WITH_MPI)
  string(PREPEND NESTCL_PC_LIBS_PRIVATE "-lmpi ")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/nestcl.pc.in ${PROJECT_BINARY_DIR}/nestcl.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/nestcl.pc DESTINATION ${NESTCL_PC_DIR} COMPONENT dev)

# Debian package: cpack -G DEB in the build tree. Its dependencies are computed
# from the ELF files (dpkg-shlibdeps), so they are exactly the Debian packages
# of the libraries the binaries load (the OpenCL ICD loader, libgomp, Open MPI,
# libclang); an OpenCL driver is recommended, the headers for building against
# nestcl suggested.
set(CPACK_PACKAGE_NAME nestcl)
set(CPACK_PACKAGE_VENDOR "nestcl")
set(CPACK_PACKAGE_CONTACT "nestcl developers <nestcl@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "NEST neuron models on OpenCL devices: runtime, translator and tools")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "pocl-opencl-icd | opencl-icd")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "gnuplot-nox, ocl-icd-opencl-dev, opencl-c-headers, libopenmpi-dev, cmake, pkg-config")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "nestcl runs NEST neuron models on GPUs and other OpenCL devices.
 It contains libnestcl (shared and static), the translated model library,
 the tools nestcl, nestcl-info and nestcl-translate, the C headers, and the
 CMake and pkg-config files for building against it.")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES OFF)
include(CPack)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
