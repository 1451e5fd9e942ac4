"""A kept-alive HTTP/1.1 connection over a plain socket, for latency figures.

A request's bytes are made before the clock starts, and an answer is read with no more
parsing than its status and `Content-Length`: what is timed is the server's path, as with
the raw MQTT clients beside it (bench/twins.py), not `http.client`'s own work (building a
request and parsing an answer's headers cost it about 0.1 ms a round trip here).
"""

from __future__ import annotations

import socket
import urllib.parse

_END = b"\r\n\r\n"


class RawHttp:
    def __init__(self, base_url: str, timeout: float = 30.0) -> None:
        url = urllib.parse.urlsplit(base_url)
        self.host = f"{url.hostname}:{url.port}"
        self.sock = socket.create_connection((url.hostname, url.port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buffer = b""

    def encode(self, method: str, path: str, headers: dict[str, str], body: bytes) -> bytes:
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        lines.append(f"Content-Length: {len(body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + body

    def send(self, request: bytes) -> None:
        self.sock.sendall(request)

    def answer(self) -> tuple[int, bytes]:
        """The next answer's status and body (which must have a Content-Length)."""
        while _END not in self._buffer:
            self._buffer += self._received()
        head, self._buffer = self._buffer.split(_END, 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        fields = dict(line.split(":", 1) for line in lines[1:] if ":" in line)
        length = {k.strip().lower(): v.strip() for k, v in fields.items()}.get("content-length")
        if length is None:
            raise RuntimeError(f"an answer without Content-Length: {lines[0]}")
        while len(self._buffer) < int(length):
            self._buffer += self._received()
        body, self._buffer = self._buffer[: int(length)], self._buffer[int(length) :]
        return status, body

    def _received(self) -> bytes:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise RuntimeError("the server closed the connection")
        return chunk

    def close(self) -> None:
        self.sock.close()
