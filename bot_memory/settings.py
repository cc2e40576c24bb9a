"""Every limit memory keeps (idle window, batch and index sizes, retries, retention, budgets),
as one settings class.

Each field's default is what memory does out of the box (docs/configuration.md is generated
from this file); each is read from BOT_MEMORY_<NAME>. Connection settings that hosts already
know by their usual names (DATABASE_URL, LLM_*) keep those names.
A settings file named by BOT_MEMORY_SETTINGS is read below the environment (settings_file.py),
so a bot and its `bot-memory worker` can share one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Self

from pydantic import AliasChoices, Field, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from bot_memory.settings_file import settings_file_source


def _env(name: str, *fallbacks: str) -> AliasChoices:
    """Accept both the bare name hosts use (DATABASE_URL) and the prefixed one, then any
    names the ecosystem uses for the same thing (the openai SDK's OPENAI_*)."""
    return AliasChoices(name, f"BOT_MEMORY_{name}", *fallbacks)


class MemorySettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="BOT_MEMORY_", extra="ignore", populate_by_name=True, frozen=True
    )

    # --- where things live -------------------------------------------------------------------
    database_url: str | None = Field(default=None, validation_alias=_env("DATABASE_URL"))
    data_dir: Path = Path(".bot_memory")  # embedded PostgreSQL's data lives in data_dir/pg
    # One named workspace (tenant) for the whole bot; unset: every group and every user's
    # private chat is its own workspace (or whatever the host's resolver says).
    workspace: str | None = None
    db_pool_min: int = 1
    # The bot's connection pool, largest (asyncpg's default): under load each statement holds
    # its connection until the busy event loop reads the result.
    db_pool_max: int = 10
    # A worker in the bot's process waits (at most this long) before each database step
    # while messages are being handled: requests first. 0: no waiting.
    worker_yield_max_seconds: float = 0.02
    worker_pool_max: int = 2  # the worker's own connections, so ingress never waits for it
    # Prepared statements asyncpg keeps per connection (asyncpg's default, 100). 0 behind a
    # pooler in transaction mode (PgBouncer's pool_mode=transaction, Supavisor, RDS Proxy):
    # there a statement prepared on one server connection is not there on the next.
    db_statement_cache_size: int = Field(default=100, ge=0)
    # A direct connection (not through a transaction pooler) for migrations, at start or with
    # `bot-memory migrate`; unset: DATABASE_URL.
    migration_database_url: str | None = None
    # Apply pending migrations when the bot (or a command) starts. false: a process that finds
    # the schema behind stops with one line saying so; run `bot-memory migrate` at deploy.
    migrate_on_start: bool = True

    # --- the model (an OpenAI-compatible server; none configured = the offline model) --------
    llm_base_url: str | None = Field(
        default=None, validation_alias=_env("LLM_BASE_URL", "OPENAI_BASE_URL")
    )
    llm_api_key: str | None = Field(
        default=None, validation_alias=_env("LLM_API_KEY", "OPENAI_API_KEY")
    )
    llm_model: str | None = Field(default=None, validation_alias=_env("LLM_MODEL", "OPENAI_MODEL"))
    llm_timeout_seconds: float = 30.0  # one read of the response
    # The whole call (connect, send, the complete response): shorter than the job lease, so a
    # call that is still running was certainly not rescued by another worker.
    llm_call_deadline_seconds: float = 60.0
    # Prices turn token usage into charges; unset: the shipped table for known models.
    llm_input_usd_per_mtok: float | None = None
    llm_output_usd_per_mtok: float | None = None
    # Worst case a call may produce (sent as max_tokens, reserved against budgets).
    answer_max_tokens: int = 1024
    extract_max_tokens: int = 1500
    consolidate_max_tokens: int = 1500

    # --- background pipeline ------------------------------------------------------------------
    run_worker: bool = True  # false: this bot process leaves the pipeline to `bot-memory worker`
    set_commands: bool = True  # add memory's commands to the bot's menus at start
    tick_interval_seconds: float = 60.0  # "checks once per minute"
    tick_deadline_seconds: float = 90.0
    idle_window_seconds: float = 1800.0  # 30 minutes
    batch_max_bytes: int = 24_000  # recent source batch ceiling
    summary_max_bytes: int = 4_000  # extraction output
    consolidation_max_candidates: int = 48
    index_max_bytes: int = 4_500
    index_max_ids: int = 12
    lease_seconds: float = 120.0  # two-minute job lease
    failure_backoff_seconds: float = 3600.0
    max_claims_per_input: int = 3
    shutdown_grace_seconds: float = 30.0  # an in-flight call may finish and commit this long
    settle_retry_seconds: float = 600.0  # a paid answer is kept while the database is away
    ingress_buffer_max: int = 1000  # directed messages kept in memory while PostgreSQL is down
    existing_memory_in_batch: int = 8  # validated memories that may accompany a new batch
    # Each accompanies it with this much of its summary; one longer is shown in part, and a
    # correction cannot replace it (what it holds past the cut could not be carried over).
    existing_memory_summary_chars: int = 1000
    # A conversation that corrects an existing record replaces it (false: both stay current).
    corrections: bool = True
    # Requests a host explicitly keeps open stop holding their scope back after this long.
    open_request_abandon_seconds: float = 6 * 3600.0
    # Any other request still open this long was lost with its process: it stops holding too.
    request_timeout_seconds: float = 900.0
    # Requests closed with nothing to keep (unanswered, failed) are written together, one
    # statement for all closed within this long, off the handler's path. Each batch is a commit
    # that contends with ingress's own; memory reads these closings minutes later (the idle
    # window), and one a crash loses is closed by the request timeout.
    request_close_linger_seconds: float = 0.1
    # An answer a handler returns (`return message.answer(...)`) that has not gone through the
    # bot's session this long after the handler went in a webhook's HTTP response: its request
    # is closed with the method's text.
    returned_answer_grace_seconds: float = 1.0
    finished_job_retention_days: float = 7.0  # finished job rows, for operators

    # --- budgets (dollars) --------------------------------------------------------------------
    request_budget_usd: float = 1.0
    workspace_budget_usd: float = 100.0

    # --- recall and tools ---------------------------------------------------------------------
    pending_directory_max: int = 8  # directory used while consolidation is pending
    # Beside the index (or directory), each request carries the records that best match its
    # message, found by query_memories' search; 0 turns the matches off.
    recall_matches_max_records: int = 4
    # The whole recalled block, matches included: matches are added only while it fits.
    recall_block_max_bytes: int = 6_000
    query_max_results: int = Field(default=12, ge=1)
    query_max_source_ids: int = 20
    # ordinary conversation context beside the index
    agent_history_messages: int = Field(default=10, ge=0)
    agent_max_tool_rounds: int = 4
    agent_message_max_bytes: int = 8_000  # one message's share of the agent prompt

    # --- fair sharing between chats ------------------------------------------------------------
    # A person writes about one message a second: each sender may send this many at once, then
    # this many a second; beyond that a flood's excess is skipped, with one notice.
    sender_burst_messages: int = 20
    sender_messages_per_second: float = 1.0
    chat_max_in_flight: int = 4  # handled at once per chat, the others wait; 0: no limits
    # Inside a chat, the members take turns (round-robin) for those slots, and in a group each
    # member may have this many messages in flight or waiting; beyond it a flood's excess is
    # skipped, with one notice.
    member_max_queued: int = Field(default=12, ge=1)
    # A group member holds at most this many of the chat's slots, so that messages a slow model
    # holds cannot take every slot while another member waits (below chat_max_in_flight).
    member_max_in_flight: int = Field(default=3, ge=1)

    # --- retention ----------------------------------------------------------------------------
    message_retention_days: float | None = None  # keep messages no longer than this (none: chat's)
    inactive_prune_days: int = 30
    workspace_max_records: int = 256
    # The cap shared fairly: past it, a scope (or one speaker's notes) holding more than this
    # share of it gives its least recently used records first; when nobody is over their share,
    # the least recently used of the scopes holding the most (never a smaller one's last).
    scope_max_share: float = Field(default=0.5, gt=0, le=1)

    # --- authorization ------------------------------------------------------------------------
    admin_user_ids: frozenset[int] = frozenset()  # workspace owners/admins beyond chat admins
    member_cache_seconds: float = 300.0  # getChatMember answers, refreshed by chat_member updates

    # --- the memory manager Mini App (bot_memory_aiogram.miniapp) ------------------------------
    # Its public HTTPS URL (Telegram opens only HTTPS pages); unset: nothing is served and no
    # button is shown. The page is served under this URL's path.
    miniapp_url: str | None = None
    miniapp_host: str = "127.0.0.1"  # where `bot-memory run` serves it (behind your proxy)
    miniapp_port: int = 8080
    miniapp_auth_max_age_seconds: float = 3600.0  # initData older than this is refused
    miniapp_link_seconds: float = 3600.0  # a group Topic's signed scope link lives this long
    miniapp_download_seconds: float = 300.0  # an export download link lives this long
    # A group member's standing is asked of Telegram (getChatMember) at every page open and at
    # least this often while the page is used, whatever the membership cache holds: Telegram
    # tells a bot that is not an admin nothing when a member leaves.
    miniapp_member_check_seconds: float = Field(default=60.0, ge=0)
    miniapp_page_size: int = 30  # memories per page load
    miniapp_max_selection: int = 50  # memories forgotten at once

    # --- `bot-memory run` with a webhook instead of long polling --------------------------------
    # The URL Telegram posts updates to (HTTPS in production, behind your proxy); unset: long
    # polling. The bot listens on webhook_host:webhook_port at webhook_path (default: the URL's
    # path); Telegram sends webhook_secret back in a header, and other posts are refused.
    webhook_url: str | None = None
    webhook_path: str | None = None
    webhook_secret: str | None = None
    webhook_host: str = "127.0.0.1"
    webhook_port: int = 8081

    # --- metrics and health (docs/operating.md#metrics-and-health) -----------------------------
    # Count Prometheus metrics (needs prometheus-client: pip install 'bot-memory[metrics]');
    # false: nothing is counted and /metrics answers 503.
    metrics_enabled: bool = True
    # Where `bot-memory run` (long polling) and `bot-memory worker` serve /metrics and /healthz;
    # unset: not served (a webhook bot mounts them on its own app: bot_memory_aiogram.metrics).
    metrics_port: int | None = None
    metrics_host: str = "127.0.0.1"  # the metrics port's address (behind your scraper's network)
    # /healthz: the database must answer SELECT 1 within this long.
    health_timeout_seconds: float = 2.0

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Code, then the environment, then the host's settings file (read at each construction,
        # so `--settings` set by the command line is seen), then the defaults.
        from_file = settings_file_source(settings_cls)
        files = (from_file,) if from_file is not None else ()
        return (init_settings, env_settings, *files, file_secret_settings)

    @model_validator(mode="after")
    def _call_fits_its_lease(self) -> Self:
        # A call that could outlive its job's lease might be rescued and made twice.
        if self.llm_call_deadline_seconds >= self.lease_seconds:
            raise ValueError(
                f"BOT_MEMORY_LLM_CALL_DEADLINE_SECONDS ({self.llm_call_deadline_seconds:g}) must be"
                f" shorter than BOT_MEMORY_LEASE_SECONDS ({self.lease_seconds:g})"
            )
        return self

    @model_validator(mode="after")
    def _miniapp_is_https(self) -> Self:
        # Telegram refuses web_app buttons whose URL is not HTTPS: say so at start instead.
        if self.miniapp_url is not None and not self.miniapp_url.startswith("https://"):
            raise ValueError(
                f"BOT_MEMORY_MINIAPP_URL must be an https:// URL (got {self.miniapp_url!r})"
            )
        return self
