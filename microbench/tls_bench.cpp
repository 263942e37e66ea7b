// TLS record processing, without sockets (docs/benchmarks.md, TLS section). Each iteration moves
// 256 KiB of plaintext from one TLS 1.3 end to the other (TLS_AES_128_GCM_SHA256, 16 KiB writes):
//
//   handler/SslHandler     two SslHandlers on EmbeddedChannels: the pipeline's write, flush,
//                          encryption into a ByteBuf through netbuf's BIO, the ciphertext buffers
//                          handed over as they are, decryption into one buffer per read
//   bio/ByteBuf            raw OpenSSL with a BIO whose callbacks read from and append to
//                          ByteBufs (what SslHandler does, minus the pipeline)
//   bio/memory             raw OpenSSL with memory BIOs, the usual alternative: the ciphertext
//                          copied out of the writer's BIO into a ByteBuf and into the reader's
//   cipher/EVP             AES-128-GCM alone over the same bytes in 16 KiB records (the floor:
//                          what `openssl speed -evp aes-128-gcm` measures), sealed then opened
//
// Run with --benchmark_enable_random_interleaving=true so that the rows alternate.
#include <benchmark/benchmark.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/tls/ssl_context.hpp>
#include <netbuf/tls/ssl_handler.hpp>

#include <cstring>
#include <span>
#include <string>

#include "support/test_certificates.hpp"
#include "support/tls_pair.hpp"

namespace {

constexpr std::size_t kTotal = 256 * 1024;
constexpr std::size_t kWrite = 16 * 1024;

struct Pki {
  netbuf::test::TestCa ca;
  netbuf::test::TestKeyPair server = ca.issue(netbuf::test::CertificateSpec{});
  std::shared_ptr<netbuf::SslContext> serverContext() const {
    netbuf::SslContext::Options o;
    o.certificateChainPem = server.chainPem;
    o.privateKeyPem = server.keyPem;
    o.cipherSuites = "TLS_AES_128_GCM_SHA256";
    return netbuf::SslContext::forServer(o);
  }
  std::shared_ptr<netbuf::SslContext> clientContext() const {
    netbuf::SslContext::Options o;
    o.trustedCaPem = ca.certPem();
    o.cipherSuites = "TLS_AES_128_GCM_SHA256";
    return netbuf::SslContext::forClient(o);
  }
};

const Pki& pki() {
  static const Pki p;
  return p;
}

const std::string& payload() {
  static const std::string s(kTotal, 'x');
  return s;
}

void BM_Handler(benchmark::State& state) {
  auto client = pki().clientContext();
  auto server = pki().serverContext();
  netbuf::test::TlsEnd c(client->newHandler("localhost", 443));
  netbuf::test::TlsEnd s(server->newHandler());
  netbuf::test::pump(c, s);
  if (!c.handshakeSucceeded()) state.SkipWithError("handshake failed");
  s.rec->keepText = false;  // the plaintext is counted, not copied
  // The writes are slices of one buffer (no copy), as the raw rows write from one string.
  const netbuf::ByteBuf source = netbuf::Unpooled::copiedBuffer(payload());
  for (auto _ : state) {
    for (std::size_t off = 0; off < kTotal; off += kWrite) {
      c.ch->write(source.retainedSlice(off, kWrite));
    }
    c.ch->flush();
    while (auto m = c.ch->readOutboundMessage()) s.ch->pipeline().fireChannelRead(std::move(m));
    s.ch->pipeline().fireChannelReadComplete();
    if (s.rec->bytes != kTotal) state.SkipWithError("plaintext lost");
    s.rec->bytes = 0;
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kTotal));
}

// ---- raw OpenSSL pairs

/// Ciphertext buffers in flight between the two ends of a ByteBuf-BIO pair.
struct Wire {
  netbuf::ByteBuf toReader;  // what the writer's BIO appended; the reader's BIO reads it
};

int wireWrite(BIO* bio, const char* data, std::size_t n, std::size_t* written) {
  auto* w = static_cast<Wire*>(BIO_get_data(bio));
  if (w->toReader.capacity() == 0) {
    w->toReader = netbuf::ByteBufAllocator::defaultAllocator().buffer(kTotal + kTotal / 64);
  }
  w->toReader.appendBytes(std::as_bytes(std::span(data, n)));
  *written = n;
  return 1;
}

int wireRead(BIO* bio, char* data, std::size_t n, std::size_t* readBytes) {
  auto* w = static_cast<Wire*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  const std::size_t have = w->toReader.readableBytes();
  if (have == 0) {
    BIO_set_retry_read(bio);
    *readBytes = 0;
    return 0;
  }
  const std::size_t take = std::min(n, have);
  std::memcpy(data, w->toReader.readPtr(), take);
  w->toReader.advanceReaderUnchecked(take);
  *readBytes = take;
  return 1;
}

long wireCtrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

BIO_METHOD* wireMethod() {
  static BIO_METHOD* m = [] {
    BIO_METHOD* meth = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "bench wire");
    BIO_meth_set_write_ex(meth, wireWrite);
    BIO_meth_set_read_ex(meth, wireRead);
    BIO_meth_set_ctrl(meth, wireCtrl);
    return meth;
  }();
  return m;
}

/// Two SSL objects, handshaken; bios() wires them with either kind of BIO.
struct RawPair {
  std::shared_ptr<netbuf::SslContext> cctx = pki().clientContext();
  std::shared_ptr<netbuf::SslContext> sctx = pki().serverContext();
  SSL* c = SSL_new(cctx->native());
  SSL* s = SSL_new(sctx->native());
  Wire c2s, s2c;

