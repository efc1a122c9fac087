"""A planted trace whose true parent is unambiguous: the positive control for any analyzer.

Step 5 reads the function that step 1's search found (same path and symbol, information flow);
steps 2-4 are unrelated and more recent, so recency alone would choose wrongly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from contextweaver.records import Step

if TYPE_CHECKING:
    from contextweaver.nodes.graph import DependencyGraph

TASK = "Reading a settings file saved with a byte-order mark crashes the app. Make it load."
TRUE_PARENT = 1
NEW_STEP = 5

STEPS = (
    Step(
        thought="Find where settings files are parsed.",
        action='grep -rn "def load_settings" src/',
        observation="src/app/settings_loader.py:42:def load_settings(path):",
    ),
    Step(thought="Look at the docs folder.", action="ls docs/", observation="index.md\nusage.md"),
    Step(thought="Check the readme.", action="head -5 README.md", observation="# App\nA small desktop tool."),
    Step(thought="Which interpreter?", action="python --version", observation="Python 3.11.4"),
    Step(
        thought="load_settings in src/app/settings_loader.py opens the file without an encoding; read it.",
        action="sed -n 40,60p src/app/settings_loader.py",
        observation="def load_settings(path):\n    with open(path) as fh:\n        return parse(fh.read())",
    ),
)


def planted_graph() -> DependencyGraph:
    """Root plus steps 1-5 as nodes with extractive summaries; steps 1-4 hang off the root, step 5 has no
    parents yet (the analyzer under test chooses them from nodes 0-4)."""
    from contextweaver.nodes.extract import make_node, root_node
    from contextweaver.nodes.graph import DependencyGraph
    from contextweaver.records import Parent
    from contextweaver.summaries.extractive import ExtractiveSummarizer

    graph = DependencyGraph()
    summarizer = ExtractiveSummarizer()
    root = root_node(
        [{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": TASK}]
    )
    root.summary = root.dependency_summary = summarizer.summarize(root, TASK)
    graph.add(root)
    for index, step in enumerate(STEPS, start=1):
        node = make_node(index, step)
        node.summary = summarizer.summarize(node, TASK)
        graph.add(node)
        if index < NEW_STEP:
            graph.set_parents(index, [Parent(0, 1.0, "planted")])
            node.dependency_summary = summarizer.dependency_summary(node, [root])
    return graph
