"""Prompt-cache prefix share of the real Claude Code and Codex CLIs through the proxy, under budgets.

Runs tests/clis' scripted session of each CLI (installed by scripts/setup.sh) with no budget, then at
budgets between its root and its full history, and reports per budget: cuts, requests, and the share
of each request's tokens (tools, system, history items, as the upstream got them) that the request
before it already held, averaged over the requests after the first cut.

    python benchmarks/cli_prefix.py [--cli claude,codex] [--fractions 0.3,0.5,0.7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.clis import clis  # noqa: E402
from tests.clis.harness import closing_store, prefix_share, run_session  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cli", default="claude,codex")
    parser.add_argument("--fractions", default="0.3,0.5,0.7", help="budget = root + fraction of the rest")
    args = parser.parse_args()
    print("| CLI | budget (root + share of the rest) | requests | cuts | prefix share after the first cut |")
    print("|---|---|---|---|---|")
    for cli in args.cli.split(","):
        if not clis.installed(cli):
            sys.exit(clis.install_hint())
        with tempfile.TemporaryDirectory() as tmp:
            plain = run_session(cli, Path(tmp) / "plain")
            root, full = plain.sizes()  # tool definitions included: the budget holds them
            for fraction in map(float, args.fractions.split(",")):
                budget = int(root + fraction * (full - root))
                run = run_session(cli, Path(tmp) / f"b{fraction}", "--budget", str(budget))
                with closing_store(run.store) as store:
                    cut = store.cut(store.sessions()[0].id)
                sent = {r.sha for r in run.sent}
                first = next((i for i, r in enumerate(run.received) if r.sha not in sent), None)
                shares = prefix_share([r.body for r in run.received[first:]]) if first is not None else []
                share = f"{statistics.mean(shares):.3f} (min {min(shares):.3f})" if shares else "no cut"
                ok = "all 200" if all(r.status == 200 for r in run.sent) else "NOT all 200"
                print(f"| {cli} | {budget} ({root} + {fraction:.0%}) | {len(run.sent)}, {ok} | "
                      f"{cut[1]['crossings'] if cut else 0} | {share} |")  # fmt: skip


if __name__ == "__main__":
    main()
