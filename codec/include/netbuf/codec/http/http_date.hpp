#pragma once
// HttpDate: the IMF-fixdate of RFC 9110 §5.6.7 ("Sun, 06 Nov 1994 08:49:37 GMT"), formatted and
// parsed, and the current time's value cached per thread and refreshed once a second, so a server
// adds a Date field to every response without formatting a date per response.

#include <ctime>
#include <optional>
#include <string>
#include <string_view>

namespace netbuf::HttpDate {

/// The IMF-fixdate of t (seconds since the epoch, UTC).
std::string format(std::time_t t);
/// The current time as an IMF-fixdate; the view stays valid on this thread until the next call
/// in a later second (the value is cached per thread).
std::string_view current();
/// The time of an IMF-fixdate (the only form a sender may generate); nothing for anything else.
std::optional<std::time_t> parse(std::string_view text);

}  // namespace netbuf::HttpDate
