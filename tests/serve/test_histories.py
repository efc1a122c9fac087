"""The history a weaving process gets as the change from the previous request's, and its fallbacks."""

from __future__ import annotations

import pickle

import pytest

from contextweaver.records import Message
from contextweaver.serve.sessions.histories import Delta, Histories, StaleHistory
from contextweaver.serve.wires.conversation import read_conversation

ROOT: list[Message] = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"}]


def turns(n: int, tag: str = "") -> list[Message]:
    out: list[Message] = []
    for i in range(1, n + 1):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": f"ls {i}{tag}"}}
        out += [{"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": f"c{i}", "content": f"out {i}"}]  # fmt: skip
    return out


def send(proxy: Histories, worker: Histories, messages: list[Message]) -> Delta:
    """One request through both sides, pickled in between as it crosses the process boundary."""
    conversation = read_conversation([dict(m) for m in messages])  # a fresh parse, as every request
    delta = proxy.delta("k", conversation, 100)
    try:
        got = worker.apply(pickle.loads(pickle.dumps(delta)))
    except StaleHistory:
        delta = proxy.delta("k", conversation, 100, whole=True)
        got = worker.apply(pickle.loads(pickle.dumps(delta)))
    proxy.keep(delta, conversation.messages or [])
    assert got == messages
    assert delta.conversation(got).steps == conversation.steps
    return delta


def test_an_appended_request_sends_only_its_new_messages() -> None:
    proxy, worker = Histories(), Histories()
    first = send(proxy, worker, [*ROOT, *turns(3)])
    assert first.base is None and len(first.tail) == 8
    second = send(proxy, worker, [*ROOT, *turns(4)])
    assert (second.base, second.keep, len(second.tail)) == (first.number, 8, 2)


def test_an_edited_history_goes_whole_and_a_worker_without_it_gets_it_whole() -> None:
    proxy, worker = Histories(), Histories()
    send(proxy, worker, [*ROOT, *turns(3)])
    edited = send(proxy, worker, [*ROOT, *turns(4, tag="x")])
    assert edited.base is None
    restarted = Histories()  # the weaving process was replaced: it holds nothing
    again = send(proxy, restarted, [*ROOT, *turns(5, tag="x")])
    assert again.base is None and len(again.tail) == 12
    with pytest.raises(StaleHistory):
        Histories().apply(proxy.delta("k", read_conversation([*ROOT, *turns(6, tag="x")]), 100))


def test_histories_are_bounded_by_bytes_and_count() -> None:
    kept = Histories(max_keys=3, max_bytes=250)
    for key in "abcd":
        delta = Delta(key, 1, None, 0, list(ROOT), 100, ROOT, "openai")
        kept.apply(delta)
    with pytest.raises(StaleHistory):  # evicted first
        kept.apply(Delta("a", 2, 1, 2, [], 100, ROOT, "openai"))
    assert kept.apply(Delta("d", 2, 1, 2, [], 100, ROOT, "openai")) == ROOT
