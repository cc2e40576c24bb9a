"""Render docs/configuration.md from the settings class, so the page cannot go stale.

    make docs-config                               # rewrite docs/configuration.md
    .venv/bin/python docs/gen_config.py            # the same
    .venv/bin/python docs/gen_config.py --check    # exit 1 if the committed page differs

Every field of `bot_memory.settings.MemorySettings` becomes a row: the environment variable(s)
it is read from, its type, its default and the comment written above or beside it in
bot_memory/settings.py. The `# --- name ---` lines there become the page's sections. The
hand-written part of the page (the settings file, BOT_MEMORY_SETTINGS) is the template
docs/templates/configuration.md, whose `<!-- settings -->` line is replaced by the tables.
tests/unit/test_docs.py renders the page in memory and fails when the committed file differs.
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import AliasChoices
from pydantic_core import PydanticUndefined

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = ROOT / "bot_memory" / "settings.py"
TEMPLATE = ROOT / "docs" / "templates" / "configuration.md"
PAGE = ROOT / "docs" / "configuration.md"
MARKER = "<!-- settings -->"
COMMAND = "make docs-config"  # or: .venv/bin/python docs/gen_config.py
SECTION = re.compile(r"^#\s*---\s*(.*?)\s*-*\s*$")

# What a field without a comment in settings.py does. A comment there wins: an entry here for
# a field that has one (or for no field) fails tests/unit/test_docs.py, so there is one source.
NOTES = {
    "database_url": "PostgreSQL to use; unset: an embedded server in the data directory",
    "db_pool_min": "the bot's connection pool, smallest",
    "llm_base_url": "an OpenAI-compatible server's base URL (`.../v1`); a key alone means"
    " api.openai.com",
    "llm_api_key": "its API key",
    "llm_model": "the model name (default `gpt-4o-mini` when a server or key is set)",
    "llm_output_usd_per_mtok": "the output price, dollars per million tokens (see the input price)",
    "extract_max_tokens": "the extraction call's max_tokens (reserved against budgets)",
    "consolidate_max_tokens": "the consolidation call's max_tokens (reserved against budgets)",
    "tick_deadline_seconds": "one tick's budget: a job is claimed only while its worst-case call"
    " still fits",
    "consolidation_max_candidates": "consolidation input: records offered to one call",
    "index_max_bytes": "the recall index a request gets, in bytes",
    "index_max_ids": "the recall index, in records",
    "failure_backoff_seconds": "a job whose call certainly failed is retried after this",
    "max_claims_per_input": "claims of the same input before a job stops for an operator",
    "request_budget_usd": "what one request may spend on model calls, its background jobs included",
    "workspace_budget_usd": "what one workspace may spend",
    "query_max_results": "query_memories: results per call",
    "query_max_source_ids": "query_memories: source IDs per call",
    "agent_max_tool_rounds": "the reference agent's tool rounds per answer",
    "sender_messages_per_second": "the refill rate of each sender's burst",
    "inactive_prune_days": "records unused this long are pruned",
    "workspace_max_records": "records kept per workspace (the least recently used go first)",
    "miniapp_port": "the port beside BOT_MEMORY_MINIAPP_HOST",
    "webhook_path": "the path the bot listens at (default: BOT_MEMORY_WEBHOOK_URL's path)",
    "webhook_secret": "the secret token Telegram sends back with every update; unset: a random"
    " one each run",
    "webhook_host": "where the webhook server listens",
    "webhook_port": "the port beside BOT_MEMORY_WEBHOOK_HOST",
}


@dataclass
class Section:
    title: str
    fields: list[str] = field(default_factory=list)


@dataclass
class Source:
    """What only the source file says: the comments, the sections and the written types."""

    sections: list[Section]
    comments: dict[str, str]
    types: dict[str, str]
    checks: list[str]


def _comment_lines(text: str) -> dict[int, str]:
    found: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            found[token.start[0]] = token.string.lstrip("#").strip()
    return found


def read_source(text: str) -> Source:
    lines = text.splitlines()
    comments = _comment_lines(text)
    tree = ast.parse(text)
    [cls] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "MemorySettings"]
    sections: list[Section] = []
    notes: dict[str, str] = {}
    types: dict[str, str] = {}
    checks: list[str] = []
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
            if name == "model_config":
                continue
            # The section is the nearest `# --- ... ---` line above the field.
            for number in range(node.lineno - 1, cls.lineno, -1):
                match = SECTION.match(lines[number - 1].strip())
                if match:
                    if not sections or sections[-1].title != match.group(1):
                        sections.append(Section(match.group(1)))
                    break
            else:
                if not sections:
                    sections.append(Section("General"))
            sections[-1].fields.append(name)
            above: list[str] = []
            number = node.lineno - 1
            while number in comments and lines[number - 1].lstrip().startswith("#"):
                if SECTION.match(lines[number - 1].strip()):
                    break
                above.insert(0, comments[number])
                number -= 1
            beside = [comments[n] for n in range(node.lineno, node.end_lineno + 1) if n in comments]
            notes[name] = " ".join([*above, *beside]).strip()
            types[name] = ast.unparse(node.annotation)
        elif isinstance(node, ast.FunctionDef) and any(
            "model_validator" in ast.unparse(d) for d in node.decorator_list
        ):
            inside = [
                comments[n]
                for n in range(node.lineno, node.end_lineno + 1)
                if n in comments and lines[n - 1].lstrip().startswith("#")
            ]
            message = " ".join(_error_text(n) for n in ast.walk(node) if _is_raise(n))
            if message:
                checks.append(f"{message} ({' '.join(inside)})" if inside else message)
    return Source(sections, notes, types, checks)


def _is_raise(node: ast.AST) -> bool:
    return isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)


def _error_text(node: ast.AST) -> str:
    """The error a validator raises, its interpolated values left out."""
    assert isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
    text = ""
    for arg in node.exc.args:
        # Implicitly joined literals are one JoinedStr; a value's format spec is left out.
        for part in arg.values if isinstance(arg, ast.JoinedStr) else [arg]:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                text += part.value
            elif isinstance(part, ast.FormattedValue):
                text += "\0"
    text = re.sub(r"\s*\([^()]*\0[^()]*\)", "", text).replace("\0", "")
    return re.sub(r"\b(BOT_MEMORY_[A-Z_]+)", r"`\1`", text.strip())


def env_names(name: str, alias: object) -> list[str]:
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    if isinstance(alias, str):
        return [alias]
    return [f"BOT_MEMORY_{name.upper()}"]


def show_type(written: str) -> str:
    # `str | None` reads as `str` next to the default "unset"; a table cell takes no `|`.
    parts = [p.strip() for p in written.split("|") if p.strip() != "None"]
    return " or ".join(f"`{p}`" for p in parts)


def show_default(value: object) -> str:
    if value is None or value is PydanticUndefined:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, frozenset | set | list | tuple) and not value:
        return "empty"
    if isinstance(value, float):
        return f"`{value:g}`"
    return f"`{value}`"


def check_notes(source: Source, fields: set[str]) -> list[str]:
    """Every setting is described once: by its comment in settings.py, else by NOTES."""
    problems = [
        f"{n}: in the settings class but not its body" for n in fields - source.comments.keys()
    ]
    for name in sorted(fields):
        comment = source.comments.get(name)
        if comment and name in NOTES:
            problems.append(f"{name}: has a comment in settings.py; drop it from NOTES")
        if not comment and name not in NOTES:
            problems.append(f"{name}: no comment in settings.py; describe it in NOTES")
    problems += [f"{name}: in NOTES but no setting" for name in sorted(NOTES.keys() - fields)]
    return [f"docs/gen_config.py: {p}" for p in problems]


def cell(text: str) -> str:
    return text.replace("|", "&#124;")


def render_tables(text: str) -> str:
    from bot_memory.settings import MemorySettings

    source = read_source(text)
    fields = MemorySettings.model_fields
    problems = check_notes(source, set(fields))
    if problems:
        raise SystemExit("\n".join(problems))
    out: list[str] = []
    for section in source.sections:
        out += [f"### {section.title[:1].upper()}{section.title[1:]}", ""]
        out += ["| variable | type | default | what it does |", "| --- | --- | --- | --- |"]
        for name in section.fields:
            info = fields[name]
            first, *others = env_names(name, info.validation_alias)
            variable = f"`{first}`"
            if others:
                variable += " (also " + ", ".join(f"`{o}`" for o in others) + ")"
            default = show_default(info.get_default(call_default_factory=True))
            note = source.comments[name] or NOTES[name]
            out.append(
                f"| {variable} | {show_type(source.types[name])} | {default} | {cell(note)} |"
            )
        out.append("")
    if source.checks:
        out += ["### Checked at start", ""]
        out += [f"- {check}" for check in source.checks]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def render() -> str:
    template = TEMPLATE.read_text(encoding="utf-8")
    if template.count(MARKER) != 1:
        raise SystemExit(f"{TEMPLATE} must hold the line {MARKER} once")
    tables = render_tables(SETTINGS.read_text(encoding="utf-8"))
    head = (
        "<!-- Generated by docs/gen_config.py from bot_memory/settings.py and "
        "docs/templates/configuration.md: edit those, then run " + COMMAND + " -->\n\n"
    )
    return head + template.replace(MARKER, tables.rstrip("\n"))


def main(argv: list[str]) -> int:
    page = render()
    if "--check" in argv:
        if PAGE.read_text(encoding="utf-8") != page:
            print(f"{PAGE.relative_to(ROOT)} is stale: run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(page, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main(sys.argv[1:]))
