"""A TCP link to Redis that a test can cut, as a network or a Redis outage would."""

from __future__ import annotations

import contextlib
import socket
import threading


class BrokerLink:
    """Listens on 127.0.0.1 and forwards to Redis while ``up``.

    ``refuse()``: nothing listens any more, so connecting fails at once (Redis stopped).
    ``hang()``: connections are accepted and never answered (a partition, a stuck Redis).
    ``restore()``: forwards again. Every change drops the connections open at that moment,
    as a restart or a partition does.
    """

    def __init__(self, target: tuple[str, int] = ("127.0.0.1", 6379)):
        self.target = target
        self.mode = "up"
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self._listener = self._listen(port=0)
        self.port = self._listener.getsockname()[1]

    def url(self, db: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    # ------------------------------------------------------------------ modes

    def refuse(self) -> None:
        with self._lock:
            self.mode = "refuse"
            self._listener.close()
        self._drop_open()

    def hang(self) -> None:
        self._switch("hang")

    def restore(self) -> None:
        self._switch("up")

    def close(self) -> None:
        with self._lock:
            self.mode = "closed"
            self._listener.close()
        self._drop_open()

    def _switch(self, mode: str) -> None:
        with self._lock:
            if self.mode == "refuse":
                self._listener = self._listen(port=self.port)
            self.mode = mode
        self._drop_open()

    # ------------------------------------------------------------------ plumbing

    def _listen(self, port: int) -> socket.socket:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(128)
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return listener

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed by refuse() or close()
            with self._lock:
                mode = self.mode
                self._open.append(client)
            if mode != "up":
                continue  # "hang": held open, never read, never answered
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._open.append(upstream)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def _drop_open(self) -> None:
        with self._lock:
            dropped, self._open = self._open, []
        for s in dropped:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()
