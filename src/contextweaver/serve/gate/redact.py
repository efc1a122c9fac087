"""Credentials out of URLs before a URL is shown anywhere: health, banner, logs, error bodies.

An upstream or store URL may carry a password in its userinfo (`https://user:key@host`) or a key in
its query string (`?key=...`, `?api-key=...`, `?sig=...`, Gemini and Azure style). Every query value
is masked, not only well-known names: a URL shown to a person needs the host and path, never them.
A recall path's capability is a credential too (it reads a session): masked the same way.
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"
_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>]+")
_QUERY_VALUE = re.compile(r"([?&][^\s=&?\"'<>]+=)[^\s&\"'<>]+")
"""A query value in a path without scheme and host (an upstream's 404 echoing `/v1/models?key=...`)."""
_RECALL_CAP = re.compile(r"(/contextweaver/recall/)[^/\s?\"'<>]+")
MAX_PATH = 200
"""Characters of a request path shown in a log line (a path of 5,000 digits is cut)."""


def redact_url(url: str) -> str:
    """The URL with its userinfo password and every query value replaced by ***."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}:{MASK}@{host}" if ":" in user else f"{MASK}@{host}"
    query = parts.query
    if query:
        query = urlencode([(name, MASK) for name, _ in parse_qsl(query, keep_blank_values=True)], safe="*")
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def redact_text(text: str) -> str:
    """Every URL inside a free text redacted (an exception's message, a log line, an upstream's error),
    and every query value and recall capability of a bare path."""
    text = _QUERY_VALUE.sub(rf"\g<1>{MASK}", _URL.sub(lambda match: redact_url(match.group(0)), text))
    return _RECALL_CAP.sub(rf"\g<1>{MASK}", text)


def shown_path(path: str) -> str:
    """A request path as a log line shows it: redacted, and cut at MAX_PATH characters."""
    shown = redact_text(path)
    return shown if len(shown) <= MAX_PATH else f"{shown[:MAX_PATH]}... ({len(shown)} characters)"


class RedactingFilter(logging.Filter):
    """Rewrites a log record's message and arguments so no URL in it keeps a credential."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact_text(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_redacted_arg(arg) for arg in record.args)
        elif isinstance(record.args, dict):
            record.args = {key: _redacted_arg(arg) for key, arg in record.args.items()}
        return True


def _redacted_arg(arg: Any) -> Any:
    if isinstance(arg, (int, float)) or arg is None:
        return arg
    text = str(arg)
    cleaned = redact_text(text)
    return arg if cleaned == text else cleaned


def install_log_redaction(*names: str) -> None:
    """Redact URLs in the records of these loggers (httpx logs each request's full URL at INFO)."""
    for name in names or ("httpx", "httpcore", "uvicorn", "uvicorn.error", "contextweaver"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactingFilter) for f in logger.filters):
            logger.addFilter(RedactingFilter())
