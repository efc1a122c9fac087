"""SWE-agent's history processor, offline. SWE-agent applies its history processors to the agent's history
before every model query; this feeds the processor that history, item by item, as SWE-agent would,
replaying the coding-agent run the package ships. SWE-agent itself is not needed to run this.

    python -m contextweaver.examples.sweagent_processor
"""

from contextweaver import load_trajectory
from contextweaver.examples import example_path
from contextweaver.integrations.sweagent import ContextWeaverHistoryProcessor
from contextweaver.tokens import count_message


def item(role, content, message_type, **extra):  # a SWE-agent history item
    return {"role": role, "content": content, "agent": "main", "message_type": message_type, **extra}


run = load_trajectory(example_path("bugfix"))
system, task = run.system, run.task
# --8<-- [start:processor]
processor = ContextWeaverHistoryProcessor(strategy="cw", budget=3_000)  # `type: contextweaver` in the YAML
history = [item("system", system, "system"), item("user", task, "observation")]
for step in run.steps:
    content = f"{step.thought}\n\n```\n{step.action}\n```"
    history.append(item("assistant", content, "action", thought=step.thought, action=step.action))
    history.append(item("user", step.observation, "observation"))
    sent = processor(history)  # what SWE-agent sends the model; `history` itself is left as it was
    # --8<-- [end:processor]
    before, after = (sum(count_message(m) for m in h) for h in (history, sent))
    placeholders = sum(str(m["content"]).startswith("Old environment output") for m in sent)
    if before != after:
        print(
            f"{len(history) // 2 - 1:2d} steps: history {before:,} -> sent {after:,} tokens,"
            f" {placeholders} outputs as placeholders"
        )
note = next(m["content"] for m in sent if "[ContextWeaver working state" in str(m["content"]))
print("\nThe working-state note sent with the last query:\n" + note)
