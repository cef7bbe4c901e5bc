# CPack: the release bundle (TGZ, `./build.sh dist`) and the .deb (`./build.sh deb`), both of
# cmake/Install.cmake's layout; packages land in dist/.
set(CPACK_PACKAGE_NAME profsh)
set(CPACK_PACKAGE_VENDOR profsh)
set(CPACK_PACKAGE_CONTACT "profsh maintainers <profsh@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "A profiling shell for PyTorch and CUDA workloads: records, reads and reports traces")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_FILE_NAME ${PROFSH_BUNDLE_NAME})
set(CPACK_OUTPUT_FILE_PREFIX ${PROJECT_SOURCE_DIR}/dist)
set(CPACK_GENERATOR TGZ)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_RESOURCE_FILE_README ${PROJECT_SOURCE_DIR}/README.md)
# The bundle unpacks into one folder named like the tarball; the .deb installs under /usr.
set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# dpkg-shlibdeps writes Depends from what the binaries link: libc6 alone for a PROFSH_PORTABLE
# build, Debian's Lua, SQLite and elfutils packages for a usual one.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# `profsh job map --dask` runs its driver with Debian's Python and Dask (python3-distributed).
set(CPACK_DEBIAN_PACKAGE_SUGGESTS python3-distributed)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_LIST_DIR}/PackagingPerGenerator.cmake)
# Packaging installs the shipped programs only: it needs no whole build (tests, benchmarks).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
include(CPack)
