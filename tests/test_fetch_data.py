"""scripts/fetch_data.py: the manifest read as written, plain files and archive members fetched over real
HTTP (a local server laid out as the raw-file host is), sizes checked, Git LFS pointers followed, a
rerun that fetches nothing, and the dry run on the real manifest when ../shared/data is present."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "fetch_data.py"
MANIFEST = ROOT.parent / "shared" / "data" / "SOURCES.files.jsonl"
COMMIT = "19aa27c9da9b7afb843c86ff3999af98d2c7b1f1"


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def host(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A local HTTP server over a folder laid out as /OWNER/REPO/COMMIT/PATH."""
    served = tmp_path / "served"
    served.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(served)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", served
    finally:
        server.shutdown()
        server.server_close()


def publish(served: Path, repo: str, path: str, body: bytes, root: str = "") -> None:
    target = served / root / repo / COMMIT / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(body)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def test_files_and_archive_members_are_fetched_by_commit(host: tuple[str, Path], tmp_path: Path) -> None:
    base, served = host
    publish(served, "acme/logs", "testdata/one.txt", b"--- PASS: TestOne\n")
    publish(served, "acme/runs", "trajs/a.traj.json", b'{"messages": []}')
    publish(
        served,
        "acme/runs",
        "trajs/b.traj.json",
        b"version https://git-lfs.github.com/spec/v1\noid sha256:0\n",
    )
    publish(served, "acme/runs", "trajs/b.traj.json", b'{"messages": [1]}', root="lfs")
    manifest = tmp_path / "SOURCES.files.jsonl"
    rows = [
        {
            "dest": "test_logs/x/one.txt",
            "repo": "acme/logs",
            "commit": COMMIT,
            "path": "testdata/one.txt",
            "license": "MIT",
            "bytes": 18,
        },
        {
            "dest": "train/runs.tar.gz:runs/a.traj.json",
            "repo": "acme/runs",
            "commit": COMMIT,
            "path": "trajs/a.traj.json",
            "license": "MIT",
        },
        {
            "dest": "train/runs.tar.gz:runs/b.traj.json",
            "repo": "acme/runs",
            "commit": COMMIT,
            "path": "trajs/b.traj.json",
            "license": "MIT",
        },
    ]
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = tmp_path / "data"
    args = ["--manifest", str(manifest), "--data", str(data), "--base-url", base, "--lfs-url", base + "/lfs"]
    first = run(*args)
    assert first.returncode == 0, first.stderr
    assert (data / "test_logs/x/one.txt").read_bytes() == b"--- PASS: TestOne\n"
    with tarfile.open(data / "train/runs.tar.gz") as tar:
        assert tar.getnames() == ["runs/a.traj.json", "runs/b.traj.json"]
        member = tar.extractfile("runs/b.traj.json")
        assert (
            member is not None and member.read() == b'{"messages": [1]}'
        )  # the LFS content, not the pointer
    again = run(*args, "--dry-run")
    assert "to fetch: 0 files and 0 archive(s)" in again.stdout


def test_a_wrong_size_or_a_missing_file_fails_and_names_it(host: tuple[str, Path], tmp_path: Path) -> None:
    base, served = host
    publish(served, "acme/logs", "short.txt", b"abc")
    manifest = tmp_path / "m.jsonl"
    rows = [
        {"dest": "a/short.txt", "repo": "acme/logs", "commit": COMMIT, "path": "short.txt", "bytes": 10},
        {"dest": "a/gone.txt", "repo": "acme/logs", "commit": COMMIT, "path": "gone.txt"},
    ]
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run("--manifest", str(manifest), "--data", str(tmp_path / "d"), "--base-url", base)
    assert result.returncode == 1
    assert "a/short.txt: 3 bytes where the manifest says 10" in result.stderr
    assert "a/gone.txt: HTTP Error 404" in result.stderr
    assert not (tmp_path / "d" / "a" / "short.txt").exists()


