"""Fetch the public third-party data the README's figures and the data tests use, by commit, into
../shared/data (beside the clone), as the manifest SOURCES.files.jsonl lists it.

    python scripts/fetch_data.py --dry-run                    # what would be fetched, and how much
    python scripts/fetch_data.py                              # everything (~1,080 files)
    python scripts/fetch_data.py --only trajectories/mini-swe-agent,train/mini-swe-agent__gemini-3-pro__303.tar.gz

Each manifest line names a file: `dest` (where it goes under the data folder; `ARCHIVE.tar.gz:MEMBER` is a
member of a gzipped tar the tests read in place), `repo` and `commit` (a public GitHub repository at a
fixed commit), `path` (the file in it), `license`, and for some `bytes` (checked after download). Files
already present are kept (`--force` fetches again), so an interrupted run resumes. A manifest without the
data it describes: pass it with `--manifest`; the project ships none (the data is not ours to copy).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import sys
import tarfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
RAW = "https://raw.githubusercontent.com"
LFS = "https://media.githubusercontent.com/media"
LFS_POINTER = b"version https://git-lfs.github.com/spec/"
NOT_IN_MANIFEST = {
    "test_logs/agent-observations/observations.jsonl": "test runs cut out of agent runs; each line names "
    "its own source (source_repo, source_commit, source_path, message_index): not fetched here, and the "
    "tests that read it skip without it",
}


@dataclass(frozen=True)
class Entry:
    dest: str
    repo: str
    commit: str
    path: str
    license: str
    size: int | None

    @property
    def archive(self) -> str | None:
        """`train/x.tar.gz` for `train/x.tar.gz:member`, else None."""
        return self.dest.split(":", 1)[0] if ":" in self.dest else None

    @property
    def member(self) -> str:
        return self.dest.split(":", 1)[1] if ":" in self.dest else self.dest

    def url(self, base: str = RAW) -> str:
        return f"{base}/{self.repo}/{self.commit}/{urllib.request.quote(self.path)}"


def read_manifest(path: Path) -> list[Entry]:
    """Every line of the manifest; a line that is not one names its number and what it lacks."""
    entries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            entries.append(
                Entry(row["dest"], row["repo"], row["commit"], row["path"], row.get("license", ""), row.get("bytes"))
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise SystemExit(
                f"{path}, line {number}: not a manifest entry ({exc!r}): each line is a JSON object with "
                "dest, repo, commit and path"
            ) from None
    return entries


def chosen(entries: Iterable[Entry], only: Sequence[str]) -> list[Entry]:
    """The entries whose dest (or archive) starts with one of `only` (all when empty)."""
    return [e for e in entries if not only or any(e.dest.startswith(prefix) for prefix in only)]


def download(url: str, tries: int = 3, timeout: float = 60.0) -> bytes:
    for attempt in range(1, tries + 1):
        try:
            with urllib.request.urlopen(url, timeout=timeout) as answer:  # noqa: S310 (a fixed https host)
                body: bytes = answer.read()
                return body
        except urllib.error.HTTPError as exc:
            if exc.code in (404, 410) or attempt == tries:
                raise
        except (urllib.error.URLError, TimeoutError):
            if attempt == tries:
                raise
        time.sleep(2 * attempt)
    raise AssertionError("unreachable")


def fetch_one(entry: Entry, base: str, lfs_base: str) -> bytes:
    """The file's bytes at its commit; a Git LFS pointer is followed to its content."""
    body = download(entry.url(base))
    if body.startswith(LFS_POINTER):
        body = download(entry.url(lfs_base))
    if entry.size is not None and len(body) != entry.size:
        raise ValueError(f"{entry.dest}: {len(body):,} bytes where the manifest says {entry.size:,}")
    return body


