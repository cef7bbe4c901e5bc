# Read by cpack for each generator (CPACK_PROJECT_CONFIG_FILE): the .deb installs under /usr;
# the tarball keeps its paths relative to the folder it unpacks into.
if(CPACK_GENERATOR STREQUAL "DEB")
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
endif()
