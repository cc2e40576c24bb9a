"""A migration, once committed, is never edited: a database migrated by it keeps what it did,
so a later change is a new migration (032 repairs the two that were edited in place). Adding a
migration adds its line here; a changed hash means an edited migration."""

from __future__ import annotations

import hashlib
from pathlib import Path

MIGRATIONS = Path(__file__).resolve().parents[2] / "bot_memory" / "storage" / "migrations"

# The first 16 hex digits of each file's SHA-256.
FROZEN = {
    "001_schema.sql": "83a3cd811058db43",
    "002_rows_and_tenancy.sql": "62a4dc7fd28d1109",
    "003_forgotten_answers.sql": "aa91762cfb9419a4",
    "004_attempts.sql": "5e9aa7305a3c57d0",
    "005_commands_and_timeouts.sql": "5318488667330aea",
    "006_operators.sql": "b90650547e18ed7d",
    "007_erased_answers.sql": "1ce2d569f5c304bd",
    "008_requests_id_not_unique.sql": "657e392c3f209562",
    "009_search.sql": "3c86d65ef73a3102",
    "010_scope_wakes.sql": "402f4c76cb82eb2d",
    "011_recall_rows.sql": "c5f4cab994e23329",
    "012_worker_models.sql": "530d168aff36814f",
    "013_search_inline.sql": "23b961198cef133d",
    "014_settings_seen.sql": "a71d95553bd477e2",
    "015_workspace_functions.sql": "1d6d0fb2773c15b4",
    "016_single_statement_steps.sql": "3923080a7c269f88",
    "017_extraction_commit.sql": "d820bb44dd206abb",
    "018_recall_rules_once.sql": "ba5931928e0129ac",
    "019_retention_checked_at_commit.sql": "6df2b5665d18ee60",
    "020_corrections.sql": "381a67f57ef67ba4",
    "021_fair_cap.sql": "7177b5328a95ca38",
    "022_used_tickets.sql": "736d2ea3900207fb",
    "023_fair_share.sql": "b073f1f4f0963ba1",
    "024_commits_take_one_document.sql": "d7633ba768c73591",
    "025_corrections_recheck_and_undo.sql": "d9d6d2d5472ded80",
    "026_fair_cap_spares_the_smallest.sql": "b78e635a5af3334c",
    "027_scopes_due_since.sql": "c2c3e843288d854d",
    "028_answers_depend_on_records.sql": "227e33564038baec",
    "029_scopes_due_minute.sql": "9ed1b320fffc0edc",
    "030_ledger_attempts_in_one_statement.sql": "689ac02f8a54e79c",
    "031_finish_in_one_statement.sql": "d24a10abacf680cb",
    "032_functions_after_030_031.sql": "ac0f5cee374f3302",
}


def test_no_migration_was_edited_and_each_is_listed() -> None:
    found = {
        # Line endings as committed, whatever a checkout makes of them.
        path.name: hashlib.sha256(path.read_bytes().replace(b"\r\n", b"\n")).hexdigest()[:16]
        for path in sorted(MIGRATIONS.glob("*.sql"))
    }
    edited = sorted(name for name in FROZEN if found.get(name) != FROZEN[name])
    assert not edited, f"edited after they were committed (write a new migration): {edited}"
    new = {name: digest for name, digest in found.items() if name not in FROZEN}
    assert not new, "add to FROZEN: " + ", ".join(f'"{n}": "{d}"' for n, d in new.items())
