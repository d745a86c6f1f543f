#!/usr/bin/env python3
"""A hostile S3 endpoint for pkgtool's tests (Tests/PackageRemoteTests/HostileStoreTests.swift).

Listens on 127.0.0.1 (an ephemeral port, printed on the first line of stdout) and either
proxies every request to a real store (SeaweedFS), signing it again with SigV4 after
tampering with it, or serves crafted answers without any store. Loopback only.

usage: hostile_s3.py MODE [UPSTREAM ACCESS_KEY SECRET_KEY REGION]

proxy modes (forward to UPSTREAM, http://127.0.0.1:PORT):
  drop-conditions        remove If-Match and If-None-Match from every request (moto 4.2, or a
                         proxy that drops the headers: the store then ignores conditions)
  drop-head-conditions   the same, on PUTs of a key ending in /HEAD only (the probe passes)
  revert-head            drop-head-conditions, and right after a PUT of HEAD put the previous
                         HEAD back, as a racer that read the old head and wrote after it would
  fail-probe             answer the second PUT of a pkgtool-probe-* key with 400 InvalidRequest
  trickle-packs          GETs of packs/ keys sent at 2 bytes a second
  overlong-packs         GETs of packs/ keys go on past the range asked for (no Content-Length,
                         the connection closed at the end)
  out-of-space           PUTs of packs/ keys: the first answered 500 InternalError "no free
                         volumes", the next ones read and never answered (a SeaweedFS out of
                         writable volumes)
crafted modes (no store; every GET answers with the same 1 MiB object):
  trickle                2 bytes a second, forever
  endless                206 to a range, no Content-Length, bytes without end
  overlong               206 with a Content-Length and a body longer than the range
  whole                  200 and the whole object, whatever Range asks
  claim                  a Content-Length of 1 TB, 1,000 bytes, then the connection closed
"""
import datetime
import hashlib
import hmac
import http.client
import http.server
import socket
import sys
import threading
import time
import urllib.parse

MODE = sys.argv[1]
UPSTREAM = sys.argv[2] if len(sys.argv) > 2 else None
ACCESS_KEY, SECRET_KEY, REGION = (sys.argv[3], sys.argv[4], sys.argv[5]) if len(sys.argv) > 5 else ("", "", "")
OBJECT = bytes((i * 7) & 0xFF for i in range(1 << 20))
CONDITIONS = ("if-match", "if-none-match")
probe_puts = {}
lock = threading.Lock()


def sign(method, path, query, headers, payload_hash):
    """SigV4 over host, x-amz-content-sha256 and x-amz-date: returns the headers to send."""
    now = datetime.datetime.now(datetime.timezone.utc)
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    day = now.strftime("%Y%m%d")
    host = urllib.parse.urlparse(UPSTREAM).netloc
    signed = {"host": host, "x-amz-content-sha256": payload_hash, "x-amz-date": amz_date}
    pairs = sorted(part.split("=", 1) if "=" in part else [part, ""] for part in query.split("&") if part)
    canonical_query = "&".join("%s=%s" % (k, v) for k, v in pairs)
    names = sorted(signed)
    canonical = "\n".join([
        method, path, canonical_query,
        "".join("%s:%s\n" % (name, signed[name]) for name in names),
        ";".join(names), payload_hash])
    scope = "%s/%s/s3/aws4_request" % (day, REGION)
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + SECRET_KEY).encode()
    for part in (day, REGION, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    result = dict(headers)
    result.update(signed)
    result["authorization"] = "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
        ACCESS_KEY, scope, ";".join(names), signature)
    return result


