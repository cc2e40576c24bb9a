"""The root of every exception bot-memory raises: `except BotMemoryError` catches any of them.

Each class stays where it was defined and importable from where it was; BotMemoryError is an
extra base, and the builtin base each had is kept (a `RuntimeError` is still a RuntimeError), so
`except RuntimeError` and the like keep working. The tree, with each class's other bases in
brackets and the module that defines it:

BotMemoryError(Exception)                       bot_memory.errors
    DatabaseUnavailable(RuntimeError)           bot_memory.storage.database
        DatabaseUrlInvalid                      bot_memory.storage.database
        SchemaBehind                            bot_memory.storage.database
        ServerTooOld                            bot_memory.storage.database
        ExtensionMissing                        bot_memory.storage.database
    MemoryUnavailable(RuntimeError)             bot_memory.ingress.recorder
    SettingsFileError(ValueError)               bot_memory.settings_file
    MetricsUnavailable(RuntimeError)            bot_memory.metrics
    ModelError(RuntimeError)                    bot_memory.models.base
        BudgetExhausted                         bot_memory.billing.charging
    BudgetRefused(RuntimeError)                 bot_memory.storage.ledger
    WorkspaceGone(RuntimeError)                 bot_memory.storage.workspace
    TemplateMissing(LookupError)                bot_memory.storage.databases
    LookupFailed(RuntimeError)                  bot_memory.access.gate
    SourcesChanged(RuntimeError)                bot_memory.pipeline.inputs
    NotFound(LookupError)                       bot_memory.cli.operations
    DatasetError(ValueError)                    bot_memory.evaluation.formats
    JudgeUnavailable(RuntimeError)              bot_memory.evaluation.judge
    SharedDatabase(RuntimeError)                bot_memory.evaluation.harness
    SetupTooLate(RuntimeError)                  bot_memory_aiogram.setup
    CannotListen(RuntimeError)                  bot_memory_aiogram.app
    InitDataError(ValueError)                   bot_memory_aiogram.miniapp.init_data
    TicketError(ValueError)                     bot_memory_aiogram.miniapp.tickets
    Refusal                                     bot_memory_aiogram.miniapp.api
    ReplyRefused(AssertionError)                bot_memory_aiogram.testing.harness
    EmulatorError                               bot_memory_aiogram.testing.emulator.wire

A host imports BotMemoryError, the DatabaseUnavailable family, MemoryUnavailable,
SettingsFileError, MetricsUnavailable and ModelError from `bot_memory`; SetupTooLate from
`bot_memory_aiogram`; ReplyRefused and EmulatorError from `bot_memory_aiogram.testing`. The
others are raised and caught inside the library (or its commands) and are internal.

Outside the tree:

_Undo                                           bot_memory.storage.workspace
    Not an error: the signal that rolls a workspace transaction back after `tx.undo()` (all
    went well, nothing is to change). It is raised and caught in one function and never
    reaches a caller; under the root, an `except BotMemoryError` would take a rollback for a
    failure, should it ever be raised where a handler stands between it and its catch.

This package imports nothing, so every stage (and the aiogram layer) may import it.
"""

from __future__ import annotations

__all__ = ["BotMemoryError"]


class BotMemoryError(Exception):
    """The base of every exception bot-memory raises (see the module's docstring)."""
