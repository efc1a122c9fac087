"""mini-swe-agent 2 with ContextWeaver, offline: mini-swe-agent's own DeterministicModel (scripted replies,
no API key) and LocalEnvironment fix a small repository in a temporary folder. Each query prints what the
model received; the trajectory keeps the full history, the woven contexts are saved beside it.

    pip install 'contextweaver-agents[minisweagent]'
    python -m contextweaver.examples.minisweagent_agent
"""

import os
import sys
import tempfile
from pathlib import Path

from contextweaver.examples import require

require("minisweagent_agent")  # before the imports it needs: a missing one is one line, exit 2

os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")  # no start-up banner
os.environ.setdefault("MSWEA_CONFIGURED", "true")  # no first-run setup wizard: nothing here needs a key

from minisweagent.environments.local import LocalEnvironment
from minisweagent.models.test_models import DeterministicModel, make_output

from contextweaver.examples.toy_repo import make_repo
from contextweaver.integrations.minisweagent import ContextWeaverAgent
from contextweaver.tokens import count_message

PYTEST = f"{sys.executable} -m pytest -v --no-header -p no:cacheprovider"
TURNS = [  # (thought, command): what the scripted model answers, one query at a time
    ("Look at the repository.", "ls -la"),
    ("Read the module.", "cat -n calc.py"),
    ("Run the tests to see the failure.", PYTEST),
    ("Read the tests.", "cat -n test_calc.py"),
    ("add subtracts: fix it.", "sed -i 's/return a - b/return a + b/' calc.py"),
    ("Run the tests again.", PYTEST),
    ("Check the change.", "git diff"),
    ("Done.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"),
]


class ShowingModel(DeterministicModel):
    """The deterministic model, printing the size and the placeholders of every message list it is sent."""

    def query(self, messages, **kwargs):
        tokens = sum(count_message(m) for m in messages)
        history = sum(count_message(m) for m in agent.messages)  # the agent keeps its full history
        cut = sum("Old environment output" in str(m.get("content")) for m in messages)
        note = any("[ContextWeaver working state" in str(m.get("content")) for m in messages)
        print(
            f"query {self.current_index + 2}: history {history:,} tokens -> sent {tokens:,} tokens"
            f" ({cut} outputs as placeholders{', with the working-state note' if note else ''})"
        )
        self.last = messages
        return super().query(messages, **kwargs)


with tempfile.TemporaryDirectory() as tmp:
    repo = Path(tmp) / "repo"
    repo.mkdir()
    make_repo(repo, test_f3=True)
    model = ShowingModel(
        outputs=[
            make_output(f"THOUGHT: {t}\n\n```mswea_bash_command\n{c}\n```", [{"command": c}], cost=0.0)
            for t, c in TURNS
        ]
    )
    # --8<-- [start:agent]
    agent = ContextWeaverAgent(
        model,
        LocalEnvironment(cwd=str(repo)),
        contextweaver={"strategy": "cw", "budget": 1_200},  # the YAML's `agent.contextweaver:` block
        output_path=Path(tmp) / "run.traj.json",
        system_template="You fix bugs with shell commands.",
        instance_template="{{task}}",
    )
    info = agent.run("test_add fails: add(2, 3) should be 5. Fix calc.py.")
    # --8<-- [end:agent]
    notes = [m["content"] for m in model.last if "[ContextWeaver working state" in str(m["content"])]
    note = notes[0] if notes else "(none: nothing was cut)"
    print("\nThe working-state note in the last query:\n" + note)
    print(
        f"\nexit: {info['exit_status']}; beside the trajectory:",
        ", ".join(sorted(p.name for p in Path(tmp).glob("run.*"))),
    )