def upstream(method, target, headers, body):
    """Sends one request to the store, signed again; returns (status, headers, body)."""
    path, _, query = target.partition("?")
    payload_hash = headers.get("x-amz-content-sha256") or hashlib.sha256(body).hexdigest()
    send = {k: v for k, v in headers.items() if k in ("content-type", "range") or k in CONDITIONS}
    send["content-length"] = str(len(body))
    connection = http.client.HTTPConnection(urllib.parse.urlparse(UPSTREAM).netloc, timeout=60)
    connection.request(method, target, body=body if method in ("PUT", "POST") else None,
                       headers=sign(method, path, query, send, payload_hash))
    response = connection.getresponse()
    data = response.read() if method != "HEAD" else b""
    answer = (response.status, response.getheaders(), data)
    connection.close()
    return answer


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *arguments):
        pass

    def request_headers(self):
        return {k.lower(): v for k, v in self.headers.items()}

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def reply(self, status, headers, data, head=False):
        self.send_response(status)
        for name, value in headers:
            if name.lower() in ("etag", "content-type", "content-range", "last-modified", "accept-ranges"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)) if not head else dict(
            (k.lower(), v) for k, v in headers).get("content-length", "0"))
        self.end_headers()
        if not head:
            self.wfile.write(data)

    def error(self, status, code):
        text = ("<Error><Code>%s</Code><Message>staged</Message></Error>" % code).encode()
        self.reply(status, [("Content-Type", "application/xml")], text)

    # Proxy modes.

    def proxy(self, method):
        headers = self.request_headers()
        body = self.body()
        path = self.path.partition("?")[0]
        is_head = path.endswith("/HEAD")
        if MODE == "drop-conditions" or (MODE in ("drop-head-conditions", "revert-head") and is_head):
            headers = {k: v for k, v in headers.items() if k not in CONDITIONS}
        if MODE == "fail-probe" and method == "PUT" and "/pkgtool-probe-" in path:
            with lock:
                probe_puts[path] = probe_puts.get(path, 0) + 1
                count = probe_puts[path]
            if count == 2:
                return self.error(400, "InvalidRequest")
        previous = None
        if MODE == "revert-head" and method == "PUT" and is_head:
            status, _, data = upstream("GET", self.path, {}, b"")
            previous = data if status == 200 else None
        if MODE == "out-of-space" and method == "PUT" and "/packs/" in path:
            with lock:
                probe_puts["out-of-space"] = probe_puts.get("out-of-space", 0) + 1
                first = probe_puts["out-of-space"] == 1
            if first:
                text = b"<Error><Code>InternalError</Code><Message>no free volumes left</Message></Error>"
                return self.reply(500, [("Content-Type", "application/xml")], text)
            time.sleep(600)
            return
        if MODE == "trickle-packs" and method == "GET" and "/packs/" in path:
            status, response_headers, data = upstream(method, self.path, headers, body)
            return self.trickle(status, response_headers, data)
        if MODE == "overlong-packs" and method == "GET" and "/packs/" in path:
            status, response_headers, data = upstream(method, self.path, headers, body)
            return self.overlong(status, response_headers, data)
        status, response_headers, data = upstream(method, self.path, headers, body)
        if previous is not None and status == 200:
            upstream("PUT", self.path, {"content-type": "application/octet-stream"}, previous)
        self.reply(status, response_headers, data, head=(method == "HEAD"))

    def trickle(self, status, headers, data):
        self.send_response(status)
        for name, value in headers:
            if name.lower() in ("etag", "content-range"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            for start in range(0, len(data), 2):
                self.wfile.write(data[start:start + 2])
                self.wfile.flush()
                time.sleep(1)
        except OSError:
            pass

    def overlong(self, status, headers, data):
        self.send_response(status)
        for name, value in headers:
            if name.lower() in ("etag", "content-range"):
                self.send_header(name, value)
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            self.wfile.write(data + b"\0" * (1 << 20))
            self.wfile.flush()
        except OSError:
            pass
        self.close_connection = True

    # Crafted modes.

    def crafted(self, method):
        self.body()
        if method != "GET":
            return self.error(501, "NotImplemented")
        ranged = self.headers.get("Range")
        start, end = 0, len(OBJECT) - 1
        if ranged:
            first, _, last = ranged.split("=")[1].partition("-")
            start = int(first)
            end = int(last) if last else end
        data = OBJECT[start:end + 1]
        if MODE == "trickle":
            self.send_response(206 if ranged else 200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                while True:
                    self.wfile.write(b"ab")
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                return
        if MODE == "endless":
            self.send_response(206 if ranged else 200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                chunk = b"\x55" * 65536
                while True:
                    self.wfile.write(chunk)
            except OSError:
                return
        if MODE == "overlong":
            extra = data + b"\xAA" * 4096
            self.send_response(206 if ranged else 200)
            self.send_header("Content-Length", str(len(extra)))
            self.end_headers()
            self.wfile.write(extra)
            return
        if MODE == "whole":
            self.send_response(200)
            self.send_header("Content-Length", str(len(OBJECT)))
            self.end_headers()
            self.wfile.write(OBJECT)
            return
        if MODE == "claim":
            self.send_response(206 if ranged else 200)
            self.send_header("Content-Length", str(10 ** 12))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(OBJECT[:1000])
            self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.error(500, "InternalError")

    def handle_method(self, method):
        if UPSTREAM:
            self.proxy(method)
        else:
            self.crafted(method)

    def do_GET(self):
        self.handle_method("GET")

    def do_PUT(self):
        self.handle_method("PUT")

    def do_HEAD(self):
        self.handle_method("HEAD")

    def do_DELETE(self):
        self.handle_method("DELETE")

    def do_POST(self):
        self.handle_method("POST")


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
