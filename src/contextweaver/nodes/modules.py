"""Module names as files: a step that imports `a.b.c` (`from a.b.c import X`, `import a.b.c`) works with the
file `a/b/c.py` (or the package's `a/b/c/__init__.py`; Java's `import a.b.C;` is `a/b/C.java`), even
when it never types the path. A script or a test an agent writes against a module names it this way, so
the selection counts those files among the files recent steps name (`select.py`'s linked views).

Why: of SWE-agent-LM-32B's items 10+ outputs back that the selection missed (train, 70 runs: 100 of
174), 64 were needed at a `create` step (a new script or test) and 46 lay in views of files no step of
the last `file_lookback` named; for 8 of those the last steps' import lines named the module. Measured on
the train splits (docs/TUNING.md)."""

from __future__ import annotations

import re

IMPORT = re.compile(
    r"^[^\S\n]*(?:from[^\S\n]+([A-Za-z_][\w.]*)[^\S\n]+import\b|import[^\S\n]+([A-Za-z_][\w.]*))", re.M
)
"""An import line's module: `from a.b import c`, `import a.b.c` (the first of a list), `import a.b.C;`."""


def module_files(said: str) -> frozenset[str]:
    """The files the import lines of a step's thought and action name (two parts at least: `a.b`)."""
    if "import" not in said:
        return frozenset()
    found: set[str] = set()
    for first, second in IMPORT.findall(said):
        name = (first or second).strip(".")
        if "." not in name:
            continue
        path = name.replace(".", "/")
        found.update((path + ".py", path + "/__init__.py", path + ".java"))
    return frozenset(found)
