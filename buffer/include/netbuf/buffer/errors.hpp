#pragma once
// netbuf's error hierarchy, as far as buffer/ defines it: every error netbuf throws derives from
// netbuf::Error (error.hpp), so a handler can catch one type. Each type has a header of its own,
// named after it; this one includes them all. (The pool's misuse errors are in
// pool_misuse_error.hpp, the codecs' in netbuf/codec/codec_errors.hpp.)

#include <netbuf/buffer/empty_buffer_error.hpp>
#include <netbuf/buffer/error.hpp>
#include <netbuf/buffer/illegal_argument_error.hpp>
#include <netbuf/buffer/illegal_state_error.hpp>
#include <netbuf/buffer/index_out_of_bounds_error.hpp>
#include <netbuf/buffer/read_only_buffer_error.hpp>
#include <netbuf/buffer/utf8_error.hpp>
