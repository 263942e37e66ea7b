// HttpDate (http_date.hpp).

#include <array>
#include <cstring>
#include <netbuf/codec/http/http_date.hpp>

namespace netbuf::HttpDate {

namespace {

constexpr std::array<const char*, 7> kDays = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr std::array<const char*, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

void formatInto(std::time_t t, char (&buf)[30]) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::memcpy(buf, kDays[static_cast<std::size_t>(tm.tm_wday)], 3);
  buf[3] = ',';
  buf[4] = ' ';
  buf[5] = static_cast<char>('0' + tm.tm_mday / 10);
  buf[6] = static_cast<char>('0' + tm.tm_mday % 10);
  buf[7] = ' ';
  std::memcpy(buf + 8, kMonths[static_cast<std::size_t>(tm.tm_mon)], 3);
  buf[11] = ' ';
  const int year = tm.tm_year + 1900;
  buf[12] = static_cast<char>('0' + year / 1000 % 10);
  buf[13] = static_cast<char>('0' + year / 100 % 10);
  buf[14] = static_cast<char>('0' + year / 10 % 10);
  buf[15] = static_cast<char>('0' + year % 10);
  buf[16] = ' ';
  buf[17] = static_cast<char>('0' + tm.tm_hour / 10);
  buf[18] = static_cast<char>('0' + tm.tm_hour % 10);
  buf[19] = ':';
  buf[20] = static_cast<char>('0' + tm.tm_min / 10);
  buf[21] = static_cast<char>('0' + tm.tm_min % 10);
  buf[22] = ':';
  buf[23] = static_cast<char>('0' + tm.tm_sec / 10);
  buf[24] = static_cast<char>('0' + tm.tm_sec % 10);
  std::memcpy(buf + 25, " GMT", 4);
  buf[29] = '\0';
}

int twoDigits(const char* p) {
  if (p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9') return -1;
  return (p[0] - '0') * 10 + (p[1] - '0');
}

}  // namespace

std::string format(std::time_t t) {
  char buf[30];
  formatInto(t, buf);
  return std::string(buf, 29);
}

std::string_view current() {
  thread_local std::time_t cachedSecond = -1;
  thread_local char cached[30];
  const std::time_t now = std::time(nullptr);
  if (now != cachedSecond) {
    formatInto(now, cached);
    cachedSecond = now;
  }
  return std::string_view(cached, 29);
}

std::optional<std::time_t> parse(std::string_view s) {
  // "Sun, 06 Nov 1994 08:49:37 GMT"
  if (s.size() != 29 || s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' ||
      s[19] != ':' || s[22] != ':' || s.substr(25) != " GMT") {
    return std::nullopt;
  }
  bool dayOk = false;
  for (const char* d : kDays) dayOk = dayOk || s.substr(0, 3) == d;
  if (!dayOk) return std::nullopt;
  int month = -1;
  for (int m = 0; m < 12; ++m)
    if (s.substr(8, 3) == kMonths[static_cast<std::size_t>(m)]) month = m;
  const int day = twoDigits(s.data() + 5);
  const int y1 = twoDigits(s.data() + 12);
  const int y2 = twoDigits(s.data() + 14);
  const int hour = twoDigits(s.data() + 17);
  const int minute = twoDigits(s.data() + 20);
  const int second = twoDigits(s.data() + 23);
  if (month < 0 || day < 1 || day > 31 || y1 < 0 || y2 < 0 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 60) {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = y1 * 100 + y2 - 1900;
  tm.tm_mon = month;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return timegm(&tm);
}

}  // namespace netbuf::HttpDate
