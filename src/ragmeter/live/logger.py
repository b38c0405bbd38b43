"""``ragmeter.log_request(...)``: the app-side hook that appends one request per line.

Thread-safe, bounded, and it never raises into the app: a full queue drops the record and
counts it, a record that cannot be written is counted as an error. A background thread
writes each record as one ``write`` of one line to a file opened in append mode, so
``ragmeter watch`` never sees half a record (it reads complete lines only).
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

DEFAULT_PATH_ENV = "RAGMETER_LOG"


class RequestLogger:
    def __init__(self, path: str, *, max_queue: int = 10_000) -> None:
        self.path = path
        self.dropped = 0
        self.errors = 0
        self.written = 0
        self._queue: queue.Queue = queue.Queue(maxsize=max_queue)
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="ragmeter-log-writer", daemon=True)
        self._thread.start()

    def log(self, question: Any, retrieved: Any = None, answer: Any = None, *, request_id: str | None = None,
            context: Any = None, **metadata: Any) -> bool:
        """Queue one request; False (never an exception) when it had to be dropped."""
        def record() -> dict[str, Any]:
            out = {"request_id": request_id or uuid.uuid4().hex, "ts": time.time(), "question": question,
                   "retrieved": _chunks(retrieved), "answer": answer}
            if context is not None:
                out["context"] = list(context)
            if metadata:
                out["metadata"] = metadata
            return out

        return self._put(record)

    def feedback(self, request_id: str, value: Any) -> bool:
        """Queue user feedback on an earlier request (1 good, -1 bad, or a score); False when dropped."""
        return self._put(lambda: {"request_id": request_id, "ts": time.time(), "feedback": value})

    def _put(self, record: Callable[[], dict[str, Any]]) -> bool:
        """Queue ``record()`` as one line; a full queue or a record that cannot be written is counted."""
        try:
            self._queue.put_nowait(json.dumps(record(), ensure_ascii=False, default=str) + "\n")
            return True
        except queue.Full:
            with self._lock:
                self.dropped += 1
            return False
        except Exception:  # noqa: BLE001 - the hook must never break the app
            with self._lock:
                self.errors += 1
            return False

    def flush(self, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.005)
        return not self._queue.unfinished_tasks

    def _run(self) -> None:
        while True:
            line = self._queue.get()
            try:
                with open(self.path, "a", encoding="utf-8") as f:
                    f.write(line)
                self.written += 1
            except OSError:
                with self._lock:
                    self.errors += 1
            finally:
                self._queue.task_done()


def _chunks(retrieved: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in retrieved or []:
        if isinstance(item, str):
            out.append({"id": item})
        elif isinstance(item, dict):
            out.append({k: item[k] for k in ("id", "text", "score") if k in item})
        else:  # LangChain Document / LlamaIndex node, duck-typed
            node = getattr(item, "node", item)
            cid = (getattr(node, "node_id", None) or getattr(node, "id", None)
                   or (getattr(node, "metadata", {}) or {}).get("id"))
            text = getattr(node, "text", None) or getattr(node, "page_content", None)
            out.append({"id": str(cid), "text": text})
    return out


_default: RequestLogger | None = None
_default_lock = threading.Lock()


def configure(path: str, *, max_queue: int = 10_000) -> RequestLogger:
    """Set where ``log_request`` writes (default: $RAGMETER_LOG or ragmeter-requests.jsonl)."""
    global _default
    with _default_lock:
        _default = RequestLogger(path, max_queue=max_queue)
        atexit.register(_default.flush)
    return _default


def default_logger() -> RequestLogger:
    with _default_lock:
        if _default is not None:
            return _default
    return configure(os.environ.get(DEFAULT_PATH_ENV, "ragmeter-requests.jsonl"))


def log_request(question: Any, retrieved: Any = None, answer: Any = None, **kwargs: Any) -> bool:
    """Append one production request for ``ragmeter watch``. Never raises."""
    try:
        return default_logger().log(question, retrieved, answer, **kwargs)
    except Exception:  # noqa: BLE001
        return False


def log_feedback(request_id: str, value: Any) -> bool:
    """Append user feedback on the request ``request_id`` (1 good, -1 bad, or a score; the
    watcher joins it to the request). Never raises."""
    try:
        return default_logger().feedback(request_id, value)
    except Exception:  # noqa: BLE001
        return False
