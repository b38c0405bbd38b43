"""Records through one allow-listed tool of a stdio MCP server (the official ``mcp`` SDK).

``McpSource(["python", "server.py"], tool="get_order")`` starts the server once (on the
first lookup), lists its tools, and answers ``lookup("ORD-1042", "status")`` by calling
``get_order`` and reading ``/status`` from the tool's result (its structured content, or
its text parsed as JSON). The tool's arguments come from ``arguments`` (``{"order_id":
"{entity}"}``) or, when not given, from its input schema: an ``entity`` property, else its
one required property, takes the entity; an ``attribute`` property takes the attribute.

Read-only by construction: the only tool this class calls is ``tool``, which must be in
``allowed_tools``; every call is checked against that list again before it is sent; and the
tool is called only when it declares itself read-only (MCP tool annotation ``readOnlyHint:
true``), or when the user names it safe (``safe=True``; ``#safe`` at the end of an ``mcp:``
record-source string) because they know it only reads. A tool whose annotations say it
writes (``readOnlyHint: false`` or ``destructiveHint: true``) is refused even when named safe.
The server's stderr is kept (its tail, redacted like every other text
(:func:`ragmeter.core.secrets.redact`), goes into the reason when it fails to start).
Every lookup is bounded by ``timeout_s``, the start by ``start_timeout_s``; a server that
dies, hangs, prints what is not JSON-RPC or answers with an error gives cannot-verify, never
a crash; its process group (what it spawned, too) is stopped when the source closes
(:mod:`ragmeter.records.mcp_stdio`). Needs ``pip install 'ragmeter[records]'``.

The command line is part of the source's identity (provenance, cache keys): give secrets
through ``env`` (added to the SDK's minimal environment: HOME, PATH, SHELL, TERM, USER,
LOGNAME), never as arguments. Call :meth:`McpSource.start` (or ``RecordLookup.prepare``)
before timed lookups, so that the server's start-up is not counted against one lookup.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import shlex
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.core.errors import InvalidParameterError
from ragmeter.core.secrets import redact
from ragmeter.records.mcp_stdio import Garbage, stdio_transport
from ragmeter.records.pointer import check_pointer, record_from_json, resolve
from ragmeter.records.types import (
    CannotVerify,
    CannotVerifyKind,
    LookupOutcome,
    RecordValue,
)

INSTALL = "pip install 'ragmeter[records]'"


class McpSource:
    """Records from one allow-listed tool of a stdio MCP server (see the module docstring)."""

    def __init__(self, command: Sequence[str] | str, *, tool: str, allowed_tools: Sequence[str] | None = None,
                 arguments: Mapping[str, Any] | None = None, pointer: str = "/{attribute}",
                 env: Mapping[str, str] | None = None, cwd: str | None = None, timeout_s: float = 10.0,
                 start_timeout_s: float = 60.0, safe: bool = False) -> None:
        argv = shlex.split(command) if isinstance(command, str) else [str(c) for c in command]
        if not argv:
            raise InvalidParameterError("an MCP record source needs the command that starts the server")
        allowed = tuple(allowed_tools) if allowed_tools is not None else (tool,)
        if tool not in allowed:
            raise InvalidParameterError(f"MCP tool {tool!r} is not in the allow-list {list(allowed)}: ragmeter calls "
                                        f"only tools you allow-list")
        check_pointer(pointer.replace("{attribute}", "x"))
        if timeout_s <= 0 or start_timeout_s <= 0:
            raise InvalidParameterError("timeout_s and start_timeout_s must be > 0")
        if importlib.util.find_spec("mcp") is None:
            raise InvalidParameterError(f"an MCP record source needs the mcp SDK: {INSTALL}")
        self.argv, self.tool, self.allowed_tools = argv, tool, allowed
        self.arguments = dict(arguments) if arguments is not None else None
        self.pointer = pointer
        self.env, self.cwd = dict(env) if env else None, cwd
        self.timeout_s, self.start_timeout_s = timeout_s, start_timeout_s
        self.safe = safe  # the user vouches that the tool only reads, though it may not say so
        self._identity = (f"mcp:{shlex.join(argv)}#{tool}" + (f"#{pointer}" if pointer != "/{attribute}" else "")
                          + ("#safe" if safe else ""))
        self._session: Any = None
        self._runner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._ready: asyncio.Future[None] | None = None
        self._started_at = 0.0
        self._start_lock: asyncio.Lock | None = None
        self._failed: CannotVerify | None = None
        self._tool_schema: dict[str, Any] = {}
        self._errlog: Any = None
        self._garbage = Garbage()
        self._documents: dict[str, Any] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self.calls: list[str] = []  # the tool names this source sent, in order (for audits and tests)

    @property
    def identity(self) -> str:
        return self._identity

    # lifecycle
    async def start(self) -> CannotVerify | None:
        """Start the server and check the tool (the first lookup does this too); None when
        ready, else why it cannot be used. Bounded by ``start_timeout_s``."""
        return await self._ensure_started()

    async def _ensure_started(self) -> CannotVerify | None:
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._session is not None or self._failed is not None:
                return self._failed
            loop = asyncio.get_running_loop()
            if self._ready is None:  # a lookup cancelled while waiting leaves the start running: wait on it again
                import_sdk()  # seconds on a cold start: not counted against the server's start
                self._ready = loop.create_future()
                self._stop = asyncio.Event()
                self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115  (closed in aclose)
                self._garbage = Garbage()
                self._started_at = loop.time()
                self._runner = asyncio.create_task(self._run(self._ready, self._stop))
            left = self.start_timeout_s - (loop.time() - self._started_at)
            try:
                await asyncio.wait_for(asyncio.shield(self._ready), max(left, 0.001))
            except _Refused as exc:
                self._failed = CannotVerify(f"{self._identity}: {exc}", "refused")
                await self._shutdown()
            except asyncio.TimeoutError:
                self._failed = CannotVerify(f"{self._identity}: the server did not start within "
                                            f"{self.start_timeout_s:g} s{self._server_said()}", "error")
                await self._shutdown(grace_s=0.0)
            except Exception as exc:  # noqa: BLE001  (the server could not be started or initialised)
                self._failed = CannotVerify(f"{self._identity}: the server could not be started "
                                            f"({_describe(exc)}){self._server_said()}", "error")
                await self._shutdown(grace_s=0.0)
            return self._failed

    async def _run(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        from mcp import ClientSession

        try:
            async with stdio_transport(self.argv, env=self.env, cwd=self.cwd, errlog=self._errlog,
                                       garbage=self._garbage) as (read, write), \
                    ClientSession(read, write, read_timeout_seconds=self.start_timeout_s) as session:
                await session.initialize()
                listing = await session.list_tools()
                problem = self._check_tool({t.name: t for t in listing.tools})
                if problem is not None:
                    if not ready.done():
                        ready.set_exception(_Refused(problem))
                    return
                self._session = session
                if not ready.done():
                    ready.set_result(None)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(repr(exc)))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._session = None
            started = ready.done() and not ready.cancelled() and ready.exception() is None
            if started and not stop.is_set() and self._failed is None:  # the server went away mid-run
                self._failed = CannotVerify(f"{self._identity}: the server exited{self._server_said()}", "error")

    def _check_tool(self, tools: Mapping[str, Any]) -> str | None:
        found = tools.get(self.tool)
        if found is None:
            return f"the server offers no tool {self.tool!r} (it offers: {', '.join(sorted(tools)) or 'none'})"
        notes = getattr(found, "annotations", None)
        if notes is not None and (getattr(notes, "read_only_hint", None) is False
                                  or getattr(notes, "destructive_hint", None) is True):
            return f"tool {self.tool!r} declares that it changes data (readOnlyHint false or destructiveHint true)"
        if not self.safe and (notes is None or getattr(notes, "read_only_hint", None) is not True):
            return (f"tool {self.tool!r} does not declare itself read-only (MCP tool annotation readOnlyHint: true), "
                    f"so it is not called; if you know it only reads, name it safe: end the record source with "
                    f"#safe (mcp:...#{self.tool}#safe), or McpSource(..., safe=True)")
        self._tool_schema = dict(getattr(found, "input_schema", None) or {})
        return None

    def _server_said(self) -> str:
        """What the server wrote that explains a failure: the first stdout line that was not
        JSON-RPC, and the tail of its stderr, redacted (it may hold TOKEN=... lines)."""
        said = self._garbage.describe()
        if self._errlog is not None:
            try:
                self._errlog.flush()
                self._errlog.seek(0)
                tail = self._errlog.read()[-400:].strip()
            except (OSError, ValueError):
                tail = ""
            if tail:
                said += f"; server stderr: {tail}"
        return redact(said)

    async def _shutdown(self, grace_s: float = 2.0) -> None:
        self._garbage.grace_s = grace_s
        if self._stop is not None:
            self._stop.set()
        runner, self._runner = self._runner, None
        if runner is not None:
            if self._session is None and not runner.done():
                runner.cancel()  # still starting: nothing to close gracefully
            done, _ = await asyncio.wait({runner}, timeout=grace_s + 5.0)
            if not done:  # a server that will not stop must not stop the run
                runner.cancel()
                await asyncio.wait({runner}, timeout=5.0)
            if runner.done() and not runner.cancelled():
                runner.exception()  # retrieved: its reason is already in self._failed
        ready = self._ready
        if ready is not None and ready.done() and not ready.cancelled():
            ready.exception()  # likewise
        self._session = None

    async def aclose(self) -> None:
        await self._shutdown()
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None
        self._failed, self._start_lock, self._stop, self._ready = None, None, None, None
        self._documents.clear()
        self._locks.clear()

    # lookups
    def arguments_for(self, entity: str, attribute: str) -> dict[str, Any] | CannotVerify:
        """The tool arguments of one lookup (``{entity}`` and ``{attribute}`` filled in)."""
        template = self._template()
        if isinstance(template, CannotVerify):
            return template
        return {k: (v.replace("{entity}", entity).replace("{attribute}", attribute) if isinstance(v, str) else v)
                for k, v in template.items()}

    def _template(self) -> dict[str, Any] | CannotVerify:
        if self.arguments is not None:
            return self.arguments
        props = self._tool_schema.get("properties") or {}
        required = list(self._tool_schema.get("required") or [])
        out: dict[str, Any] = {}
        if "entity" in props:
            out["entity"] = "{entity}"
        elif len(required) == 1:
            out[required[0]] = "{entity}"
        elif len(props) == 1:
            out[next(iter(props))] = "{entity}"
        else:
            return CannotVerify(f"{self._identity}: cannot tell which argument of {self.tool!r} takes the entity "
                                f"(its arguments: {', '.join(props) or 'none'}); give arguments={{...: "
                                f"'{{entity}}'}}", "error")
        if "attribute" in props:
            out["attribute"] = "{attribute}"
        return out

    async def lookup(self, entity: str, attribute: str) -> LookupOutcome:
        failed = await self._ensure_started()
        if failed is not None:
            return failed
        template = self._template()
        if isinstance(template, CannotVerify):
            return template
        arguments = self.arguments_for(entity, attribute)
        if isinstance(arguments, CannotVerify):
            return arguments
        key = json.dumps(arguments, sort_keys=True, default=str)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:  # one call per distinct arguments: the attributes of one entity share it
            if key in self._documents:
                document = self._documents[key]
            else:
                document = await self._call(self.tool, arguments)
                if not isinstance(document, CannotVerify) or document.final:
                    self._documents[key] = document
        if isinstance(document, CannotVerify):
            return document
        if isinstance(document, _Text):
            if any(isinstance(v, str) and "{attribute}" in v for v in template.values()):
                return RecordValue(document.text.strip())  # a tool asked for one attribute answers with its value
            return CannotVerify(f"{self._identity}: the tool answered with text that is not JSON "
                                f"({document.text[:80]!r})", "error")
        pointer = self.pointer.replace("{attribute}", attribute.replace("~", "~0").replace("/", "~1"))
        return record_from_json(resolve(document, pointer), entity=entity, attribute=attribute,
                                where=f"{self.tool}({_short(arguments)})")

    async def _call(self, name: str, arguments: dict[str, Any]) -> Any:
        if name not in self.allowed_tools:  # defence in depth: the allow-list is checked on every call
            return CannotVerify(f"MCP tool {name!r} is not allow-listed; not called", "refused")
        session = self._session
        if session is None:
            return CannotVerify(f"{self._identity}: the server is not running", "error")
        self.calls.append(name)
        try:
            result = await session.call_tool(name, arguments, read_timeout_seconds=self.timeout_s)
        except asyncio.TimeoutError:
            return CannotVerify(redact(f"{self._identity}: {name} timed out after {self.timeout_s:g} s"
                                       f"{self._garbage.describe()}"), "timeout")
        except Exception as exc:  # noqa: BLE001  (a failed call is one unverifiable lookup)
            timed_out = "timed out" in str(exc).lower() or "timeout" in type(exc).__name__.lower()
            kind: CannotVerifyKind = "timeout" if timed_out else "error"
            return CannotVerify(redact(f"{self._identity}: {name}({_short(arguments)}) failed: {_describe(exc)}"
                                       f"{self._garbage.describe()}"), kind)
        text = "".join(getattr(block, "text", "") for block in getattr(result, "content", []) or [])
        if getattr(result, "is_error", False):
            return CannotVerify(redact(f"{self._identity}: {name}({_short(arguments)}) answered with an error: "
                                       f"{text[:200]}"), "error")
        structured = getattr(result, "structured_content", None)
        if structured is not None:
            if isinstance(structured, dict) and set(structured) == {"result"}:
                return structured["result"]  # the SDK's wrapping of a non-object return value
            return structured
        try:
            return json.loads(text) if text.strip() else None
        except ValueError:
            return _Text(text)


def import_sdk() -> None:
    """Import the parts of the mcp SDK a session needs (once per process)."""
    import anyio  # noqa: F401
    import mcp  # noqa: F401
    import mcp.client.stdio  # noqa: F401
    import mcp.shared.message  # noqa: F401
    import mcp_types  # noqa: F401


class _Text:
    """A tool result that is plain text, not JSON."""

    def __init__(self, text: str) -> None:
        self.text = text


class _Refused(Exception):
    pass


def _describe(exc: BaseException) -> str:
    inner = getattr(exc, "exceptions", None)  # anyio's task groups wrap the cause in an exception group
    while isinstance(inner, (list, tuple)) and inner and isinstance(inner[0], BaseException):
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def _short(arguments: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in arguments.items())[:120]
