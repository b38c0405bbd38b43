"""The pictures of the manual, made afresh at every build from the bundled sample
(``examples/warranty/``), so that they show what this version prints:

- ``images/report.png``: the HTML report (``ragmeter report``) of the label metrics on the sample;
- ``images/label.png``: the labeling page (``ragmeter label``) on the sample's questions;
- ``images/turns.svg``: the ``ragmeter turns --svg`` chart of the sample's conversations.

Headless chromium takes the two screenshots (``apt-get install chromium``), started with the
flags that keep it off the network: no background or component updates, no sync, no pings, a
proxy that goes nowhere, and every host name but 127.0.0.1 unresolvable. Without chromium the
build stops and says so, unless ``RAGMETER_DOCS_PICTURES=skip`` (then the pictures are blank).

Run by mkdocs-gen-files (``mkdocs.yml``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "warranty"
SAMPLE_REL = Path("examples") / "warranty"  # under the build's temporary folder
SIZE = (1200, 800)

# Chromium, headless and kept off the network (the HTML-report and labeling-page tests use the same).
OFFLINE_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions", "--disable-domain-reliability",
    "--disable-client-side-phishing-detection", "--metrics-recording-only", "--no-pings",
    "--hide-scrollbars", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=127.0.0.1",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
)


def browser() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def screenshot(url: str, out: Path, work: Path, *, wait_ms: int = 3000) -> None:
    """A PNG of ``url`` at SIZE, after ``wait_ms`` of the page's own time (its scripts run)."""
    exe = browser()
    assert exe is not None
    cmd = [exe, *OFFLINE_FLAGS, f"--user-data-dir={work / 'profile'}", f"--window-size={SIZE[0]},{SIZE[1]}",
           f"--virtual-time-budget={wait_ms}", f"--screenshot={out}", url]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"chromium made no screenshot of {url}: {done.stderr[-2000:]}")


def cli(*args: str) -> str:
    """``ragmeter ARGS`` in this process; its output (a failure stops the build)."""
    from typer.testing import CliRunner

    from ragmeter.cli.main import app

    out = CliRunner().invoke(app, list(args), catch_exceptions=False)
    if out.exit_code != 0:
        raise RuntimeError(f"ragmeter {' '.join(args)} exited {out.exit_code}: {out.output}")
    return out.stdout


def run_of(work: Path, name: str, *args: str) -> Path:
    """The run directory ``ragmeter eval ARGS --name NAME`` writes under ``work/runs``."""
    cli("eval", *args, "--name", name, "--runs-dir", "runs", "--judge", "none")
    (run,) = Path("runs").glob(f"*-{name}")
    return run


def report_picture(work: Path, out: Path) -> None:
    run = run_of(work, "warranty", str(SAMPLE_REL / "dataset.jsonl"), "--corpus", str(SAMPLE_REL / "corpus.jsonl"))
    page = work / "report.html"
    cli("report", str(run), "--html", str(page))
    screenshot(page.as_uri(), out, work)


def label_picture(work: Path, out: Path) -> None:
    from ragmeter.io import load_corpus, load_dataset
    from ragmeter.label.server import LabelApp, LabelServer
    from ragmeter.label.store import LabelStore
    from ragmeter.label.tasks import build_tasks

    data = load_dataset(SAMPLE_REL / "dataset.jsonl", corpus=SAMPLE_REL / "corpus.jsonl")
    tasks = build_tasks(data.samples, corpus=load_corpus(SAMPLE_REL / "corpus.jsonl"), k=5, embedder=None)
    store = LabelStore(work / "labels.jsonl")
    server = LabelServer(LabelApp(tasks, store, title="dataset.jsonl", rel=1), port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        screenshot(server.url + "?labeler=alice", out, work)
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
        store.close()


def turns_chart(work: Path) -> str:
    run = run_of(work, "conversations", str(SAMPLE_REL / "conversations.jsonl"), "-m", "recall,reciprocal_rank,ndcg")
    svg = work / "turns.svg"
    cli("turns", str(run), "--svg", str(svg))
    return svg.read_text()


def placeholder_png() -> bytes:
    """A blank 1x1 PNG, for a build told to skip the screenshots."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    pixel = zlib.compress(b"\x00\xff")  # one row: no filter, one white grey pixel
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixel) + chunk(b"IEND", b"")


def pictures(work: Path, skip: bool) -> dict[str, bytes]:
    """path under docs/ -> the picture's bytes."""
    made = {"images/turns.svg": turns_chart(work).encode()}
    for name, make in (("report", report_picture), ("label", label_picture)):
        out = work / f"{name}.png"
        if skip:
            out.write_bytes(placeholder_png())
        else:
            make(work, out)
        made[f"images/{name}.png"] = out.read_bytes()
    return made


def main() -> None:
    import mkdocs_gen_files

    skip = os.environ.get("RAGMETER_DOCS_PICTURES") == "skip"
    if browser() is None and not skip:
        raise RuntimeError("the docs' pictures need headless chromium (apt-get install chromium), "
                           "or RAGMETER_DOCS_PICTURES=skip for a build without them")
    here = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="ragmeter-docs-") as tmp:
        work = Path(tmp)
        # the sample copied, its paths relative: the pictures show examples/warranty/..., as a user's would
        shutil.copytree(SAMPLE, work / "examples" / "warranty")
        os.chdir(work)
        try:
            made = pictures(work, skip)
        finally:
            os.chdir(here)
    for path, data in made.items():
        with mkdocs_gen_files.open(path, "wb") as f:
            f.write(data)


if __name__ in ("__main__", "<run_path>"):
    main()
