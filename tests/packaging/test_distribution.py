"""The package as a user gets it: the sdist and wheel build and pass `twine check`, the wheel holds the
package's data and nothing else, and installed with no extras into a fresh venv every command's `--help`
works while a command that needs an extra says which one in one line (exit 2)."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from contextweaver.cli import COMMANDS
from contextweaver.extras import EXTRAS

pytest.importorskip("build", reason="the dev extra installs `build`")

ROOT = Path(__file__).resolve().parents[2]
DATA_FILES = (
    "contextweaver/py.typed",
    "contextweaver/config/select_weights.json",
    "contextweaver/examples/bugfix.jsonl",
    "contextweaver/examples/library.py",
    "contextweaver/examples/proxy_openai.py",
    "contextweaver/examples/toy_repo.py",
    "contextweaver/export/assets/viewer.css",
    "contextweaver/export/assets/viewer.js",
)
NEEDS_EXTRA = {  # the least a command needs to get past its own arguments
    "eval": ["eval", "{example}"],
    "serve": ["serve", "--upstream", "http://127.0.0.1:9/v1"],
    "demo": ["demo", "--no-wait"],
    "mcp": ["mcp"],
}


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=600, cwd=cwd)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = run(sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", out, ROOT)
    assert built.returncode == 0, built.stderr[-3000:]
    return out


def wheel_of(dist: Path) -> Path:
    (wheel,) = dist.glob("*.whl")
    return wheel


def test_twine_check_passes(dist: Path) -> None:
    pytest.importorskip("twine", reason="the dev extra installs `twine`")
    checked = run(sys.executable, "-m", "twine", "check", "--strict", *sorted(dist.iterdir()))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert len(list(dist.glob("*.tar.gz"))) == 1


def test_the_wheel_holds_the_package_data_and_no_tests_or_caches(dist: Path) -> None:
    names = zipfile.ZipFile(wheel_of(dist)).namelist()
    assert set(DATA_FILES) <= set(names)
    assert "contextweaver/__main__.py" in names
    strays = [n for n in names if n.startswith("tests/") or "__pycache__" in n or n.endswith((".pyc", ".db"))]
    assert strays == []
    assert {n.split("/")[0] for n in names if ".dist-info/" not in n} == {"contextweaver"}


def test_the_mit_license_ships_in_the_wheel_and_the_sdist(dist: Path) -> None:
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License")
    assert "Copyright (c) 2026 The ContextWeaver authors" in license_text
    wheel = zipfile.ZipFile(wheel_of(dist))
    (in_wheel,) = [n for n in wheel.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
    assert wheel.read(in_wheel).decode() == license_text
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        (in_sdist,) = [m for m in archive.getmembers() if m.name.endswith("/LICENSE")]
        member = archive.extractfile(in_sdist)
        assert member is not None and member.read().decode() == license_text
    metadata = wheel.read(next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata


def test_the_long_description_is_the_readme_without_its_relative_picture(dist: Path) -> None:
    """An index shows no file of the repository: the README's picture, a relative path, was a broken image
    there. The README keeps it; the package's description says where it is."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/figures/cut.svg)" in readme
    wheel = zipfile.ZipFile(wheel_of(dist))
    metadata = wheel.read(next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    description = metadata.split("\n\n", 1)[1]
    assert "Description-Content-Type: text/markdown" in metadata
    assert re.findall(r"!\[[^\]]*\]\((?!https?://)", description) == []  # no relative picture
    assert "(The picture of this cut is `docs/figures/cut.svg` in the repository.)" in description
    assert description.startswith("# ContextWeaver") and "## Try it" in description


@pytest.mark.slow
def test_a_core_install_runs_every_help_and_names_the_missing_extras(dist: Path, tmp_path: Path) -> None:
    """pip resolves only the core dependencies (no extras), as `pip install <wheel>` does for a user."""
    venv = tmp_path / "venv"
    assert run(sys.executable, "-m", "venv", "--without-pip", venv).returncode == 0
    python, command = venv / "bin" / "python", venv / "bin" / "contextweaver"
    installed = run(sys.executable, "-m", "pip", "--python", python, "install", "-q", wheel_of(dist))
    assert installed.returncode == 0, installed.stderr[-3000:]
    assert run(python, "-c", "import starlette").returncode != 0  # truly without the extras
    assert run(python, "-c", "import matplotlib").returncode != 0

    subcommands = [["sessions", name, "--help"] for name in ("list", "show", "export")]
    for args in (["--help"], ["--version"], *([name, "--help"] for name in COMMANDS), *subcommands):
        result = run(command, *args)
        assert result.returncode == 0 and "Traceback" not in result.stderr, (args, result.stderr)
    bare = run(command)
    assert bare.returncode == 0 and "Usage: contextweaver" in bare.stdout, bare.stderr
    assert "0." in run(python, "-m", "contextweaver", "--version").stdout

    example = run(python, "-c", "from contextweaver.examples import example_path; print(example_path())")
    assert set(NEEDS_EXTRA) == {c for extra in EXTRAS.values() for c in extra.commands}
    for name, args in NEEDS_EXTRA.items():
        result = run(command, *(a.format(example=example.stdout.strip()) for a in args), cwd=tmp_path)
        (extra,) = [e for e, spec in EXTRAS.items() if name in spec.commands]
        assert result.returncode == 2, (name, result.stderr)
        assert result.stderr.strip().count("\n") == 0, result.stderr  # one line, no traceback
        assert f"'{extra}' extra" in result.stderr and f"{wheel_of(dist)}[{extra}]" in result.stderr

    library = run(python, "-m", "contextweaver.examples.library", cwd=tmp_path)  # the examples ship
    assert library.returncode == 0 and "step 12: cut" in library.stdout, library.stderr
    proxy = run(python, "-m", "contextweaver.examples.proxy_openai", cwd=tmp_path)
    assert proxy.returncode == 2 and proxy.stderr.strip().count("\n") == 0, proxy.stderr
    assert "python -m contextweaver.examples.proxy_openai needs the 'serve' extra" in proxy.stderr
    listed = run(command, "examples", "list")
    assert listed.returncode == 0 and "proxy_openai" in listed.stdout, listed.stderr

    store = tmp_path / "sessions.db"  # reading a SQLite store needs the standard library only
    made = run(python, "-c", f"from contextweaver.store import open_store; open_store({str(store)!r})")
    assert made.returncode == 0, made.stderr
    listed = run(command, "sessions", "list", "--store", store)
    assert listed.returncode == 0, listed.stderr
