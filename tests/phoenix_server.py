"""A real Phoenix server (``arize-phoenix`` from PyPI) on 127.0.0.1, for the tests that write to it
and read back through Phoenix's own client.

Phoenix pins many packages, so it lives in a virtual environment of its own (``.ci/run`` makes
``.venv-phoenix``); ``RAGMETER_PHOENIX`` names its Python. Without it the tests skip, except under
``RAGMETER_CI=1``, where they fail. Its telemetry is off (``PHOENIX_TELEMETRY_ENABLED=false``: the
FullStory and Scarf pixels), it fetches nothing from the internet
(``PHOENIX_ALLOW_EXTERNAL_RESOURCES=false``), and its gRPC receiver, which binds every interface,
is not started (the launcher below): it listens on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

ENV = "RAGMETER_PHOENIX"
#: the environment a Phoenix server runs with here: no telemetry, no external resources
QUIET = {"PHOENIX_TELEMETRY_ENABLED": "false", "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
         "PHOENIX_HOST": "127.0.0.1"}
#: ``phoenix serve`` with the gRPC receiver kept off (it would bind [::], every interface)
LAUNCH = ("import sys, phoenix.server.grpc_server as g\n"
          "init = g.GrpcServer.__init__\n"
          "g.GrpcServer.__init__ = lambda self, *a, **k: init(self, *a, **{**k, 'disabled': True})\n"
          "from phoenix.server.main import main\n"
          "sys.argv = ['phoenix', 'serve']\n"
          "main()\n")


def phoenix_python() -> str:
    """The Python of the environment that has ``arize-phoenix`` (skip, or fail in CI, without it)."""
    path = os.environ.get(ENV)
    if path and Path(path).exists():
        return path
    why = f"no Phoenix: set {ENV} to the Python of a virtual environment with arize-phoenix (.ci/run makes one)"
    if os.environ.get("RAGMETER_CI") == "1":
        pytest.fail(why)
    pytest.skip(why)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Phoenix:
    """A running server: ``url``, ``run_client(code)`` (Phoenix's client, in Phoenix's environment)."""

    def __init__(self, workdir: Path) -> None:
        self.python = phoenix_python()
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))}, **QUIET,
                    "PHOENIX_PORT": str(self.port), "PHOENIX_WORKING_DIR": str(workdir), "NO_PROXY": "127.0.0.1"}
        self.log = open(workdir / "phoenix.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([self.python, "-c", LAUNCH], env=self.env, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"Phoenix exited: {(workdir / 'phoenix.log').read_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.stop()
        raise AssertionError("Phoenix did not answer within 180 s")

    def run_client(self, code: str, **values: Any) -> Any:
        """Run ``code`` with Phoenix's own client (``client``) in Phoenix's environment; what it
        assigns to ``out`` comes back (as JSON)."""
        prelude = ("import json, sys\nfrom phoenix.client import Client\n"
                   f"client = Client(base_url={self.url!r})\n"
                   f"values = json.loads({json.dumps(json.dumps(values))})\n")
        done = subprocess.run([self.python, "-c", prelude + code + "\nprint(json.dumps(out, default=str))"],
                              env=self.env, capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise AssertionError(done.stderr[-3000:])
        return json.loads(done.stdout.strip().splitlines()[-1])

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()
