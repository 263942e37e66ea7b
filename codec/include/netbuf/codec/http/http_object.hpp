#pragma once
// HttpObject: what travels through an HTTP pipeline, one of the message types of Netty's model.
// Decoders emit heads, HttpContent and LastHttpContent; HttpObjectAggregator turns them into
// FullHttpRequest / FullHttpResponse; encoders take all six. A std::variant, so a handler visits
// it without a virtual call, and it fits a pipeline Message's inline storage (no allocation per
// message).

#include <netbuf/codec/http/full_http_request.hpp>
#include <netbuf/codec/http/full_http_response.hpp>
#include <netbuf/codec/http/http_content.hpp>
#include <netbuf/codec/http/http_request.hpp>
#include <netbuf/codec/http/http_response.hpp>
#include <variant>

namespace netbuf {

using HttpObject = std::variant<HttpRequest, HttpResponse, HttpContent, LastHttpContent,
                                FullHttpRequest, FullHttpResponse>;

static_assert(sizeof(HttpObject) <= 160, "HttpObject must fit a pipeline Message inline");

}  // namespace netbuf
