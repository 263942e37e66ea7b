# Install rules and the CMake package config, so another project can do
#   find_package(netbuf CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE netbuf::netbuf)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS netbuf_buffer netbuf_codec netbuf_transport netbuf EXPORT netbufTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/buffer/include/ ${PROJECT_SOURCE_DIR}/codec/include/
  ${PROJECT_SOURCE_DIR}/transport/include/
  ${PROJECT_SOURCE_DIR}/include/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT netbufTargets NAMESPACE netbuf:: FILE netbufTargets.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/netbuf)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/netbufConfig.cmake.in
  ${PROJECT_BINARY_DIR}/netbufConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/netbuf)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/netbufConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/netbufConfig.cmake ${PROJECT_BINARY_DIR}/netbufConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/netbuf)
