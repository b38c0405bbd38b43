"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions and embeddings and
the Anthropic Messages wire protocols, for judge and embedder tests. It answers with ``responder(payload)`` unless an
action queued in ``state.actions`` says otherwise (status, Retry-After, delay, raw body,
reply content, truncation, content type). It records every request (with its arrival and
finish times, for the kill -9 loop) and the most requests in flight."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class ServerState:
    responder: Callable[[str, dict], Any]
    actions: deque = field(default_factory=deque)
    requests: list = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    delay: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def queue(self, *actions: dict) -> None:
        self.actions.extend(actions)

    @property
    def count(self) -> int:
        return len(self.requests)


def _user_text(payload: dict) -> str:
    return "\n".join(m["content"] for m in payload.get("messages", []) if m["role"] == "user"
                     and isinstance(m["content"], str))


class Handler(BaseHTTPRequestHandler):
    state: ServerState

    def log_message(self, *args) -> None:  # keep test output clean
        return

    def do_POST(self) -> None:
        st = self.state
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        payload = json.loads(body)
        record = {"path": self.path, "payload": payload, "headers": dict(self.headers), "start": time.monotonic(),
                  "wall": time.time(),
                  "end": None}
        with st.lock:
            st.requests.append(record)
            action = st.actions.popleft() if st.actions else {}
            st.in_flight += 1
            st.max_in_flight = max(st.max_in_flight, st.in_flight)
        try:
            time.sleep(action.get("delay", st.delay))
            if action.get("reject_schema") and payload.get("response_format", {}).get("type") == "json_schema":
                return self._send(400, {"error": {"message": "response_format json_schema is not supported"}})
            if "status" in action:
                return self._send(action["status"], {"error": {"message": "scripted failure"}}, action.get("headers"))
            if "body" in action:
                return self._send(action.get("body_status", 200), action["body"], action.get("headers"),
                                  action.get("content_type", "application/json"))
            path = self.path.split("?", 1)[0]  # Azure's api-version travels in the query
            if path.endswith("/embeddings"):  # letter counts; each batch answered in reverse order
                data = [{"object": "embedding", "index": i, "embedding": _letters(text)}
                        for i, text in enumerate(payload["input"])][::-1]
                return self._send(200, {"object": "list", "data": data, "model": payload["model"],
                                        "usage": {"prompt_tokens": 1, "total_tokens": 1}})
            answer = action["content"] if "content" in action else st.responder(_user_text(payload), payload)
            text = answer if isinstance(answer, str) else json.dumps(answer)
            truncated = action.get("truncate", False)
            if path.endswith("/chat/completions"):
                choice = {"index": 0, "message": {"role": "assistant", "content": text},
                          "finish_reason": "length" if truncated else "stop"}
                if payload.get("logprobs") and "score_probs" in action:
                    choice["logprobs"] = {"content": _score_logprobs(text, action["score_probs"])}
                reply = {"id": "x", "object": "chat.completion", "model": payload["model"],
                         "choices": [choice],
                         "usage": {"prompt_tokens": len(json.dumps(payload)) // 4, "completion_tokens": len(text) // 4}}
            elif path.endswith("/v1/messages"):
                tool = payload["tools"][0]["name"]
                content = ([{"type": "tool_use", "id": "t1", "name": tool, "input": answer}]
                           if not isinstance(answer, str) else [{"type": "text", "text": answer}])
                reply = {"id": "m", "type": "message", "role": "assistant", "content": content,
                         "stop_reason": "max_tokens" if truncated else "tool_use",
                         "usage": {"input_tokens": len(json.dumps(payload)) // 4, "output_tokens": len(text) // 4}}
            else:
                return self._send(404, {"error": "no such path"})
            self._send(200, reply)
        finally:
            with st.lock:
                st.in_flight -= 1
                record["end"] = time.monotonic()

    def _send(self, status: int, body: Any, headers: dict | None = None,
              content_type: str = "application/json") -> None:
        data = (body if isinstance(body, bytes) else body.encode() if isinstance(body, str)
                else json.dumps(body).encode())
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


def _letters(text: str) -> list[float]:
    """A deterministic stand-in embedding model: letter counts (texts sharing letters are similar)."""
    return [float(text.lower().count(c)) + 0.01 for c in "abcdefghijklmnopqrstuvwxyz"]


def _score_logprobs(text: str, probs: dict) -> list:
    """OpenAI-style token logprobs for a reply holding '"score": N', with alternatives for N."""
    import math
    import re

    m = re.search(r'"score"\s*:\s*', text)
    digit = text[m.end()]
    top = [{"token": k, "logprob": math.log(v)} for k, v in probs.items()]
    return [{"token": text[:m.end()], "logprob": 0.0, "top_logprobs": []},
            {"token": digit, "logprob": math.log(probs.get(digit, 1e-6)), "top_logprobs": top},
            {"token": text[m.end() + 1:], "logprob": 0.0, "top_logprobs": []}]


def start(responder: Callable[[str, dict], Any]) -> tuple[ThreadingHTTPServer, ServerState]:
    state = ServerState(responder=responder)
    handler = type("BoundHandler", (Handler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    return server, state


if __name__ == "__main__":  # run standalone: python tests/judge_server.py PORT_FILE
    import sys

    def echo(text: str, payload: dict) -> Any:
        return {"verdicts": []}

    srv, st = start(echo)
    open(sys.argv[1], "w").write(st.url)
    srv.serve_forever()
