"""The deterministic fake's answers: it reads the memory prompts' block format and replies with valid JSON.

Parents: up to m candidates sharing the most salient words with the new step (paths and identifiers weigh
more; a candidate's own summary counts double its dependency summary), ties to the most recent; with
no overlap, the most recent candidate. So a planted trace whose true parent shares a path or symbol
with the new step gets that parent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_HEADER = re.compile(r"^\[(NEW )?N(\d+)\](.*)$")
_SECTION = re.compile(r"^[A-Z][A-Z ]+(\(.*\))?:\s*$")
_WORD = re.compile(r"[A-Za-z_][\w./-]{2,}")
_LABEL = re.compile(r"^(summary|dependency summary|thought|action|observation|user message):\s?")
_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "into",
        "then",
        "than",
        "was",
        "were",
        "are",
        "not",
        "but",
        "you",
        "your",
        "has",
        "have",
        "had",
        "its",
        "can",
        "will",
        "would",
        "should",
        "could",
        "all",
        "any",
        "each",
        "some",
        "more",
        "most",
        "other",
        "such",
        "only",
        "own",
        "same",
        "too",
        "very",
        "just",
        "none",
        "empty",
        "step",
        "task",
        "status",
        "unknown",
        "passed",
        "failed",
        "superseded",
        "summary",
        "dependency",
        "ran",
        "saw",
        "message",
        "def",
        "return",
        "self",
        "import",
    ]
)


KEEP_SHARE = 0.3
"""A parent must score at least this share of the best candidate's score."""


@dataclass
class Block:
    index: int
    new: bool
    lines: dict[str, str] = field(default_factory=dict)

    def text(self, *labels: str) -> str:
        return " ".join(self.lines.get(label, "") for label in labels)


def parse_blocks(prompt: str) -> list[Block]:
    """Split a prompt into `[N3]` / `[NEW N15]` blocks; a section heading or a blank line ends a block."""
    blocks: list[Block] = []
    current: Block | None = None
    for line in prompt.splitlines():
        header = _HEADER.match(line.strip())
        if header:
            current = Block(int(header.group(2)), bool(header.group(1)))
            blocks.append(current)
            continue
        if current is None or _SECTION.match(line) or not line.strip():
            current = None
            continue
        label = _LABEL.match(line)
        key = label.group(1) if label else "text"
        body = line[label.end() :] if label else line
        current.lines[key] = (current.lines.get(key, "") + " " + body).strip()
    return blocks


def _weights(text: str) -> dict[str, float]:
    weights: dict[str, float] = {}
    for word in _WORD.findall(text):
        low = word.lower().strip("./-")
        if len(low) < 3 or low in _STOP:
            continue
        weight = (
            3.0
            if ("/" in low or "." in low)
            else 2.0
            if ("_" in low or word[1:] != word[1:].lower())
            else 1.0
        )
        weights[low] = max(weights.get(low, 0.0), weight)
    return weights


def _words(text: str, limit: int) -> str:
    words = text.split()
    return " ".join(words[:limit]) + (" ..." if len(words) > limit else "")


def choose_parents(new: Block, candidates: list[Block], m: int) -> list[dict[str, Any]]:
    target = _weights(new.text("summary", "thought", "action", "observation", "user message", "text"))
    scored = []
    for cand in candidates:
        own, dep = _weights(cand.text("summary")), _weights(cand.text("dependency summary"))
        shared = {w: target[w] for w in target if w in own or w in dep}
        score = sum(v * (1.0 if w in own else 0.5) for w, v in shared.items())
        scored.append((score, cand.index, sorted(shared, key=lambda w: -shared[w])[:3]))
    scored.sort(key=lambda s: (-s[0], -s[1]))
    best = scored[0][0] if scored else 0.0
    chosen = [s for s in scored if s[0] > 0 and s[0] >= KEEP_SHARE * best][:m] or scored[:1]
    top = chosen[0][0] or 1.0
    return [
        {
            "id": f"N{index}",
            "confidence": round(0.5 + 0.45 * score / top, 2) if score else 0.3,
            "reasoning": f"shares {', '.join(words)}" if words else "most recent candidate",
        }
        for score, index, words in chosen
    ]


def summarize_block(block: Block) -> str:
    action = block.lines.get("action") or block.lines.get("user message") or block.lines.get("thought", "")
    observation = block.lines.get("observation", "")
    first = _words(action, 24)
    return f"{first}; saw: {_words(observation, 16)}" if observation else first or "(nothing recorded)"


def dependency_line(parents: list[Block], summary: str) -> str:
    parts = [
        _words(p.lines.get("dependency summary", "-").strip("- ") or p.lines.get("summary", ""), 24)
        for p in parents
        if p.index != 0  # the root's "summary" is the task, already in every prompt
    ]
    chain = " | ".join(part for part in parts if part)
    return _words(f"{chain} -> {summary}" if chain else summary, 80)


def infer_schema(prompt: str) -> dict[str, Any] | None:
    """The request a prompt makes when no schema came with it (servers sent plain `json_object` mode)."""
    instructions = prompt.rpartition("INSTRUCTIONS:")[2]
    m = re.search(r"at most (\d+) (?:parents|candidates)", instructions)
    parents = {"parents": {"maxItems": int(m.group(1)) if m else 3}}
    if '"parents"' in instructions and '"summary"' in instructions:
        return {"title": "step_annotation", "properties": parents}
    if '"parents"' in instructions:
        return {"title": "parent_selection", "properties": parents}
    if '"dependency_summary"' in instructions:
        return {"title": "dependency_summary"}
    if '"summary"' in instructions:
        return {"title": "node_summary"}
    return None


def answer(prompt: str, schema: dict[str, Any] | None) -> str:
    """The fake's reply to a memory prompt, by the request its schema names; plain text otherwise."""
    schema = schema or infer_schema(prompt)
    title = (schema or {}).get("title", "")
    blocks = parse_blocks(prompt)
    new = next((b for b in blocks if b.new), None)
    others = [b for b in blocks if not b.new]
    if new is None or not title:
        return "fake reply: " + _words(prompt, 20)
    summary = new.lines.get("summary") or summarize_block(new)
    if title == "node_summary":
        return json.dumps({"summary": summarize_block(new)})
    if title == "dependency_summary":
        return json.dumps({"dependency_summary": dependency_line(others, summary)})
    m = int(schema.get("properties", {}).get("parents", {}).get("maxItems", 3)) if schema else 3
    parents = choose_parents(new, others, m) if others else []
    if title == "parent_selection":
        return json.dumps({"parents": parents})
    chosen = [b for b in others if f"N{b.index}" in {p["id"] for p in parents}]
    summary = summarize_block(new)
    return json.dumps(
        {"summary": summary, "parents": parents, "dependency_summary": dependency_line(chosen, summary)}
    )
