#!/usr/bin/env python3
"""An HTTP/1.1 peer for tests/http/http_client_interop_thread_test.cpp, on Python's own
http.server (BaseHTTPRequestHandler with protocol_version "HTTP/1.1": keep-alive, and bodies framed
the way the handler chooses).

    http_client_peer.py PORT_FILE [LIFETIME_SECONDS]

Listens on 127.0.0.1 (a free port), writes the port to PORT_FILE (atomically: written beside it,
then renamed), serves for LIFETIME_SECONDS (default 30) and exits, so a test that dies cannot leave
it behind for long.

Routes:
  GET  /chunked?n=N&size=S  N chunks of about S bytes (default 50, 100), then a trailer
  HEAD /chunked             the head only (Transfer-Encoding: chunked, no body)
  GET  /cached              200 with ETag "v1"; 304 (no body) when If-None-Match is "v1"
  GET  /close               HTTP/1.1 with Connection: close and no length: ends at close
  GET  /port                the client's source port (a reused connection keeps it)
  POST /echo                the request body back, chunked
"""

import http.server
import os
import sys
import threading
import urllib.parse


def chunk_body(n, size):
    """The pieces a /chunked response sends (the test rebuilds the same body)."""
    return [(str(i) + ",").encode() * (size // (len(str(i)) + 1) + i % 3) for i in range(n)]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet: the test shows its own output
        pass

    def send_chunks(self, pieces, trailer=None):
        for piece in pieces:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.write(b"0\r\n")
        if trailer:
            self.wfile.write(trailer.encode() + b"\r\n")
        self.wfile.write(b"\r\n")
        self.wfile.flush()

    def chunked_head(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Trailer", "X-Pieces")
        self.end_headers()

    def do_HEAD(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/chunked":
            self.chunked_head()
        else:
            self.send_error(404)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        if url.path == "/chunked":
            n = int(query.get("n", ["50"])[0])
            size = int(query.get("size", ["100"])[0])
            self.chunked_head()
            self.send_chunks(chunk_body(n, size), "X-Pieces: %d" % n)
        elif url.path == "/cached":
            if self.headers.get("If-None-Match") == '"v1"':
                self.send_response(304)
                self.send_header("ETag", '"v1"')
                self.end_headers()
            else:
                body = b"fresh representation"
                self.send_response(200)
                self.send_header("ETag", '"v1"')
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
        elif url.path == "/close":
            body = b"until the connection closes " * 1000
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True
        elif url.path == "/port":
            body = str(self.client_address[1]).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_error(404)

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path != "/echo":
            self.send_error(404)
            return
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", self.headers.get("Content-Type", "application/octet-stream"))
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.send_chunks([body[i:i + 4096] for i in range(0, len(body), 4096)])


def main():
    port_file = sys.argv[1]
    lifetime = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, port_file)
    threading.Timer(lifetime, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