def test_a_bad_manifest_line_is_named(tmp_path: Path) -> None:
    manifest = tmp_path / "m.jsonl"
    manifest.write_text('{"dest": "a", "repo": "r", "commit": "c", "path": "p"}\n{"dest": "b"}\n')
    result = run("--manifest", str(manifest), "--dry-run")
    assert result.returncode != 0 and "m.jsonl, line 2: not a manifest entry" in result.stderr


@pytest.mark.data
def test_the_dry_run_lists_the_real_manifest(tmp_path: Path) -> None:
    if not MANIFEST.is_file():
        pytest.skip(f"no {MANIFEST}: the data folder beside the clone holds it (see scripts/fetch_data.py)")
    rows = [json.loads(line) for line in MANIFEST.read_text().splitlines() if line.strip()]
    archives = {r["dest"].split(":")[0] for r in rows if ":" in r["dest"]}
    result = run("--manifest", str(MANIFEST), "--data", str(tmp_path / "empty"), "--dry-run")
    assert result.returncode == 0, result.stderr
    plain = len(rows) - sum(1 for r in rows if ":" in r["dest"])
    assert (
        f"{len(rows)} manifest entries; to fetch: {plain} files and {len(archives)} archive(s)"
        in result.stdout
    )
    for archive in archives:
        assert f"  {archive}  <- " in result.stdout


SHIPPED = ROOT / "data" / "manifest.jsonl"


def test_the_shipped_manifest_says_what_a_clone_would_fetch_and_how_big(tmp_path: Path) -> None:
    """From a clone with nothing beside it: the repository's own manifest, every file sized and sourced."""
    rows = [json.loads(line) for line in SHIPPED.read_text().splitlines() if line.strip()]
    assert rows and all({"file", "source", "license", "size"} <= row.keys() for row in rows)
    assert all(isinstance(row["size"], int) and len(row["source"]["commit"]) == 40 for row in rows)
    archives = {row["file"] for row in rows if "member" in row}
    result = run("--data", str(tmp_path / "empty"), "--dry-run")  # the default manifest: data/manifest.jsonl
    assert result.returncode == 0, result.stderr
    megabytes = sum(row["size"] for row in rows) / 1e6
    assert (
        f"{len(rows)} manifest entries; to fetch: {len(rows) - sum('member' in r for r in rows)} files"
        in result.stdout
    )
    assert f"({megabytes:,.1f} MB)" in result.stdout
    for archive in archives:
        assert f"  {archive}  <- " in result.stdout
    assert "(not fetched) test_logs/agent-observations/observations.jsonl" in result.stdout


def test_the_shipped_format_is_fetched_by_commit(host: tuple[str, Path], tmp_path: Path) -> None:
    base, served = host
    publish(served, "acme/logs", "testdata/one.txt", b"--- PASS: TestOne\n")
    publish(served, "acme/runs", "trajs/a.traj.json", b'{"messages": []}')
    manifest = tmp_path / "manifest.jsonl"
    rows = [
        {"file": "test_logs/x/one.txt", "source": {"repo": "acme/logs", "commit": COMMIT, "path": "testdata/one.txt"},
         "license": "MIT", "size": 18},
        {"file": "train/runs.tar.gz", "member": "runs/a.traj.json",
         "source": {"repo": "acme/runs", "commit": COMMIT, "path": "trajs/a.traj.json"}, "license": "MIT", "size": 16},
    ]  # fmt: skip
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = tmp_path / "data"
    result = run("--manifest", str(manifest), "--data", str(data), "--base-url", base)
    assert result.returncode == 0, result.stderr
    assert (data / "test_logs/x/one.txt").read_bytes() == b"--- PASS: TestOne\n"
    with tarfile.open(data / "train/runs.tar.gz") as tar:
        assert tar.getnames() == ["runs/a.traj.json"]


@pytest.mark.data
def test_the_shipped_manifest_is_what_the_data_folder_gives() -> None:
    if not MANIFEST.is_file():
        pytest.skip(f"no {MANIFEST}: the data folder beside the clone holds it (see scripts/fetch_data.py)")
    result = run("--write-manifest", str(MANIFEST.parent))
    assert result.returncode == 0, result.stderr
    assert result.stdout == SHIPPED.read_text()
