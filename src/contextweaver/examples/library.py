"""ContextWeaver as a library, in your own agent loop. Runs offline: the "LLM" replays the 33-step
coding-agent run the package ships, so you see what a cut keeps, drops and writes down.

    python -m contextweaver.examples.library
"""

# --8<-- [start:loop]
from contextweaver import ContextWeaver, Step, WeaverConfig, load_trajectory
from contextweaver.examples import example_path

run = load_trajectory(example_path("bugfix"))  # stands in for your agent: a recorded run
replies = iter(run.steps)


def llm(messages):  # your model call goes here; this one answers with the run's next step
    return next(replies, None)


weaver = ContextWeaver(WeaverConfig(budget=3_000))  # the default strategy, `cw`, under 3,000 tokens
weaver.begin(run.root)  # your system prompt and task, as chat messages
context = weaver.context()
while (step := llm(context.messages)) is not None:
    # run the step's action in your environment, then hand ContextWeaver what happened:
    weaver.add_step(Step(thought=step.thought, action=step.action, observation=step.observation))
    context = weaver.context()  # OpenAI-style messages, tool calls paired, never over the budget
    if context.compacted:  # a cut: from here the new prefix is frozen until the next one
        print(
            f"step {len(weaver.nodes) - 1}: cut {context.full_history_tokens:,} -> {context.tokens:,} tokens;"
            f" kept in full {context.kept}, placeholders {context.compressed}, dropped {context.dropped}"
        )
# --8<-- [end:loop]

note = next(m["content"] for m in context.messages if "[ContextWeaver working state" in str(m["content"]))
print("\nThe working-state note the last cut wrote:\n" + note)
print(f"\nlast context: {context.tokens:,} tokens for a {context.full_history_tokens:,}-token history")
for decision in context.decisions[:3]:  # every step's place in the context, and why
    print(f"  step {decision.index}: {decision.mode} ({decision.reason})")
