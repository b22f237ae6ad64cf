"""A text response read as it arrives (a node's log through the API server's proxy can be gigabytes):
its status, a bounded look at its start, then its lines, never the whole body at once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kubectl_win.errors import ClusterUnreachable

CHUNK = 64 * 1024


class RawStream:
    """The body of one GET, read in chunks. `head()` looks at the start without consuming it, `lines()`
    yields every line (without its newline, CRLF or LF) from the start; close it when done."""

    def __init__(self, status: int, response: Any, server: str, timeout: float) -> None:
        self.status = status
        self._response = response
        self._server = server
        self._timeout = timeout
        self._buffer = b""  # read from the connection, not handed out yet
        self._ended = False

    def __repr__(self) -> str:
        return f"RawStream(status={self.status})"

    @property
    def complete(self) -> bool:
        """Whether the whole body has been read into the buffer (a short answer, a message)."""
        return self._ended

    def head(self, limit: int = CHUNK) -> bytes:
        """Up to `limit` bytes from the start of the body; fewer when the body is shorter (then `complete`)."""
        while len(self._buffer) < limit and not self._ended:
            self._fill()
        return self._buffer[:limit]

    def text(self, limit: int = CHUNK) -> str:
        """The start of the body as text (an error answer's message)."""
        return self.head(limit).decode("utf-8", "replace")

    def lines(self) -> Iterator[str]:
        pending, self._buffer = self._buffer, b""
        while True:
            *whole, pending = pending.split(b"\n")
            for line in whole:
                yield (line[:-1] if line.endswith(b"\r") else line).decode("utf-8", "replace")
            if self._ended:
                break
            self._fill()
            pending, self._buffer = pending + self._buffer, b""
        if pending:
            yield (pending[:-1] if pending.endswith(b"\r") else pending).decode("utf-8", "replace")

    def close(self) -> None:
        if self._ended:
            self._response.release_conn()  # read to the end: the connection can serve the next request
        else:
            self._response.close()  # a body left unread (a --tail stopped early, an error): drop it

    def __enter__(self) -> RawStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fill(self) -> None:
        from urllib3.exceptions import HTTPError, ProtocolError, ReadTimeoutError

        try:
            chunk = self._response.read(CHUNK)
        except ReadTimeoutError:
            raise ClusterUnreachable(f"{self._server} stopped sending for {self._timeout:g}s (--request-timeout)"
                                     ) from None
        except (ProtocolError, HTTPError):
            raise ClusterUnreachable(f"the connection to {self._server} dropped while reading the answer") from None
        if chunk:
            self._buffer += chunk
        else:
            self._ended = True