def write_atomic(path: Path, body: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(body)
    os.replace(partial, path)


def pack(archive: Path, members: Sequence[tuple[str, Path]]) -> None:
    """A gzipped tar of the staged members, in manifest order, with fixed times (the same bytes each run)."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as zipped, tarfile.open(fileobj=zipped, mode="w") as tar:
        for name, staged in members:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = staged.stat().st_size, 0, 0o644
            with staged.open("rb") as handle:
                tar.addfile(info, handle)
    write_atomic(archive, buffer.getvalue())


def plan(entries: Sequence[Entry], data: Path, force: bool) -> tuple[list[Entry], dict[str, list[Entry]]]:
    """(plain files to fetch, archive -> all its members) for what is missing (everything with `force`)."""
    files = [e for e in entries if e.archive is None and (force or not (data / e.dest).is_file())]
    archives: dict[str, list[Entry]] = {}
    for entry in entries:
        if entry.archive is not None and (force or not (data / entry.archive).is_file()):
            archives.setdefault(entry.archive, []).append(entry)
    return files, archives


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", type=Path, default=None, help="default: DATA/SOURCES.files.jsonl")
    parser.add_argument("--data", type=Path, default=DATA, help=f"where the files go (default: {DATA})")
    parser.add_argument("--only", default="", help="comma-separated dest prefixes, e.g. trajectories/,train/x.tar.gz")
    parser.add_argument("--dry-run", action="store_true", help="list what would be fetched; fetch nothing")
    parser.add_argument("--force", action="store_true", help="fetch files that are already present again")
    parser.add_argument("--base-url", default=RAW, help=argparse.SUPPRESS)  # tests: a local server
    parser.add_argument("--lfs-url", default=LFS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    manifest = args.manifest or args.data / "SOURCES.files.jsonl"
    if not manifest.is_file():
        parser.error(f"no manifest at {manifest}: give --manifest PATH (the data folder's SOURCES.files.jsonl)")
    entries = chosen(read_manifest(manifest), [p.strip() for p in args.only.split(",") if p.strip()])
    if not entries:
        parser.error(f"no manifest entry starts with {args.only!r}")
    files, archives = plan(entries, args.data, args.force)
    members = sum(len(m) for m in archives.values())
    known = sum(e.size or 0 for e in files + [m for ms in archives.values() for m in ms])
    print(
        f"{len(entries)} manifest entries; to fetch: {len(files)} files and {len(archives)} archive(s) of "
        f"{members} members ({known / 1e6:,.1f} MB where the manifest gives sizes) into {args.data}"
    )
    if args.dry_run:
        for entry in files:
            print(f"  {entry.dest}  <- {entry.repo}@{entry.commit[:12]}:{entry.path}  [{entry.license}]")
        for archive, inside in archives.items():
            repos = sorted({f"{m.repo}@{m.commit[:12]}" for m in inside})
            print(f"  {archive}  <- {len(inside)} members from {', '.join(repos)}  [{inside[0].license}]")
        for dest, how in NOT_IN_MANIFEST.items():
            print(f"  (not fetched) {dest}: {how}")
        return 0
    failed: list[str] = []
    for number, entry in enumerate(files, start=1):
        try:
            write_atomic(args.data / entry.dest, fetch_one(entry, args.base_url, args.lfs_url))
        except (OSError, ValueError) as exc:
            failed.append(f"{entry.dest}: {exc}")
        print(f"\r{number}/{len(files)} files", end="", file=sys.stderr, flush=True)
    for archive, inside in archives.items():
        stage = args.data / ".fetch" / archive
        for entry in inside:
            staged = stage / entry.member
            if staged.is_file() and not args.force:
                continue  # resumed: fetched by an earlier, interrupted run
            try:
                write_atomic(staged, fetch_one(entry, args.base_url, args.lfs_url))
            except (OSError, ValueError) as exc:
                failed.append(f"{entry.dest}: {exc}")
        if not any(f.startswith(archive + ":") for f in failed):
            pack(args.data / archive, [(e.member, stage / e.member) for e in inside])
            print(f"\nwrote {args.data / archive} ({len(inside)} members)", file=sys.stderr)
    print(file=sys.stderr)
    if failed:
        print(f"{len(failed)} file(s) not fetched (run again to retry):", *failed[:20], sep="\n  ", file=sys.stderr)
        return 1
    print(f"done: {len(files)} files and {len(archives)} archive(s) in {args.data}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
