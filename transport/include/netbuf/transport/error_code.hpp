#pragma once
// ErrorCode: the error code of every completion signature of netbuf's asynchronous operations.

#include <boost/system/error_code.hpp>

namespace netbuf {

/// Asio's error code, so that use_awaitable and use_future throw boost::system::system_error. It
/// holds netbuf's std::error_code categories (ChannelErrc, RpcErrc) unchanged: compare with
/// `ec == ChannelErrc::closed` (or convert to std::error_code); message() and to_string() name the
/// code, but value() of a wrapped std::error_code is a number Boost derives from the value and the
/// category, not the enum's value.
using ErrorCode = boost::system::error_code;

}  // namespace netbuf
