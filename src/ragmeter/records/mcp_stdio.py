"""The stdio transport of an MCP record server: bounded lines, quiet about garbage, and the
whole process group stopped at the end.

The ``mcp`` SDK's own ``stdio_client`` logs a traceback for every stdout line that is not a
JSON-RPC message (a server that prints a banner or debug output gives one per line), keeps
any line however long, and kills the server's process group only when the server itself does
not exit: a grandchild it spawned outlives the run, and holds the stdout pipe open (the
SDK then waits for that pipe). This transport, for the SDK's ``ClientSession``:

- starts the server in a session of its own (``start_new_session``: its process group);
- reads stdout line by line; a line that is not a JSON-RPC message, or longer than
  :data:`MAX_LINE` bytes, is dropped and counted (``Garbage``: how many, the first one with
  its line number), for the one reason a failed start or call gives;
- at the end closes stdin, gives the server ``Garbage.grace_s`` to exit, then sends SIGTERM and, a
  second later, SIGKILL to its process group, also when the server itself has exited (what
  it spawned goes too). Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_LINE = 16_000_000  # bytes of one JSON-RPC message from the server


@dataclass
class Garbage:
    """Stdout lines that were not JSON-RPC messages; and how long the server is given to exit
    when the transport closes (set to 0 for a server that never started: nothing to flush)."""

    lines: int = 0
    first: str = ""
    first_line: int = 0
    grace_s: float = 2.0

    def describe(self) -> str:
        if not self.lines:
            return ""
        more = f" ({self.lines} such lines)" if self.lines > 1 else ""
        return (f"; stdout line {self.first_line} is not a JSON-RPC message: {self.first!r}{more} (an MCP server "
                f"writes only protocol messages to stdout; log to stderr)")


@contextlib.asynccontextmanager
async def stdio_transport(argv: Sequence[str], *, env: Mapping[str, str] | None, cwd: str | None, errlog: Any,
                          garbage: Garbage) -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) for ``mcp.ClientSession``, talking to ``argv``'s stdio."""
    import anyio
    import mcp_types
    from mcp.client.stdio import get_default_environment
    from mcp.shared.message import SessionMessage

    process = await anyio.open_process(list(argv), env={**get_default_environment(), **(env or {})}, cwd=cwd,
                                       stderr=errlog, start_new_session=True)
    to_session, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, from_session = anyio.create_memory_object_stream[Any](0)

    async def reader() -> None:
        buffer, number, skipping = bytearray(), 0, False
        async with to_session:
            with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError,
                                     OSError):
                async for chunk in process.stdout:  # type: ignore[union-attr]
                    buffer += chunk
                    while True:
                        end = buffer.find(b"\n")
                        if end < 0:
                            if len(buffer) > MAX_LINE:  # the rest of this line is dropped as it comes
                                if not skipping:
                                    number += 1
                                    _count(garbage, number, bytes(buffer[:80]))
                                buffer.clear()
                                skipping = True
                            break
                        line, buffer = bytes(buffer[:end]), buffer[end + 1:]
                        if skipping:
                            skipping = False
                            continue
                        number += 1
                        if not line.strip():
                            continue
                        try:
                            message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                        except ValueError:
                            _count(garbage, number, line[:80])
                            continue
                        await to_session.send(SessionMessage(message))

    async def writer() -> None:
        async with from_session:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async for item in from_session:
                    text = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((text + "\n").encode())  # type: ignore[union-attr]

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(reader)
            tasks.start_soon(writer)
            try:
                yield read_stream, write_stream
            finally:
                tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await _stop(process, garbage.grace_s)
            for stream in (read_stream, write_stream, to_session, from_session):
                await stream.aclose()


def _count(garbage: Garbage, number: int, head: bytes) -> None:
    garbage.lines += 1
    if garbage.lines == 1:
        garbage.first, garbage.first_line = head.decode("utf-8", "replace"), number


async def _stop(process: Any, grace_s: float) -> None:
    """Close stdin, wait ``grace_s`` for the server, then TERM and KILL its process group."""
    import anyio

    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    await _exited(process, grace_s)
    for sig, wait in ((signal.SIGTERM, 1.0), (signal.SIGKILL, 1.0)):
        if not _signal_group(process.pid, sig) and process.returncode is not None:
            break  # no member of the group is left
        await _exited(process, wait)
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await pipe.aclose()
    with contextlib.suppress(ProcessLookupError, OSError):
        if process.returncode is None:
            process.kill()


async def _exited(process: Any, wait_s: float) -> bool:
    import anyio

    with anyio.move_on_after(wait_s):
        while process.returncode is None:
            await anyio.sleep(0.01)
    return process.returncode is not None


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to the process group ``pgid`` (the server's pid: it leads its session);
    False when no process is left in it."""
    if sys.platform == "win32":  # pragma: no cover  (no process groups: the SDK's job objects would be needed)
        return False
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False
    return True
