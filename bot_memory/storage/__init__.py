"""Storage: PostgreSQL and everything written to it, the only stage that speaks SQL: every
statement is a method of a class here, with the SQL beside it.

`database` (pools, migrations, the embedded server and one a killed process left; stores for
the other stages), `store` (`Store`: conversations, requests, usage, chats, and the areas as
its properties; `atomic()` for one transaction), `workspace` (`WorkspaceTx`, the locked
workspace transaction: records, scopes, tombstones, recall rows), the areas (`jobs`, `ledger`,
`planning`, `commits`, `forgetting`, `search`, `erasure`, `tenancy`, `traces`, `operations`,
`watch`, `databases`, `workers`, `tickets`), what they share (`rows`, `limits`, `documents`,
`handle`, `statements`, `gated`), `schema.sql` (the schema and every server function as they
are now), `superseded.sql` (what the previous release still calls) and `migrations/` (the
history).

`__all__` is what the other stages and the adapter may use; the rest is the package's own.
"""

from __future__ import annotations

from bot_memory.storage.database import (
    Database,
    DatabaseUnavailable,
    DatabaseUrlInvalid,
    EmbeddedPostgres,
    ExtensionMissing,
    SchemaBehind,
    ServerTooOld,
    apply_migrations,
    is_connection_error,
    latest_version,
    migrate,
)
from bot_memory.storage.databases import (
    Databases,
    NotDropped,
    TemplateMissing,
    drop_database,
    migrate_database,
)
from bot_memory.storage.erasure import Erasure, SweepReport
from bot_memory.storage.jobs import Backlog, Job, Jobs, Snapshot, SnapshotSource, StopKind
from bot_memory.storage.ledger import Attempt, AttemptOutcome, BudgetRefused, Ledger, money
from bot_memory.storage.limits import Limits, recall_limits
from bot_memory.storage.operations import Operations, OperatorStatus
from bot_memory.storage.requests import (
    Closing,
    Requests,
    RequestStatus,
    SourceMessage,
    schedule_scope,
)
from bot_memory.storage.rows import (
    RECORD_COLUMNS,
    RECORD_SOURCES,
    HistoryMessage,
    record_from_row,
    scope_from_row,
)
from bot_memory.storage.search import Excerpt, Search
from bot_memory.storage.store import ChatInfo, ScopeSummary, Store, UsageEntry
from bot_memory.storage.tenancy import MoveReport, Tenancy
from bot_memory.storage.tickets import Tickets
from bot_memory.storage.traces import Occurrence, Traces
from bot_memory.storage.watch import Watch
from bot_memory.storage.workspace import (
    WorkspaceGone,
    WorkspaceTx,
    WorkspaceView,
    lock_workspace,
    read_workspace,
)

__all__ = [
    "RECORD_COLUMNS",
    "RECORD_SOURCES",
    "Attempt",
    "AttemptOutcome",
    "Backlog",
    "BudgetRefused",
    "ChatInfo",
    "Closing",
    "Database",
    "DatabaseUnavailable",
    "DatabaseUrlInvalid",
    "Databases",
    "EmbeddedPostgres",
    "Erasure",
    "Excerpt",
    "ExtensionMissing",
    "HistoryMessage",
    "Job",
    "Jobs",
    "Ledger",
    "Limits",
    "MoveReport",
    "NotDropped",
    "Occurrence",
    "Operations",
    "OperatorStatus",
    "RequestStatus",
    "Requests",
    "SchemaBehind",
    "ScopeSummary",
    "Search",
    "ServerTooOld",
    "Snapshot",
    "SnapshotSource",
    "SourceMessage",
    "StopKind",
    "Store",
    "SweepReport",
    "TemplateMissing",
    "Tenancy",
    "Tickets",
    "Traces",
    "UsageEntry",
    "Watch",
    "WorkspaceGone",
    "WorkspaceTx",
    "WorkspaceView",
    "apply_migrations",
    "drop_database",
    "is_connection_error",
    "latest_version",
    "lock_workspace",
    "migrate",
    "migrate_database",
    "money",
    "read_workspace",
    "recall_limits",
    "record_from_row",
    "schedule_scope",
    "scope_from_row",
]
