# Install rules and the CMake package config, so another project can do
#   find_package(netbuf CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE netbuf::netbuf)     # or netbuf::buffer, ..., netbuf::http
# Every module (NETBUF_MODULES, recorded by netbuf_add_module) and the umbrella target are
# installed with their HEADERS file sets; the file sets also give the exported targets their
# include directory.
include(CMakePackageConfigHelpers)

get_property(netbuf_install_targets GLOBAL PROPERTY NETBUF_MODULES)
install(TARGETS ${netbuf_install_targets} netbuf EXPORT netbufTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT netbufTargets NAMESPACE netbuf:: FILE netbufTargets.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/netbuf)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/netbufConfig.cmake.in
  ${PROJECT_BINARY_DIR}/netbufConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/netbuf)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/netbufConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/netbufConfig.cmake ${PROJECT_BINARY_DIR}/netbufConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/netbuf)
