#pragma once
// BufferBio: the BIO through which OpenSSL reads and writes an SslHandler's ciphertext, straight
// from and into the handler's ByteBufs:
//  - read: copies from SslHandler::in_ (the socket's buffer, or the cumulation of a record split
//    over reads) into OpenSSL's record buffer, a copy OpenSSL needs anyway. A memory BIO would add
//    one: the socket's bytes copied into the BIO first.
//  - write: appends the records OpenSSL made to SslHandler::out_, a buffer from the channel's
//    allocator that then goes to the socket as is. A memory BIO would add a copy out of it.
// It never blocks: a read with nothing left asks OpenSSL to retry (SSL_ERROR_WANT_READ), a write
// always takes everything.

#include <openssl/bio.h>

namespace netbuf {
class SslHandler;
}  // namespace netbuf

namespace netbuf::detail {

struct BufferBio {
  /// A new BIO over handler (freed with the SSL object it is given to).
  static BIO* create(SslHandler& handler);

 private:
  static const BIO_METHOD* method();
  static int write(BIO* bio, const char* data, std::size_t n, std::size_t* written);
  static int read(BIO* bio, char* data, std::size_t n, std::size_t* readBytes);
  static long ctrl(BIO* bio, int cmd, long num, void* ptr);
};

}  // namespace netbuf::detail