  explicit RawPair(bool memory) {
    if (memory) {
      BIO* a = BIO_new(BIO_s_mem());
      BIO* b = BIO_new(BIO_s_mem());
      SSL_set_bio(c, b, a);  // c reads b, writes a
      BIO_up_ref(a);
      BIO_up_ref(b);
      SSL_set_bio(s, a, b);
    } else {
      BIO* cw = BIO_new(wireMethod());
      BIO_set_data(cw, &c2s);
      BIO_set_init(cw, 1);
      BIO* cr = BIO_new(wireMethod());
      BIO_set_data(cr, &s2c);
      BIO_set_init(cr, 1);
      BIO* sw = BIO_new(wireMethod());
      BIO_set_data(sw, &s2c);
      BIO_set_init(sw, 1);
      BIO* sr = BIO_new(wireMethod());
      BIO_set_data(sr, &c2s);
      BIO_set_init(sr, 1);
      SSL_set_bio(c, cr, cw);
      SSL_set_bio(s, sr, sw);
    }
    SSL_set_connect_state(c);
    SSL_set_accept_state(s);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"  // OpenSSL's macro casts the name
    SSL_set_tlsext_host_name(c, "localhost");
#pragma GCC diagnostic pop
    for (int i = 0; i < 8; ++i) {
      SSL_do_handshake(c);
      SSL_do_handshake(s);
      char tmp[1];
      SSL_read(c, tmp, 0);
    }
  }
  ~RawPair() {
    SSL_free(c);
    SSL_free(s);
  }
};

/// The payload into writer, in kWrite-sized SSL_write calls (one record each).
void writePayload(SSL* writer) {
  for (std::size_t off = 0; off < kTotal; off += kWrite) {
    std::size_t n = 0;
    SSL_write_ex(writer, payload().data() + off, kWrite, &n);
  }
}

/// Everything reader can decrypt now, into one buffer.
netbuf::ByteBuf readAll(SSL* reader) {
  netbuf::ByteBuf plain = netbuf::ByteBufAllocator::defaultAllocator().buffer(kTotal);
  std::size_t n = 0;
  while (plain.writableBytes() > 0 &&
         SSL_read_ex(reader, plain.writePtrUnchecked(), plain.writableBytes(), &n) == 1) {
    plain.advanceWriterUnchecked(n);
  }
  return plain;
}

void BM_ByteBufBio(benchmark::State& state) {
  RawPair p(false);
  for (auto _ : state) {
    writePayload(p.c);
    benchmark::DoNotOptimize(readAll(p.s).readableBytes());
    p.c2s.toReader = netbuf::ByteBuf();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kTotal));
}

void BM_MemoryBio(benchmark::State& state) {
  RawPair p(true);
  auto& alloc = netbuf::ByteBufAllocator::defaultAllocator();
  BIO* cw = SSL_get_wbio(p.c);
  BIO* sr = SSL_get_rbio(p.s);
  for (auto _ : state) {
    writePayload(p.c);
    // The handler's side of a memory BIO: ciphertext copied into a pipeline buffer, and on the
    // reading end copied from the socket's buffer into the BIO.
    netbuf::ByteBuf wire = alloc.buffer(static_cast<std::size_t>(BIO_ctrl_pending(cw)));
    wire.advanceWriterUnchecked(static_cast<std::size_t>(
        BIO_read(cw, wire.writePtrUnchecked(), static_cast<int>(wire.writableBytes()))));
    BIO_write(sr, wire.readPtr(), static_cast<int>(wire.readableBytes()));
    benchmark::DoNotOptimize(readAll(p.s).readableBytes());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kTotal));
}

void BM_CipherOnly(benchmark::State& state) {
  unsigned char key[16] = {1, 2, 3};
  unsigned char iv[12] = {4, 5, 6};
  std::string sealed(kWrite + 16, '\0');
  std::string opened(kWrite, '\0');
  EVP_CIPHER_CTX* enc = EVP_CIPHER_CTX_new();
  EVP_CIPHER_CTX* dec = EVP_CIPHER_CTX_new();
  EVP_EncryptInit_ex(enc, EVP_aes_128_gcm(), nullptr, key, iv);
  EVP_DecryptInit_ex(dec, EVP_aes_128_gcm(), nullptr, key, iv);
  for (auto _ : state) {
    for (std::size_t off = 0; off < kTotal; off += kWrite) {
      int len = 0;
      auto* out = reinterpret_cast<unsigned char*>(sealed.data());
      EVP_EncryptInit_ex(enc, nullptr, nullptr, nullptr, iv);
      EVP_EncryptUpdate(enc, out, &len,
                        reinterpret_cast<const unsigned char*>(payload().data() + off), kWrite);
      EVP_EncryptFinal_ex(enc, out + len, &len);
      EVP_CIPHER_CTX_ctrl(enc, EVP_CTRL_GCM_GET_TAG, 16, out + kWrite);
      EVP_DecryptInit_ex(dec, nullptr, nullptr, nullptr, iv);
      EVP_DecryptUpdate(dec, reinterpret_cast<unsigned char*>(opened.data()), &len, out, kWrite);
      EVP_CIPHER_CTX_ctrl(dec, EVP_CTRL_GCM_SET_TAG, 16, out + kWrite);
      benchmark::DoNotOptimize(EVP_DecryptFinal_ex(dec, out, &len));
    }
  }
  EVP_CIPHER_CTX_free(enc);
  EVP_CIPHER_CTX_free(dec);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kTotal));
}

}  // namespace

BENCHMARK(BM_Handler)->Name("tls/handler/SslHandler");
BENCHMARK(BM_ByteBufBio)->Name("tls/bio/ByteBuf");
BENCHMARK(BM_MemoryBio)->Name("tls/bio/memory");
BENCHMARK(BM_CipherOnly)->Name("tls/cipher/EVP");
BENCHMARK_MAIN();
