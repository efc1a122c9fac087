"""Fetch the public third-party data the benchmarks and the data tests read, by commit, into ../shared/data
(beside the clone), as the manifest the repository ships, data/manifest.jsonl, lists it.

    python scripts/fetch_data.py --dry-run                    # what would be fetched, from where, how big
    python scripts/fetch_data.py                              # everything
    python scripts/fetch_data.py --only trajectories/mini-swe-agent,train/mini-swe-agent__gemini-3-pro__303.tar.gz

Each manifest line is one file: `file` (where it goes under the data folder), `member` (for the files of a
gzipped tar archive: its name inside `file`), `source` (`repo`, a public GitHub repository, `commit`, a fixed
commit of it, and `path`, the file there), `license` and `size` (bytes, checked after download). Files come
from the raw-file host by commit; a Git LFS pointer is followed to its content. Files already present are kept
(`--force` fetches again), so an interrupted run resumes.

The training archives (`train/*.tar.gz`) are not published as archives anywhere: each was assembled from files
of public repositories. They are rebuilt here from their members, each fetched by commit, in manifest order,
with fixed times: the same runs under the same names, though not byte for byte the archive the figures were
measured on. `test_logs/agent-observations/observations.jsonl` is not fetched: it holds test runs cut out of
agent runs, each line naming its own source, and the tests that read it skip without it.

The manifest was generated from the data folder's own list (SOURCES.files.jsonl, whose lines name `dest`,
`repo`, `commit`, `path`, `license` and sometimes `bytes`) with the sizes read from the files:

    python scripts/fetch_data.py --write-manifest ../shared/data > data/manifest.jsonl

`--manifest PATH` reads either format.
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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
MANIFEST = ROOT / "data" / "manifest.jsonl"
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
    """Every line of the manifest (the shipped format, or the data folder's SOURCES.files.jsonl); a line that is
    not one names its number and what it lacks."""
    entries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if "file" in row:
                dest = f"{row['file']}:{row['member']}" if row.get("member") else row["file"]
                source = row["source"]
                entries.append(
                    Entry(
                        dest,
                        source["repo"],
                        source["commit"],
                        source["path"],
                        row.get("license", ""),
                        row.get("size"),
                    )
                )
            else:
                entries.append(
                    Entry(
                        row["dest"],
                        row["repo"],
                        row["commit"],
                        row["path"],
                        row.get("license", ""),
                        row.get("bytes"),
                    )
                )
        except (ValueError, KeyError, TypeError) as exc:
            raise SystemExit(
                f"{path}, line {number}: not a manifest entry ({exc!r}): each line is a JSON object with file, "
                "source (repo, commit, path), license and size"
            ) from None
    return entries


def manifest_lines(data: Path) -> Iterator[str]:
    """The shipped manifest's lines, from the data folder's SOURCES.files.jsonl and the files themselves (their
    sizes); a file the folder lacks keeps the size its line gives, if any."""
    members: dict[str, dict[str, int]] = {}
    for entry in read_manifest(data / "SOURCES.files.jsonl"):
        size = entry.size
        if entry.archive is None:
            local = data / entry.dest
            size = local.stat().st_size if local.is_file() else size
        else:
            if entry.archive not in members:
                archive = data / entry.archive
                members[entry.archive] = {}
                if archive.is_file():
                    with tarfile.open(archive) as tar:
                        members[entry.archive] = {m.name: m.size for m in tar if m.isfile()}
            size = members[entry.archive].get(entry.member, size)
        row: dict[str, object] = {"file": entry.archive or entry.dest}
        if entry.archive is not None:
            row["member"] = entry.member
        row["source"] = {"repo": entry.repo, "commit": entry.commit, "path": entry.path}
        row["license"] = entry.license
        row["size"] = size
        yield json.dumps(row, ensure_ascii=False)


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
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as zipped,
        tarfile.open(fileobj=zipped, mode="w") as tar,
    ):
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
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--manifest", type=Path, default=MANIFEST, help=f"default: {MANIFEST.relative_to(ROOT)}"
    )
    parser.add_argument("--data", type=Path, default=DATA, help=f"where the files go (default: {DATA})")
    parser.add_argument(
        "--only", default="", help="comma-separated dest prefixes, e.g. trajectories/,train/x.tar.gz"
    )
    parser.add_argument("--dry-run", action="store_true", help="list what would be fetched; fetch nothing")
    parser.add_argument("--force", action="store_true", help="fetch files that are already present again")
    parser.add_argument("--base-url", default=RAW, help=argparse.SUPPRESS)  # tests: a local server
    parser.add_argument("--lfs-url", default=LFS, help=argparse.SUPPRESS)
    parser.add_argument(
        "--write-manifest",
        type=Path,
        metavar="DATA",
        help="print the manifest made from DATA/SOURCES.files.jsonl and DATA's files, then exit",
    )
    args = parser.parse_args(argv)
    if args.write_manifest is not None:
        for line in manifest_lines(args.write_manifest):
            print(line)
        return 0
    manifest = args.manifest
    if not manifest.is_file():
        parser.error(
            f"no manifest at {manifest}: the repository ships data/manifest.jsonl; give --manifest PATH"
        )
    entries = chosen(read_manifest(manifest), [p.strip() for p in args.only.split(",") if p.strip()])
    if not entries:
        parser.error(f"no manifest entry starts with {args.only!r}")
    files, archives = plan(entries, args.data, args.force)
    members = sum(len(m) for m in archives.values())
    todo = files + [m for ms in archives.values() for m in ms]
    known = sum(e.size or 0 for e in todo)
    unsized = sum(e.size is None for e in todo)
    print(
        f"{len(entries)} manifest entries; to fetch: {len(files)} files and {len(archives)} archive(s) of "
        f"{members} members ({known / 1e6:,.1f} MB{f', and {unsized} files of unknown size' if unsized else ''}) "
        f"into {args.data}"
    )
    if args.dry_run:
        for entry in files:
            print(f"  {entry.dest}  <- {entry.repo}@{entry.commit[:12]}:{entry.path}  [{entry.license}]")
        for archive, inside in archives.items():
            repos = sorted({f"{m.repo}@{m.commit[:12]}" for m in inside})
            size = sum(m.size or 0 for m in inside) / 1e6
            print(
                f"  {archive}  <- {len(inside)} members ({size:,.1f} MB) from {', '.join(repos)}  [{inside[0].license}]"
            )
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
        print(
            f"{len(failed)} file(s) not fetched (run again to retry):",
            *failed[:20],
            sep="\n  ",
            file=sys.stderr,
        )
        return 1
    print(f"done: {len(files)} files and {len(archives)} archive(s) in {args.data}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
