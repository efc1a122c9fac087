"""The store's schema as numbered migrations, applied in order and recorded in `cw_schema`.

Table names carry the `cw_` prefix so the file can also hold the LLM response cache (`llm_cache`)
or anything else. A migration is a list of statements for both dialects; `{float}` stands for the
dialect's double type, `{serial}` for its auto-numbered primary key. Never edit a released migration: append a new one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "sessions, steps, nodes, edges, labels",
        (
            """CREATE TABLE cw_sessions (
                id TEXT PRIMARY KEY,
                conversation_key TEXT,
                root TEXT NOT NULL,
                root_digest TEXT NOT NULL,
                config TEXT NOT NULL,
                format TEXT,
                steps INTEGER NOT NULL DEFAULT 0,
                meta TEXT NOT NULL DEFAULT '{{}}',
                created_at {float} NOT NULL,
                updated_at {float} NOT NULL
            )""",
            "CREATE INDEX cw_sessions_by_key ON cw_sessions (conversation_key)",
            """CREATE TABLE cw_steps (
                session_id TEXT NOT NULL REFERENCES cw_sessions (id) ON DELETE CASCADE,
                idx INTEGER NOT NULL,
                digest TEXT NOT NULL,
                kind TEXT NOT NULL,
                thought TEXT NOT NULL,
                action TEXT NOT NULL,
                observation TEXT NOT NULL,
                messages TEXT NOT NULL,
                images INTEGER NOT NULL,
                meta TEXT NOT NULL,
                created_at {float} NOT NULL,
                PRIMARY KEY (session_id, idx)
            )""",
            """CREATE TABLE cw_nodes (
                session_id TEXT NOT NULL,
                idx INTEGER NOT NULL,
                summary TEXT NOT NULL,
                dependency_summary TEXT NOT NULL,
                validation_status TEXT NOT NULL,
                annotated_at {float} NOT NULL,
                PRIMARY KEY (session_id, idx),
                FOREIGN KEY (session_id, idx) REFERENCES cw_steps (session_id, idx) ON DELETE CASCADE
            )""",
            """CREATE TABLE cw_edges (
                session_id TEXT NOT NULL,
                child INTEGER NOT NULL,
                parent INTEGER NOT NULL,
                rank INTEGER NOT NULL,
                confidence {float} NOT NULL,
                reason TEXT NOT NULL,
                PRIMARY KEY (session_id, child, parent),
                FOREIGN KEY (session_id, child) REFERENCES cw_nodes (session_id, idx) ON DELETE CASCADE
            )""",
            """CREATE TABLE cw_labels (
                session_id TEXT NOT NULL,
                by_idx INTEGER NOT NULL,
                seq INTEGER NOT NULL,
                idx INTEGER NOT NULL,
                status TEXT NOT NULL,
                reason TEXT NOT NULL,
                PRIMARY KEY (session_id, by_idx, seq),
                FOREIGN KEY (session_id, by_idx) REFERENCES cw_nodes (session_id, idx) ON DELETE CASCADE
            )""",
        ),
    ),
    Migration(
        2,
        "session owners and store secrets",
        (
            "ALTER TABLE cw_sessions ADD COLUMN owner TEXT",
            "CREATE INDEX cw_sessions_by_owner ON cw_sessions (owner)",
            "CREATE TABLE cw_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
        ),
    ),
    Migration(
        3,
        "what extraction computed per node: facts, token counts, placeholders, test results",
        tuple(
            f"ALTER TABLE cw_nodes ADD COLUMN {column}"
            for column in (
                "full_tokens INTEGER",
                "compressed_tokens INTEGER",
                "facts TEXT",
                "tests TEXT",
                "placeholders TEXT",
            )
        ),
    ),
    Migration(
        4,
        "the lazy context as frozen at a session's last cut",
        (
            """CREATE TABLE cw_cuts (
                session_id TEXT PRIMARY KEY REFERENCES cw_sessions (id) ON DELETE CASCADE,
                step INTEGER NOT NULL,
                state TEXT NOT NULL,
                saved_at {float} NOT NULL
            )""",
        ),
    ),
    Migration(
        5,
        "each forwarded request: tokens sent and in full, simulated cache, the provider's usage, cuts",
        (
            """CREATE TABLE cw_requests (
                id {serial},
                session_id TEXT NOT NULL REFERENCES cw_sessions (id) ON DELETE CASCADE,
                at {float} NOT NULL,
                wire TEXT NOT NULL,
                status INTEGER NOT NULL,
                streamed INTEGER NOT NULL,
                step INTEGER NOT NULL,
                added INTEGER NOT NULL,
                latency_ms {float} NOT NULL,
                sent_tokens INTEGER NOT NULL,
                full_tokens INTEGER NOT NULL,
                tool_tokens INTEGER NOT NULL,
                cached_tokens INTEGER NOT NULL,
                sim_sent {float} NOT NULL,
                sim_full {float} NOT NULL,
                usage TEXT NOT NULL,
                input_tokens INTEGER,
                cache_read_tokens INTEGER,
                cache_write_tokens INTEGER,
                output_tokens INTEGER,
                billed {float},
                passthrough {float},
                miss_reason TEXT,
                fallback TEXT,
                test_status TEXT,
                cut TEXT
            )""",
            "CREATE INDEX cw_requests_by_session ON cw_requests (session_id, id)",
        ),
    ),
    Migration(
        6,
        "a caller's sessions listed in order from the index (issue 44: listing read the whole table)",
        (
            "CREATE INDEX cw_sessions_by_owner_created ON cw_sessions (owner, created_at, id)",
            "DROP INDEX cw_sessions_by_owner",
        ),
    ),
    Migration(
        7,
        "each session's recall capability, found by index (issue 44: an unknown one read every session)",
        (
            "ALTER TABLE cw_sessions ADD COLUMN capability TEXT",
            "CREATE INDEX cw_sessions_by_capability ON cw_sessions (capability)",
        ),
    ),
    Migration(
        8,
        "why a request's usage is missing, malformed or partial; counts over 10^9 clamped (issue 53: sums overflowed)",
        (
            "ALTER TABLE cw_requests ADD COLUMN usage_note TEXT",
            *(
                f"UPDATE cw_requests SET usage_note = COALESCE(usage_note || '; ', '') || '{column} reported as ' "
                f"|| CAST({column} AS TEXT) || ', clamped', {column} = 1000000000 WHERE {column} > 1000000000"
                for column in ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")
            ),
        ),
    ),
    Migration(
        9,
        "each request forwarded outside any session, per owner (its usage was counted, never stored)",
        (
            """CREATE TABLE cw_passed (
                id {serial},
                owner TEXT,
                reason TEXT NOT NULL,
                at {float} NOT NULL,
                wire TEXT NOT NULL,
                status INTEGER NOT NULL,
                streamed INTEGER NOT NULL,
                latency_ms {float} NOT NULL,
                usage TEXT NOT NULL,
                input_tokens INTEGER,
                cache_read_tokens INTEGER,
                cache_write_tokens INTEGER,
                output_tokens INTEGER,
                billed {float},
                passthrough {float},
                miss_reason TEXT,
                usage_note TEXT
            )""",
            "CREATE INDEX cw_passed_by_owner ON cw_passed (owner, id)",
        ),
    ),
)

SCHEMA_TABLE = """CREATE TABLE IF NOT EXISTS cw_schema (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at {float} NOT NULL
)"""


def latest_version(migrations: tuple[Migration, ...] = MIGRATIONS) -> int:
    return max((m.version for m in migrations), default=0)
