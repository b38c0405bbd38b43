"""A faulty OpenAI-compatible judge server on 127.0.0.1, for load tests of the judge transport.

It speaks HTTP/1.1 with keep-alive on raw asyncio streams, so that it can misbehave the ways
a real server or proxy does under load, each with probability ``fault_rate`` per request:

- ``stall``: read the request, say nothing for ``stall_s`` (longer than the client's timeout),
  then close: nothing is answered;
- ``reset``: read the request and reset the connection (RST);
- ``half``: send the status line, the headers and half the body, then close;
- ``half_stall``: the same, then say nothing for ``stall_s`` before closing;
- ``throttle``: 429 with a short Retry-After; ``error``: 500;
- ``html``: 200 with an HTML page; ``garbage``: 200 with a body that is not JSON.

Idle keep-alive connections are closed after ``idle_s`` (as servers and proxies do), so a
client that keeps dead connections in its pool meets them. Whether a request faults is
decided by its identity (a hash of the model, the first two messages and the schema name: what
a ledger key is made of here) and by how many times that identity was asked before, so one
seed gives the same faults whatever the order of arrival.

Every complete good answer (a 200 whose whole body was written) is counted per identity:
``good`` > 1 for an identity is a judgment paid twice. ``GET /stats`` returns the counts as
JSON; ``POST /control`` with ``{"fault_rate": x}`` changes the rate.

Run standalone: ``python -m tests.faulty_server --port-file F [--port P] [--seed S]
[--fault-rate R] [--stall S]``; or in a thread with :func:`start`.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import socket
import struct
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

FAULTS = ("stall", "reset", "half", "half_stall", "throttle", "error", "html", "garbage")


def live_answer(schema_name: str, user_text: str) -> dict:
    """One claim per answer (its text), supported: what ``tests/live_judge.py`` answers."""
    if schema_name == "verdicts":
        return {"verdicts": [{"id": 1, "verdict": "supported", "sources": [], "combined": False, "quote": ""}]}
    if schema_name == "claims":
        answer = user_text.split("ANSWER:\n", 1)[1].split("\n\nREFERENCE ANSWER:", 1)[0]
        return {"claims": [{"id": 1, "text": answer[:200], "addresses_question": True, "cites": []}],
                "declines": False, "reference_claims": []}
    if schema_name == "needed_sentences":
        return {"needed": [1]}
    raise ValueError(f"the faulty server has no answer for schema {schema_name!r}")


@dataclass
class Stats:
    requests: Counter = field(default_factory=Counter)  # identity -> requests received
    good: Counter = field(default_factory=Counter)  # identity -> complete good answers written
    faults: Counter = field(default_factory=Counter)  # fault kind -> times
    open_connections: int = 0
    max_open: int = 0

    def as_dict(self) -> dict:
        return {"requests": sum(self.requests.values()), "identities": len(self.requests),
                "good": sum(self.good.values()), "answered_good": len(self.good),
                "good_twice": sorted(k for k, n in self.good.items() if n > 1),
                "faults": dict(self.faults), "open_connections": self.open_connections, "max_open": self.max_open,
                "good_keys": sorted(self.good)}


@dataclass
class Config:
    seed: int = 0
    fault_rate: float = 0.1
    stall_s: float = 4.0
    idle_s: float = 3.0
    retry_after: str = "0.2"
    latency_s: float = 0.0
    faults: tuple[str, ...] = FAULTS
    answer: Callable[[str, str], dict] = live_answer
    log: str | None = None  # a file each request ("r KEY") and good answer ("g KEY") is appended to


def identity(payload: dict) -> str:
    messages = payload.get("messages") or []
    fmt = payload.get("response_format") or {}
    name = (fmt.get("json_schema") or {}).get("name", "")
    head = [m.get("content") for m in messages[:2]]
    return hashlib.sha256(json.dumps([payload.get("model"), head, name]).encode()).hexdigest()[:16]


class FaultyServer:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.stats = Stats()
        self.server: asyncio.AbstractServer | None = None
        self._log: int | None = None
        if config.log is not None:  # a restarted server goes on counting where the killed one stopped
            self.stats = read_log(config.log)
            self._log = os.open(config.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def note(self, what: str, key: str) -> None:
        if self._log is not None:
            os.write(self._log, f"{what} {key}\n".encode())  # unbuffered: a kill -9 loses nothing written

    def fault(self, key: str, nth: int) -> str | None:
        rng = random.Random(f"{self.config.seed}:{key}:{nth}")
        if rng.random() >= self.config.fault_rate:
            return None
        return rng.choice(self.config.faults)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        st = self.stats
        st.open_connections += 1
        st.max_open = max(st.max_open, st.open_connections)
        try:
            while True:
                try:
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.config.idle_s)
                except (asyncio.TimeoutError, asyncio.IncompleteReadError, ConnectionError,
                        asyncio.LimitOverrunError):
                    return  # idle keep-alive connection closed, as servers do
                lines = head.decode("latin-1").split("\r\n")
                method, path = lines[0].split(" ")[:2]
                headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:] if h)}
                body = await reader.readexactly(int(headers.get("content-length", 0)))
                if not await self.respond(method, path, body, writer):
                    return
                if headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            st.open_connections -= 1
            try:
                writer.close()
            except Exception:  # noqa: BLE001 -- already reset
                pass

    async def respond(self, method: str, path: str, body: bytes, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False when the connection is to be closed."""
        if method == "GET" and path == "/stats":
            return await self.send(writer, 200, json.dumps(self.stats.as_dict()).encode())
        if method == "POST" and path == "/control":
            for k, v in json.loads(body).items():
                setattr(self.config, k, v)
            return await self.send(writer, 200, b"{}")
        if not path.endswith("/chat/completions"):
            return await self.send(writer, 404, b'{"error": "no such path"}')
        payload = json.loads(body)
        key = identity(payload)
        nth = self.stats.requests[key]
        self.stats.requests[key] += 1
        self.note("r", key)
        kind = self.fault(key, nth)
        if kind is not None:
            self.stats.faults[kind] += 1
            return await self.misbehave(kind, writer)
        if self.config.latency_s:
            await asyncio.sleep(random.uniform(0, self.config.latency_s))
        fmt = payload.get("response_format") or {}
        name = (fmt.get("json_schema") or {}).get("name", "")
        user = "\n".join(m["content"] for m in payload["messages"] if m["role"] == "user")
        text = json.dumps(self.config.answer(name, user))
        reply = {"id": "x", "object": "chat.completion", "model": payload["model"],
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": len(body) // 4, "completion_tokens": len(text) // 4}}
        if await self.send(writer, 200, json.dumps(reply).encode()):
            self.stats.good[key] += 1
            self.note("g", key)
            return True
        return False

    async def misbehave(self, kind: str, writer: asyncio.StreamWriter) -> bool:
        if kind in ("stall", "half_stall") or kind in ("reset", "half"):
            if kind.startswith("half"):
                data = self.head(200, 400) + b'{"id": "x", "object": "chat.completion", "choi'
                writer.write(data)
                await _drain(writer)
            if kind.endswith("stall"):
                await asyncio.sleep(self.config.stall_s)
            if kind == "reset":
                sock = writer.get_extra_info("socket")
                if sock is not None:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return False
        if kind == "throttle":
            return await self.send(writer, 429, b'{"error": {"message": "slow down"}}',
                                   {"retry-after": self.config.retry_after})
        if kind == "error":
            return await self.send(writer, 500, b'{"error": {"message": "internal error"}}')
        if kind == "html":
            return await self.send(writer, 200, b"<html><body><h1>502 Bad Gateway</h1></body></html>",
                                   content_type="text/html")
        return await self.send(writer, 200, b"{not json at all", content_type="application/json")

    @staticmethod
    def head(status: int, length: int, headers: dict | None = None, content_type: str = "application/json") -> bytes:
        lines = [f"HTTP/1.1 {status} X", f"content-type: {content_type}", f"content-length: {length}"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    async def send(self, writer: asyncio.StreamWriter, status: int, data: bytes, headers: dict | None = None,
                   content_type: str = "application/json") -> bool:
        writer.write(self.head(status, len(data), headers, content_type) + data)
        return await _drain(writer)

    async def serve(self, port: int, ready: Callable[[int], None]) -> None:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", port, backlog=1024, reuse_address=True)
        ready(self.server.sockets[0].getsockname()[1])
        async with self.server:
            await self.server.serve_forever()


def read_log(path: str) -> Stats:
    """The counts of a server's log (requests and good answers per identity); empty when absent."""
    stats = Stats()
    if os.path.exists(path):
        with open(path, encoding="ascii") as f:
            for line in f:
                what, _, key = line.strip().partition(" ")
                if key:
                    (stats.good if what == "g" else stats.requests)[key] += 1
    return stats


async def _drain(writer: asyncio.StreamWriter) -> bool:
    try:
        await writer.drain()
        return True
    except (ConnectionError, RuntimeError):
        return False


@dataclass
class Running:
    """A server started in a thread: its URL, counts and configuration, and how to stop it."""

    url: str
    server: FaultyServer
    loop: asyncio.AbstractEventLoop
    thread: threading.Thread

    @property
    def stats(self) -> Stats:
        return self.server.stats

    def stop(self) -> None:
        def close() -> None:
            if self.server.server is not None:
                self.server.server.close()
            for task in asyncio.all_tasks(self.loop):
                task.cancel()

        self.loop.call_soon_threadsafe(close)
        self.thread.join(timeout=10)


def start(config: Config | None = None, port: int = 0) -> Running:
    """A faulty server in a daemon thread on 127.0.0.1 (``port`` 0: any free one)."""
    server = FaultyServer(config or Config())
    loop = asyncio.new_event_loop()
    got: dict[str, int] = {}
    ready = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)

        def on_ready(p: int) -> None:
            got["port"] = p
            ready.set()

        try:
            loop.run_until_complete(server.serve(port, on_ready))
        except (asyncio.CancelledError, RuntimeError):
            pass
        finally:
            loop.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    if not ready.wait(10):
        raise RuntimeError("the faulty server did not start")
    return Running(f"http://127.0.0.1:{got['port']}", server, loop, thread)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fault-rate", type=float, default=0.1)
    parser.add_argument("--stall", type=float, default=4.0)
    parser.add_argument("--idle", type=float, default=3.0)
    parser.add_argument("--log", default=None)
    args = parser.parse_args(argv)
    server = FaultyServer(Config(seed=args.seed, fault_rate=args.fault_rate, stall_s=args.stall, idle_s=args.idle,
                                 log=args.log))

    def ready(port: int) -> None:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(f"http://127.0.0.1:{port}")
        os.replace(args.port_file + ".tmp", args.port_file)

    asyncio.run(server.serve(args.port, ready))


if __name__ == "__main__":
    main()
