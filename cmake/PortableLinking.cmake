# PROFSH_PORTABLE: what the release bundle ships needs no shared library but glibc's, so that it
# runs unpacked on a machine without Debian's packages. The libraries found by the top-level
# CMakeLists (Lua, SQLite, zlib, elfutils and what elfutils needs: libbz2, liblzma) are swapped
# for their static archives (Debian's -dev packages ship them), and the shipped programs link
# the C++ runtime statically. Compiling is unchanged: only linking differs from a usual build.
# Included at the end of the top-level CMakeLists, once every target exists.

# The static archive of library NAME ("lua5.4" -> liblua5.4.a); glibc's own stay shared.
function(profsh_static_archive out name)
  if(name MATCHES "^(m|dl|pthread|rt|c)$")
    set(${out} ${name} PARENT_SCOPE)
    return()
  endif()
  find_library(PROFSH_STATIC_${name} NAMES lib${name}.a)
  if(NOT PROFSH_STATIC_${name})
    message(FATAL_ERROR "PROFSH_PORTABLE: no static lib${name}.a found (on Debian it comes with "
                        "the library's -dev package)")
  endif()
  set(${out} ${PROFSH_STATIC_${name}} PARENT_SCOPE)
endfunction()

# A pkg-config imported target linked from the archives `pkg-config --static` names.
function(profsh_link_pkg_statically prefix)
  set(archives "")
  foreach(name IN LISTS ${prefix}_STATIC_LIBRARIES)
    profsh_static_archive(archive ${name})
    list(APPEND archives ${archive})
  endforeach()
  set_property(TARGET PkgConfig::${prefix} PROPERTY INTERFACE_LINK_LIBRARIES
               "${archives};Threads::Threads")
endfunction()

profsh_link_pkg_statically(LUA)
profsh_link_pkg_statically(LIBDW)

profsh_static_archive(sqlite_archive sqlite3)
set_target_properties(SQLite::SQLite3 PROPERTIES IMPORTED_LOCATION ${sqlite_archive}
                      INTERFACE_LINK_LIBRARIES "m;dl;Threads::Threads")
# FindZLIB names a file per configuration, which would win over IMPORTED_LOCATION.
profsh_static_archive(zlib_archive z)
set_target_properties(ZLIB::ZLIB PROPERTIES IMPORTED_LOCATION ${zlib_archive}
                      IMPORTED_LOCATION_RELEASE ${zlib_archive}
                      IMPORTED_LOCATION_DEBUG ${zlib_archive})

# The programs the bundle ships (the collector libraries already carry their C++ runtime).
foreach(target profsh nvtx_pipeline itt_ranges)
  set_property(TARGET ${target} APPEND PROPERTY LINK_OPTIONS -static-libstdc++ -static-libgcc)
endforeach()
