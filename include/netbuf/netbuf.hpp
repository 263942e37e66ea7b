#pragma once
// Umbrella header: everything netbuf offers.
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/buffer/byte_buf_cursor.hpp>
#include <netbuf/buffer/byte_buf_view.hpp>
#include <netbuf/buffer/byte_processor.hpp>
#include <netbuf/buffer/composite_byte_buf.hpp>
#include <netbuf/buffer/errors.hpp>
#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>
#include <netbuf/buffer/utf8.hpp>
