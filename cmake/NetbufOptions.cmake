# Compiler flags shared by every netbuf target. Applied through an interface target so that
# consumers of the installed package do not inherit them.
add_library(netbuf_warnings INTERFACE)
target_compile_options(netbuf_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow
  -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough)
if(NETBUF_WERROR)
  target_compile_options(netbuf_warnings INTERFACE -Werror)
endif()

if(NETBUF_SANITIZE)
  add_compile_options(-fsanitize=${NETBUF_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${NETBUF_SANITIZE})
  # UBSan's function check (-fsanitize=function, part of `undefined` in clang) makes clang 14 fail
  # on C++20 coroutines ("Cannot represent a difference across sections"); the rest of UBSan
  # stays on.
  if(NETBUF_SANITIZE MATCHES "undefined" AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    add_compile_options(-fno-sanitize=function)
  endif()
endif()

# Helper: a doctest program registered with CTest. Labels let scripts/test select the threaded tests
# for the tsan preset.
function(netbuf_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE netbuf_test_main ${ARG_LIBS} netbuf_warnings)
  add_test(NAME ${name} COMMAND ${name})
  if(ARG_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}")
  endif()
endfunction()
