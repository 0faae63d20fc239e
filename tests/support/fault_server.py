"""An HTTP server with faults, for tst_remote (fsspec's test handler switches
its faults the same way): the first path component picks the behaviour, the
rest names the file under ROOT it serves, with byte ranges.

  /ok/F           ranges as nginx serves them
  /flaky/N/F      429 (Retry-After: 0) to the first N requests for F, then ok
  /cut/F          ranges from offset 0 whole; any later range cut off halfway
  /noetag/F       ok, without ETag or Last-Modified
  /stall/F        headers and a few bytes of the body, then nothing until
                  the client goes (prints "stalled /stall/F" when it stalls:
                  the test's hook to cancel a read that is surely under way)
  /stallbig/F     ok, but ranges of 1 MiB or more (a leaf's data, not the
                  tree's blocks) stall as above
  /slowdown/N/F   as S3 when overloaded: 503 with an XML error body whose
                  Code is SlowDown to the first N requests for F, then ok
  /s3error/CODE/STATUS/F
                  as S3 refusing a request: STATUS with an XML error body
                  whose Code is CODE (SignatureDoesNotMatch, ExpiredToken...)

usage: fault_server.py ROOT  (prints the port it listens on, then serves)
"""
import http.server
import os
import re
import sys
import threading

ROOT = sys.argv[1]
counts = {}
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def s3_error(self, status, code):
        # What S3 answers, StringToSign and all (SignatureDoesNotMatch
        # carries them): none of it is a secret, and none may be taken for data.
        body = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code>"
                "<Message>S3 says %s &amp; no more</Message><StringToSign>AWS4-HMAC-SHA256"
                "</StringToSign><RequestId>4442587FB7D0A2F9</RequestId></Error>"
                % (code, code)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        parts = self.path.lstrip("/").split("/")
        mode = parts[0]
        if mode == "s3error":
            self.s3_error(int(parts[2]), parts[1])
            return
        if mode in ("slowdown", "flaky"):
            limit, name = int(parts[1]), "/".join(parts[2:])
            with lock:
                counts[self.path] = counts.get(self.path, 0) + 1
                seen = counts[self.path]
            if seen <= limit and mode == "slowdown":
                self.s3_error(503, "SlowDown")
                return
            if seen <= limit:
                self.send_response(429)
                self.send_header("Retry-After", "0")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        else:
            name = "/".join(parts[1:])
        path = os.path.join(ROOT, name)
        if not os.path.isfile(path):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        size = os.path.getsize(path)
        start, end = 0, size - 1
        ranged = re.match(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
        if ranged and int(ranged.group(1)) >= size:  # as S3 answers an empty object
            self.send_response(416)
            self.send_header("Content-Range", "bytes */%d" % size)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if ranged:
            start, end = int(ranged.group(1)), min(int(ranged.group(2)), size - 1)
        with open(path, "rb") as f:
            f.seek(start)
            body = f.read(end - start + 1)
        self.send_response(206 if ranged else 200)
        if ranged:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, size))
        if mode != "noetag":
            self.send_header("ETag", '"%x"' % int(os.path.getmtime(path)))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if mode == "stall" or (mode == "stallbig" and ranged and end - start + 1 >= 1 << 20):
            self.wfile.write(body[: min(1024, len(body) // 2)])
            self.wfile.flush()
            print("stalled", self.path, flush=True)
            self.connection.settimeout(600)
            try:
                self.connection.recv(1)  # b"" once the client closes
            except OSError:
                pass
            self.close_connection = True
            return
        if mode == "cut" and start > 0:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
