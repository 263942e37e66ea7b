#pragma once
// What SslContext and SslHandler share behind their public headers: the SSL ex_data slot that
// leads OpenSSL's callbacks (session, info) back to the SslHandler of an SSL object, and the
// counts of OpenSSL objects netbuf owns (SslContext::liveObjects()).

#include <atomic>
#include <cstdint>

namespace netbuf::detail {

/// The SSL ex_data index holding each connection's SslHandler*.
int sslHandlerIndex();

inline std::atomic<std::int64_t> gLiveSslContexts{0};
inline std::atomic<std::int64_t> gLiveSslConnections{0};
inline std::atomic<std::int64_t> gLiveSslSessions{0};

}  // namespace netbuf::detail
