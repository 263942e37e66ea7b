#pragma once
// Umbrella header: everything netbuf offers.
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/byte_buf_view.hpp>
#include <netbuf/buffer/byte_processor.hpp>
#include <netbuf/buffer/errors.hpp>
#include <netbuf/buffer/utf8.hpp>
