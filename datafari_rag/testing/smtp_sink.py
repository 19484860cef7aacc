"""A minimal SMTP server in a thread that keeps the messages it receives: what the alerts' mails
are checked against (no mail leaves the machine)."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from email import message_from_bytes
from email.message import Message


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        sink: SmtpSink = self.server.sink  # type: ignore[attr-defined]
        self.wfile.write(b"220 sink ready\r\n")
        while line := self.rfile.readline():
            verb = line[:4].upper()
            if verb == b"DATA":
                self.wfile.write(b"354 end with .\r\n")
                data = []
                while (part := self.rfile.readline()) not in (b".\r\n", b""):
                    data.append(part[1:] if part.startswith(b"..") else part)
                sink.messages.append(message_from_bytes(b"".join(data)))
                self.wfile.write(b"250 kept\r\n")
            elif verb == b"QUIT":
                self.wfile.write(b"221 bye\r\n")
                return
            else:  # EHLO, HELO, MAIL, RCPT, RSET, NOOP
                self.wfile.write(b"250 ok\r\n")


class SmtpSink:
    def __init__(self) -> None:
        self.messages: list[Message] = []


@contextmanager
def smtp_sink() -> Iterator[tuple[SmtpSink, int]]:
    """(the sink, its port on 127.0.0.1), served until the block ends."""
    sink = SmtpSink()
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.sink = sink  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield sink, server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
