"""The release workflow (it runs only on GitHub): a `v*` tag builds, checks and publishes by trusted
publishing, and its tag check reads the version where the package keeps it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

from contextweaver import __version__

WORKFLOW = Path(__file__).resolve().parents[2] / ".github" / "workflows" / "release.yml"


def test_a_version_tag_publishes_with_an_oidc_token_and_no_stored_secret() -> None:
    text = WORKFLOW.read_text(encoding="utf-8")
    flow = yaml.safe_load(text)
    assert flow[True]["push"]["tags"] == ["v*"]  # YAML 1.1 reads the key `on` as True
    publish = flow["jobs"]["publish"]
    assert publish["permissions"] == {"id-token": "write"} and publish["needs"] == "build"
    assert any(step.get("uses", "").startswith("pypa/gh-action-pypi-publish") for step in publish["steps"])
    assert "secrets." not in text and "password" not in text


def test_the_tag_check_reads_the_package_version() -> None:
    script = re.search(r'version=\$\(python -c "(.+)"\)', WORKFLOW.read_text(encoding="utf-8"))
    assert script is not None
    code = script[1].replace('\\"', '"')
    read = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=WORKFLOW.parents[2], check=True)  # fmt: skip
    assert read.stdout.strip() == __version__
