"""One real cut, drawn: the shipped 33-step run woven by the default strategy (`cw`) under a 3,000-token
budget, at the step where a cut drops the most. Every step's place in that context (kept in full, an
output placeholder, or left out), then the working-state note the cut wrote. The README's picture is this
script's SVG:

    python -m contextweaver.examples.cut_picture                                  # in the terminal
    python -m contextweaver.examples.cut_picture --svg docs/figures/cut.svg      # the picture in the docs and README
"""

import sys

from rich.console import Console
from rich.table import Table
from rich.text import Text

from contextweaver import ContextWeaver, WeaverConfig, load_trajectory
from contextweaver.examples import example_path

BUDGET = 3_000
run = load_trajectory(example_path("bugfix"))
weaver = ContextWeaver(WeaverConfig(budget=BUDGET))
weaver.begin(run.root)
cuts = []  # (history tokens - context tokens, step, context) at every cut
for number, step in enumerate(run.steps, start=1):
    weaver.add_step(step)
    context = weaver.context()
    if context.compacted:
        cuts.append((context.full_history_tokens - context.tokens, number, context, list(weaver.nodes)))
_, at, context, nodes = max(cuts, key=lambda cut: cut[0])

STYLE = {"full": ("kept in full", "bold green"), "trimmed": ("kept, trimmed", "green"),
         "compressed": ("output -> placeholder", "yellow"), "dropped": ("left out", "red")}  # fmt: skip
MARK = {"passed": "✓", "failed": "✗", "superseded": "↷"}
modes = {d.index: d.mode for d in context.decisions}
console = Console(record=True, width=104, force_terminal="--svg" in sys.argv or None)
console.print(
    f"[bold]A cut at step {at} of bugfix.jsonl[/] (cw, budget {BUDGET:,}): "
    f"a history of {context.full_history_tokens:,} tokens woven to {context.tokens:,}"
)
table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
for name in ("step", "", "action", "in the context", "parents"):
    table.add_column(name)
for node in nodes[1:]:
    label, style = STYLE.get(modes.get(node.index, "full"), ("kept in full", "bold green"))
    status = MARK.get(str(node.validation_status.value), "·")
    if node.step.kind == "user":
        action = "(a message from the user)"
    else:
        action = node.step.action.splitlines()[0][:44] if node.step.action else "(a reply without a command)"
    parents = ",".join(str(p.index) for p in node.parents)
    table.add_row(str(node.index), status, action, Text(label, style=style), parents)
console.print(table)
note = next(m["content"] for m in context.messages if "[ContextWeaver working state" in str(m["content"]))
console.print(Text("\n" + note.split("\n- parts of")[0], style="cyan"))
console.print(
    "✓ passed  ✗ failed  ↷ superseded by a later run  · no tests; parents: the steps it builds on (0: task)"
)
if "--svg" in sys.argv:
    path = sys.argv[sys.argv.index("--svg") + 1]
    console.save_svg(path, title=f"python -m contextweaver.examples.cut_picture: step {at}")
    print(f"wrote {path}", file=sys.stderr)
