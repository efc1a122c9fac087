"""Retained memory of a weaving process per character of a session's text, per strategy (issue 44).

    .venv/bin/python benchmarks/session_bytes.py [--strategies cw,cw-select,cw-paper] [--root-mb 4]

Runs the weaving process's own request path (`serve.workers._weave`, each request's delta pickled as the
pool pickles it) in this process, a session's requests one after another as an agent sends them, and
reads with tracemalloc what stays allocated afterwards: the session cache, the prompt-cache simulations
and the kept histories together. Three kinds of session per strategy:

root:   a synthetic root of `--root-mb` MB of distinct lines and two small steps: bytes per root character
runs:   train-split mini-swe-agent runs (../shared/data; skipped when absent), replayed request by
        request, less their roots' share (small steps: the per-step cost shows)
big:    a small root and 20 tool outputs of 200 KB of distinct lines (the per-character cost shows)
The last two solved together: bytes per step character and per step. The table in
`contextweaver/serve/sessions/session_bytes.py` (MEASURED) is these, rounded up. Not a test.
"""

from __future__ import annotations

import argparse
import gc
import json
import pickle
import sys
import tempfile
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

from contextweaver.config import WeaverConfig
from contextweaver.eval.splits import split_of
from contextweaver.records import Message
from contextweaver.serve.sessions import workers
from contextweaver.serve.sessions.build import build_manager
from contextweaver.serve.sessions.histories import Histories
from contextweaver.serve.sessions.session_bytes import MEASURED, text_length
from contextweaver.serve.wires.conversation import read_conversation
from contextweaver.strategies import TABLE

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trajectories" / "mini-swe-agent"
MB = 1024 * 1024
LINE = "src/pkg/module_{0}.py:{1}: line {1} of {0}: built with flags -O2 -Wall\n"


def lines(marker: str, size: int) -> str:
    out, total, n = [], 0, 0
    while total < size:
        out.append(LINE.format(marker, n))
        total += len(out[-1])
        n += 1
    return "".join(out)[:size]


def tool_step(number: int, output: str) -> list[Message]:
    call = {"id": f"call-{number}", "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": f"make target-{number}"})}}  # fmt: skip
    return [{"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call-{number}", "content": output}]  # fmt: skip


def synthetic(marker: str, root_size: int, steps: int, step_size: int) -> list[Message]:
    messages: list[Message] = [{"role": "system", "content": "You are a coding agent."},
                               {"role": "user", "content": "Fix the build.\n" + lines(marker, root_size)}]  # fmt: skip
    for number in range(1, steps + 1):
        messages += tool_step(number, lines(f"{marker}-{number}", step_size))
    return messages


def train_runs() -> Iterator[list[Message]]:
    for path in sorted(DATA.glob("*.traj.json")):
        run = json.loads(path.read_text())
        if split_of(run["instance_id"]) == "train":
            yield [{"role": m["role"], "content": m["content"]} for m in run["messages"]]


def requests(messages: list[Message]) -> list[list[Message]]:
    """Each request of the session: the history up to each assistant message (the call the agent makes)."""
    ends = [n for n, m in enumerate(messages) if m["role"] == "assistant"] + [len(messages)]
    return [messages[:end] for end in ends]


def replay(sessions: list[list[list[Message]]], proxy: Histories) -> None:
    for number, session in enumerate(sessions):
        for request in session:
            conversation = read_conversation(request)
            delta = proxy.delta(f"k{number}", conversation, len(json.dumps(request)))
            workers._weave(pickle.loads(pickle.dumps(delta)), None, None)
            proxy.keep(delta, request)


def retained(strategy: str, sessions: list[list[Message]], store: Path) -> int:
    """Bytes a fresh weaving process keeps after the sessions' requests (the first session warms it up)."""
    config = WeaverConfig.model_validate(dict(TABLE[strategy].weaver))
    workers._manager = build_manager(str(store), config)
    workers._simulators.clear()
    workers._histories = Histories()
    proxy = Histories(max_bytes=1 << 40)
    planned = [requests(messages) for messages in sessions]
    replay(planned[:1], proxy)
    gc.collect()
    tracemalloc.start()
    try:
        replay(planned[1:], proxy)
        gc.collect()
        return tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()


def root_text(messages: list[Message]) -> int:
    return text_length(messages[: next(n for n, m in enumerate(messages) if m["role"] == "assistant")])


def steps_of(messages: list[Message]) -> int:
    return sum(1 for m in messages if m["role"] == "assistant")


def measure(strategy: str, root_mb: float, tmp: Path) -> dict[str, float]:
    """Bytes per root character, and (solving the two step measurements) per step character and per step."""
    rooted = [synthetic(f"r{n}", int(root_mb * MB), 2, 2000) for n in range(3)]
    kept = retained(strategy, rooted, tmp / f"{strategy}-root.db")
    root = kept / sum(root_text(m) for m in rooted[1:])
    rows = []  # (step characters, steps, retained bytes less the roots' share)
    for name, sessions in (
        ("runs", list(train_runs())),
        ("big", [synthetic(f"b{n}", 1000, 20, 200_000) for n in range(3)]),
    ):
        if not sessions:
            continue
        if name == "runs":
            sessions = [sessions[0], *sessions]  # the first warms up
        kept = retained(strategy, sessions, tmp / f"{strategy}-{name}.db")
        measured = sessions[1:]
        roots = sum(root_text(m) for m in measured)
        rows.append(
            (sum(text_length(m) for m in measured) - roots, sum(map(steps_of, measured)), kept - root * roots)
        )
    (t1, n1, k1), (t2, n2, k2) = rows if len(rows) == 2 else (rows[0], (0, 1, 0))
    per_step = (k1 * t2 - k2 * t1) / (n1 * t2 - n2 * t1)
    step = (k1 - per_step * n1) / t1 if t1 else (k2 - per_step * n2) / t2
    return {
        "root": root,
        "step": step,
        "per_step": per_step,
        **{f"row{i}": r[2] / r[0] for i, r in enumerate(rows)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--strategies", default=",".join(MEASURED))
    parser.add_argument("--root-mb", type=float, default=4.0)
    args = parser.parse_args()
    print(f"{'strategy':10} {'root':>6} {'step':>6} {'per step':>9}   (bytes per character, per step; table)")
    with tempfile.TemporaryDirectory() as tmp:
        for strategy in args.strategies.split(","):
            found = measure(strategy, args.root_mb, Path(tmp))
            table = MEASURED.get(strategy)
            print(
                f"{strategy:10} {found['root']:6.2f} {found['step']:6.2f} {found['per_step']:9.0f}   {table}",
                flush=True,
            )


if __name__ == "__main__":
    sys.exit(main())
