# netbuf_add_module(NAME <name> SOURCES <file>... [DEPENDS <target>...])
#
# Defines one module library of netbuf, the same way for every module:
#   - target netbuf_<name> (the library file's name too), alias netbuf::<name>, exported as
#     netbuf::<name> by cmake/NetbufInstall.cmake;
#   - SOURCES: the module's .cpp files, relative to the calling CMakeLists.txt. Keep them an
#     explicit list, one file per line, so that adding or removing a file is a one-line change;
#   - public headers: every *.hpp under <module>/include/, as the target's HEADERS file set. The
#     file set puts include/ on the include path of the build tree and installs the headers with
#     their relative paths (netbuf/<name>/...), so a header is public exactly when it lives there;
#   - DEPENDS: the PUBLIC link dependencies; netbuf modules point one way
#     (rpc -> transport -> codec -> buffer), so a module names only the modules below it;
#   - the warning flags (netbuf_warnings, build tree only: consumers of the installed package do
#     not inherit them) and, in fuzzing builds with clang, coverage instrumentation: libFuzzer
#     otherwise sees only the harness, not the parsers and kernels compiled into the libraries.
#     The sanitizer runtime provides the coverage callbacks for the build's other programs.
#
# The module is recorded in the global property NETBUF_MODULES, which the umbrella target and the
# install rules read, so a new module is one add_subdirectory() and one netbuf_add_module() call.
function(netbuf_add_module)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "NAME" "SOURCES;DEPENDS")
  if(NOT ARG_NAME OR NOT ARG_SOURCES)
    message(FATAL_ERROR "netbuf_add_module: NAME and SOURCES are required")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "netbuf_add_module(${ARG_NAME}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()

  set(target netbuf_${ARG_NAME})
  add_library(${target} ${ARG_SOURCES})
  add_library(netbuf::${ARG_NAME} ALIAS ${target})
  set_target_properties(${target} PROPERTIES
    EXPORT_NAME ${ARG_NAME}
    OUTPUT_NAME ${target}
    POSITION_INDEPENDENT_CODE ON)

  file(GLOB_RECURSE headers CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/include/*.hpp)
  target_sources(${target} PUBLIC
    FILE_SET HEADERS BASE_DIRS ${CMAKE_CURRENT_SOURCE_DIR}/include FILES ${headers})

  target_link_libraries(${target} PUBLIC ${ARG_DEPENDS} PRIVATE $<BUILD_INTERFACE:netbuf_warnings>)
  target_compile_features(${target} PUBLIC cxx_std_20)

  if(NETBUF_BUILD_FUZZERS AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  endif()

  set_property(GLOBAL APPEND PROPERTY NETBUF_MODULES ${target})
endfunction()
