#pragma once
// DatagramPacket: one UDP datagram travelling through a DatagramChannel's pipeline (Netty's
// DatagramPacket).
//
// Inbound, a DatagramChannel fires each datagram it receives as channelRead(DatagramPacket) with
// content = the datagram's bytes, recipient = the channel's local endpoint, sender = the peer it
// came from. Outbound, write(DatagramPacket) sends content as one datagram to recipient (sender is
// ignored: the socket's own address is the source). A recipient left unspecified (a
// default-constructed endpoint) means the channel's connected peer.
//
//     void messageReceived(ChannelHandlerContext& ctx, DatagramPacket p) override {
//       ctx.writeAndFlush(DatagramPacket(std::move(p.content), p.sender));   // echo
//     }
//
// Ownership: the packet owns its content (a move-only ByteBuf handle); destroying the packet
// releases it. Move-only, and small enough (static_assert below) to travel inline in a Message,
// so a datagram passes through the pipeline without an allocation of its own.

#include <boost/asio/ip/udp.hpp>
#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/transport/message.hpp>
#include <type_traits>
#include <utility>

namespace netbuf {

struct DatagramPacket {
  using Endpoint = boost::asio::ip::udp::endpoint;

  DatagramPacket() noexcept = default;
  /// A packet to send: content to recipient (sender is filled in on receipt only).
  explicit DatagramPacket(ByteBuf c, const Endpoint& to = Endpoint(),
                          const Endpoint& from = Endpoint()) noexcept
      : content(std::move(c)), recipient(to), sender(from) {}
  DatagramPacket(DatagramPacket&&) noexcept = default;
  DatagramPacket& operator=(DatagramPacket&&) noexcept = default;
  DatagramPacket(const DatagramPacket&) = delete;
  DatagramPacket& operator=(const DatagramPacket&) = delete;

  /// The same addresses with other content (Netty's replace(ByteBuf)).
  DatagramPacket replace(ByteBuf c) const noexcept {
    return DatagramPacket(std::move(c), recipient, sender);
  }

  /// True when recipient was left unspecified: the datagram goes to the connected peer.
  bool toConnectedPeer() const noexcept {
    return recipient.port() == 0 && recipient.address().is_unspecified();
  }

  ByteBuf content;
  Endpoint recipient;
  Endpoint sender;
};

static_assert(sizeof(DatagramPacket) <= Message::kInlineSize &&
                  alignof(DatagramPacket) <= Message::kInlineAlign &&
                  std::is_nothrow_move_constructible_v<DatagramPacket>,
              "a DatagramPacket must travel inline in a Message");

}  // namespace netbuf
