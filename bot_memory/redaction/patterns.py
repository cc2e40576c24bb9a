"""Credential redaction for text that is sent to a model or stored as a note.

``redact(text)`` replaces every recognised credential with :data:`REDACTED` and leaves
everything else byte-for-byte unchanged.  What it recognises:

- bare tokens by their published format (``formats``: cloud, source hosting, package
  registries, chat platforms including Discord and Telegram bot tokens, payments, messaging,
  LLM providers, JWTs), private-key blocks, passwords in URLs
  (``postgres://bob:[REDACTED]@db/x``), webhook URLs (the secret part);
- labelled secrets (``labels``): any key holding a secret word, in assignments, flags,
  markup, headers and prose, in English, Russian and Chinese.  Labels, schemes and user names
  stay (``password: [REDACTED]``, ``Authorization: Bearer [REDACTED]``).

It cannot see a secret with neither a shape nor a label ("the code is hunter2").

``redact_sequence(texts)`` also reads consecutive messages of one speaker as one text, so a
key split over two of them is caught.

Cost: one pass.  A regex finds the runs of token characters long enough to hold a token and
lower-cased byte searches find the places a label or a structural form could start; only those
places are examined, so a message without any costs about one regex search, and the cost stays
linear in the length of the text (every open-ended repetition is possessive or bounded).

Stdlib only; pure functions; thread-safe.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from bot_memory.redaction.formats import token_spans
from bot_memory.redaction.labels import (
    COMMAND_ANCHORS,
    LABEL_ANCHORS,
    MARKUP_ANCHORS,
    is_placeholder,
    label_spans,
)

__all__ = ["REDACTED", "redact", "redact_sequence", "redact_value", "redacted_spans"]

REDACTED = "[REDACTED]"

# Spans replaced so far in this process (read by the metrics at scrape; only a text that held
# a credential pays for the count).
_redacted = [0]


def redacted_spans() -> int:
    """How many credential spans the functions here have replaced in this process."""
    return _redacted[0]


Span = tuple[int, int]

# ---------------------------------------------------------------------------
# structural forms: found before labels, so a label never sees half of one

_PEM_LABEL = r"(?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?"
_PEM = re.compile(
    r"-----BEGIN " + _PEM_LABEL + r"-----"
    r"(?:"
    # complete block: body up to the next "-----", which must be the END line
    r"(?:[^-]++|-(?!----))*+-----END " + _PEM_LABEL + r"-----"
    # truncated block (no END): the marker plus following base64 lines
    r"|(?:[ \t]*+(?:\r?\n|\\r?\\n)?[ \t]*+[A-Za-z0-9+/=]{16,}+)*+"
    r")"
)
# PuTTY private key files: the Private-Lines that follow the header.
_PUTTY = re.compile(
    r"PuTTY-User-Key-File-[0-9]: [^\n]{1,80}\n(?:[^\n]{0,200}\n){0,40}?Private-Lines: [0-9]{1,3}\n"
    r"(?P<s>(?:[A-Za-z0-9+/=]{1,80}+\n?)++)"
)

# scheme://user:password@host -> password.  Anchored on the literal "://"; the scheme is
# left untouched so it need not be part of the match.  The password is the longest run up
# to the last '@' of the authority (raw '@' in passwords is common in chat).
_URL_PASSWORD = re.compile(
    r"://(?<=[A-Za-z0-9]://)[^\s:/?#@\[\]\"'`<>]{0,256}+:(?!\[REDACTED\])"
    r"(?P<s>[^\s/?#\"'`<>]{1,256})@"
)
_SLACK_WEBHOOK = re.compile(
    r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/-]{8,}+)"
)
# https://discord.com/api/webhooks/<id>/<token>: the id stays, the token goes.
_DISCORD_WEBHOOK = re.compile(
    r"discord(?:app)?\.com/api/(?:v[0-9]{1,2}/)?webhooks/[0-9]{15,25}/(?P<s>[A-Za-z0-9_-]{30,}+)"
)
# Azure connection strings and SAS URLs.
_AZURE_KEY = re.compile(
    r"(?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey|SharedAccessSignature)=(?P<s>[^\s;\"'`,]++)"
)
_AZURE_SIG = re.compile(r"[?&;]sig=(?P<s>[^\s;&#\"'`,]++)")
# GitLab's session cookie: the name stays, its 32 hex characters go.
_GITLAB_SESSION = re.compile(r"(?<![A-Za-z0-9_])_gitlab_session=(?P<s>[0-9a-f]{32})(?![0-9a-f])")

# A Kubernetes Secret manifest (kind: Secret): the values under its data: are the secrets, in
# base64 (10 characters or more: "YWRtaW4=", admin, is a user name's length), inline or as a
# YAML block scalar on the next line.
_K8S_KIND = re.compile(r"(?im)^[ \t]*kind:[ \t]*([\"']?)secret\1[ \t]*\r?$")
_K8S_DATA = re.compile(r"(?m)^(?P<indent>[ \t]*)(?:data|stringData):[ \t]*\r?\n")
_K8S_ENTRY = re.compile(
    r"(?m)[ \t]++[\w.-]{1,253}+:[ \t]*+(?:[|>][-+]?[ \t]*+\r?\n[ \t]++)?([\"']?)"
    r"(?P<s>[A-Za-z0-9+/]{10,}+={0,3})\1[ \t]*+\r?$"
)


def _kubernetes_spans(text: str) -> list[Span]:
    if _K8S_KIND.search(text) is None:
        return []
    out: list[Span] = []
    for data in _K8S_DATA.finditer(text):
        indent, pos = data.group("indent"), data.end()
        while pos < len(text):  # the lines indented below data:, comments and blank lines
            end = text.find("\n", pos)
            end = len(text) if end == -1 else end
            line = text[pos:end]
            stripped = line.strip()
            if stripped and not (
                line.startswith(indent) and line[len(indent) : len(indent) + 1].isspace()
            ):
                break
            if stripped and not stripped.startswith("#"):
                m = _K8S_ENTRY.match(text, pos + len(indent), min(len(text), end + 1 + 4096))
                if m is not None:
                    out.append(m.span("s"))
                    end = max(end, text.rfind("\n", 0, m.end("s")))
            pos = end + 1
    return out


_STRUCTURAL: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("-----begin", _PEM),
    ("putty-user-key-file", _PUTTY),
    ("://", _URL_PASSWORD),
    ("hooks.slack.com", _SLACK_WEBHOOK),
    ("/webhooks/", _DISCORD_WEBHOOK),
    ("key=", _AZURE_KEY),  # (found through the label anchor "key")
    ("signature=", _AZURE_KEY),
    ("sig=", _AZURE_SIG),
    ("_gitlab_session=", _GITLAB_SESSION),
)


def _structural_spans(text: str, kinds: set[str]) -> list[Span]:
    out: list[Span] = []
    for kind, pattern in _STRUCTURAL:
        if kind not in kinds:
            continue
        for m in pattern.finditer(text):
            start, end = m.span("s") if pattern.groups else m.span()
            if pattern is _AZURE_KEY or pattern is _AZURE_SIG:
                end -= len(m.group("s")) - len(m.group("s").rstrip("."))
            if end > start and not is_placeholder(text[start:end]):
                out.append((start, end))
    return out


# ---------------------------------------------------------------------------
# the pass: where anything may start, in one regex over the folded text

# Each anchor is matched from its rarest character on (a look-behind checks the part before),
# and the alternatives share their prefixes, so the engine only stops at those characters: a
# few per hundred in ordinary text.  Label anchors come first and get the rarest.
_RARITY = b"<>~$+!#7zqxjkvbpygfwmucldrhsnioate0123456789_:/=-."
_LABELS = frozenset(LABEL_ANCHORS)
_OTHERS = (
    *(kind.encode() for kind, _ in _STRUCTURAL if kind != "key="),
    b"kind:",
    b"authorization",
    b"bearer",
    *COMMAND_ANCHORS,
    *MARKUP_ANCHORS,
)
_BY_TAIL: dict[bytes, bytes] = {}  # the part matched -> its anchor
for _anchor in (*LABEL_ANCHORS, *_OTHERS):
    _order = sorted(range(len(_anchor)), key=lambda i: (_RARITY.find(_anchor[i : i + 1]) % 99, i))
    _tail = next((_anchor[i:] for i in _order if _anchor[i:] not in _BY_TAIL), _anchor)
    _BY_TAIL.setdefault(_tail, _anchor)


def _trie(tails: dict[bytes, bytes]) -> bytes:
    """One alternation for all tails, as a prefix tree: at each character the engine tries
    only the tails that go on with it."""
    root: dict[bytes, dict] = {}  # type: ignore[type-arg]
    for tail, anchor in tails.items():
        node = root
        for i in range(len(tail)):
            node = node.setdefault(tail[i : i + 1], {})
        node[b""] = b"" if anchor == tail else b"(?<=" + re.escape(anchor) + b")"  # type: ignore[assignment]

    def build(node: dict) -> bytes:  # type: ignore[type-arg]
        alts = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if b"" in node:
            alts.append(node[b""])  # the shorter tail after the longer ones
        return alts[0] if len(alts) == 1 else b"(?:" + b"|".join(alts) + b")"

    return build(root)


_ANCHOR = re.compile(_trie(_BY_TAIL))


def _fold(text: str) -> bytes:
    """ASCII lower-cased, one byte per code point ('?' for the rest): indexes line up with
    ``text`` and ``bytes.find`` is fast whatever the script."""
    return text.encode("ascii", "replace").lower()


def _scan(folded: bytes) -> tuple[set[str], list[int]]:
    """The anchors present (as str), and where the label anchors start."""
    kinds: set[str] = set()
    positions: list[int] = []
    for m in _ANCHOR.finditer(folded):
        anchor = _BY_TAIL[m.group()]
        end = m.end()
        if anchor in _LABELS:
            positions.append(end - len(anchor))
            if anchor == b"key" and folded.startswith(b"=", end):
                kinds.add("key=")
        else:
            kinds.add(anchor.decode())
            if anchor == b"pass:":  # also the label "pass" ("db_pass: x")
                positions.append(end - 5)
    return kinds, positions


# ---------------------------------------------------------------------------
# spans


def _merge(spans: list[Span]) -> tuple[list[Span], bool]:
    """Sorted, disjoint spans; and whether one span started inside another and went on
    past it (the merged marker may then be read differently: see secret_spans)."""
    spans.sort()
    merged: list[Span] = []
    grown = False
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                grown = grown or start < merged[-1][1]
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged, grown


def _apply(text: str, spans: list[Span]) -> str:
    out: list[str] = []
    pos = 0
    for start, end in spans:
        out.append(text[pos:start])
        out.append(REDACTED)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _to_original(spans: list[Span], first: list[Span]) -> list[Span]:
    """Map spans found in the text with ``first`` replaced back to the original text: a
    position inside a marker stands for the whole span the marker replaced."""
    marker = len(REDACTED)
    starts: list[int] = []  # where each marker starts in the replaced text
    shifts: list[int] = []  # how much longer the original is up to the end of each marker
    shift = 0
    for start, end in first:
        starts.append(start - shift)
        shift += (end - start) - marker
        shifts.append(shift)

    def back(pos: int, *, end: bool) -> int:
        probe = pos - 1 if end else pos  # the character the boundary belongs to
        k = bisect.bisect_right(starts, probe) - 1
        if k < 0:
            return pos
        if probe < starts[k] + marker:
            return first[k][1] if end else first[k][0]
        return pos + shifts[k]

    return [(back(start, end=False), back(end, end=True)) for start, end in spans]


def _shifted(positions: list[int], spans: list[Span]) -> list[int]:
    """Positions in the text with ``spans`` replaced by the marker (none inside them)."""
    out: list[int] = []
    k = shift = 0
    for pos in positions:
        while k < len(spans) and spans[k][1] <= pos:
            shift += spans[k][1] - spans[k][0] - len(REDACTED)
            k += 1
        if k < len(spans) and spans[k][0] <= pos:
            continue
        out.append(pos - shift)
    return out


def _spans_once(text: str) -> tuple[list[Span], bool]:
    folded = _fold(text)
    kinds, positions = _scan(folded)
    found = token_spans(text, folded)
    if kinds:
        found += _structural_spans(text, kinds)
        if "kind:" in kinds:
            found += _kubernetes_spans(text)
    if found:  # labels read the text with those already replaced
        first, grown = _merge(found)
        replaced = _apply(text, first)
        second = label_spans(replaced, kinds, _shifted(positions, first))
        if not second:
            return first, grown
        spans, grown_too = _merge(first + _to_original(second, first))
        return spans, grown or grown_too
    if kinds or positions or not text.isascii():  # (Russian and Chinese labels)
        return _merge(label_spans(text, kinds, positions))
    return [], False


_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _glued(text: str, spans: list[Span]) -> bool:
    """Whether a span ends or starts inside a word: the marker then splits it, and what
    remains beside it may read as a new token."""
    return any(
        (end < len(text) and text[end] in _WORD_CHARS)
        or (start > 0 and text[start - 1] in _WORD_CHARS)
        for start, end in spans
    )


def secret_spans(text: str) -> list[Span]:
    """Sorted, disjoint spans of every credential in ``text``."""
    spans, grown = _spans_once(text)
    if spans and (grown or _glued(text, spans)):
        # read the result once more, as a second call would
        again, _ = _spans_once(_apply(text, spans))
        if again:
            spans, _ = _merge(spans + _to_original(again, spans))
    return spans


# ---------------------------------------------------------------------------
# public API


def redact(text: str) -> str:
    """Return ``text`` with every recognised credential replaced by :data:`REDACTED`."""
    if not text:
        return text
    spans = secret_spans(text)
    if not spans:
        return text
    _redacted[0] += len(spans)
    out = _apply(text, spans)
    # A credential's removal can leave its label next to what an outer label named: in
    # "password:Authorization: <token>" the header goes first, and "Authorization:" is then
    # the password's value. A second pass (only when the first changed something, and rare to
    # change anything) makes redacting twice the same as once.
    again = secret_spans(out)
    if again:
        _redacted[0] += len(again)
        out = _apply(out, again)
    return out


def redact_sequence(texts: Sequence[str]) -> list[str]:
    """Redact consecutive texts of one speaker, each alone and read together.

    A credential split over messages ("sk-proj-abc" then "def...") is caught when its parts,
    joined, have a known shape: each part is replaced where it stands.  Each two neighbours
    are read joined directly (a token cut in two) and joined by a blank (a label in one
    message, its value in the next); all of them joined, for a token cut in three or more.
    """
    if len(texts) < 2:
        return [redact(text) for text in texts]
    pieces: list[list[Span]] = [secret_spans(text) for text in texts]
    windows = [(k, k + 2, glue) for k in range(len(texts) - 1) for glue in ("", " ")]
    if len(texts) > 2:
        windows.append((0, len(texts), ""))
    for first, last, glue in windows:
        offsets: list[int] = []
        pos = 0
        for k in range(first, last):
            offsets.append(pos)
            pos += len(texts[k]) + len(glue)
        for start, end in secret_spans(glue.join(texts[first:last])):
            lo_k = bisect.bisect_right(offsets, start) - 1
            hi_k = bisect.bisect_right(offsets, max(start, end - 1)) - 1
            for k in range(lo_k, hi_k + 1):
                lo = max(start - offsets[k], 0)
                hi = min(end - offsets[k], len(texts[first + k]))
                if hi > lo:
                    pieces[first + k].append((lo, hi))
    out = []
    for text, spans in zip(texts, pieces, strict=True):
        if spans:
            merged = _merge(spans)[0]
            _redacted[0] += len(merged)
            out.append(_apply(text, merged))
        else:
            out.append(text)
    return out


def redact_value(value: object) -> object:
    """Return a copy of ``value`` with every ``str`` inside dicts/lists/tuples redacted.

    Dict keys are redacted too (they are strings that reach the model as well).  Other
    objects are returned as they are.
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_value(k): redact_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_value(v) for v in value)
    return value
