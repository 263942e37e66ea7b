#include "detail/buffer_bio.hpp"

#include <algorithm>
#include <cstring>
#include <netbuf/tls/ssl_handler.hpp>
#include <new>
#include <span>

namespace netbuf::detail {

const BIO_METHOD* BufferBio::method() {
  // One method for the process, made on first use (thread-safe static) and kept: OpenSSL has no
  // reference count on methods, and every BIO of every handler points at it.
  static const BIO_METHOD* const m = [] {
    BIO_METHOD* meth = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "netbuf ByteBuf");
    if (meth == nullptr) throw std::bad_alloc();
    BIO_meth_set_write_ex(meth, &BufferBio::write);
    BIO_meth_set_read_ex(meth, &BufferBio::read);
    BIO_meth_set_ctrl(meth, &BufferBio::ctrl);
    return meth;
  }();
  return m;
}

BIO* BufferBio::create(SslHandler& handler) {
  BIO* bio = BIO_new(method());
  if (bio == nullptr) throw std::bad_alloc();
  BIO_set_data(bio, &handler);
  BIO_set_init(bio, 1);
  return bio;
}

int BufferBio::write(BIO* bio, const char* data, std::size_t n, std::size_t* written) {
  auto* h = static_cast<SslHandler*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  try {
    if (h->out_.capacity() == 0) {
      h->out_ = h->ctx_->alloc().buffer(std::max(n, h->outHint_));
    }
    h->out_.appendBytes(std::span(reinterpret_cast<const std::byte*>(data), n));
  } catch (...) {
    // Out of memory: OpenSSL sees a failed write and fails the connection.
    *written = 0;
    return 0;
  }
  *written = n;
  return 1;
}

int BufferBio::read(BIO* bio, char* data, std::size_t n, std::size_t* readBytes) {
  auto* h = static_cast<SslHandler*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  const std::size_t have = h->in_.readableBytes();
  if (have == 0) {
    BIO_set_retry_read(bio);
    *readBytes = 0;
    return 0;
  }
  const std::size_t take = std::min(n, have);
  std::memcpy(data, h->in_.readPtr(), take);
  h->in_.advanceReaderUnchecked(take);
  *readBytes = take;
  return 1;
}

long BufferBio::ctrl(BIO*, int cmd, long, void*) {
  switch (cmd) {
    case BIO_CTRL_FLUSH:  // writes are in out_ already; the handler hands them on
      return 1;
    default:
      return 0;
  }
}

}  // namespace netbuf::detail
