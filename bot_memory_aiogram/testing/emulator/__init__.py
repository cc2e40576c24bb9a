"""A loopback Telegram Bot API emulator for tests and the offline demo.

The emulator is an :mod:`aiohttp.web` server that speaks the subset of the Bot API a
long-polling aiogram bot needs.  Point aiogram at it with::

    emu = BotAPIEmulator()
    await emu.start()
    bot = Bot(
        token=emu.token,
        session=AiohttpSession(api=TelegramAPIServer.from_base(emu.base_url)),
    )

and drive the bot by pushing updates (:meth:`BotAPIEmulator.push_message`, ...) and
inspecting what the bot sent (:attr:`BotAPIEmulator.calls`, :attr:`BotAPIEmulator.sent`,
:meth:`BotAPIEmulator.wait_for_sent`).

It deliberately does not import aiogram: it is the server, aiogram is the client under
test.  Behaviour mirrors Telegram where it matters to a bot:

* ``{"ok": true, "result": ...}`` / ``{"ok": false, "error_code": ..., "description": ...}``
  envelopes, 401 for a wrong token, 404 for unknown paths;
* ``getUpdates`` honours ``offset`` (confirmation), negative offsets, ``limit``,
  ``allowed_updates`` (remembered between calls; updates of other types are discarded)
  and real long polling (``timeout`` seconds, woken immediately by a push, ended
  promptly when the emulator stops or the client disconnects).  A second concurrent
  ``getUpdates`` terminates the first one with 409 Conflict, and ``getUpdates`` while a
  webhook is set answers 409 as well;
* message ids are per chat and shared by user and bot messages; replies carry the full
  ``reply_to_message`` (without its own nested reply, as Telegram does);
* ``sendMessage``/``editMessageText`` validate text (empty, longer than 4096 characters)
  and, for ``parse_mode=HTML``, parse the markup like Telegram (unsupported tags,
  unbalanced tags and stray ``<`` are 400 "can't parse entities" errors) so that the
  resulting ``Message.text``/``entities`` are what Telegram would produce.  Other parse
  modes are stored verbatim without validation;
* replying to an unknown message is 400 "message to be replied not found" unless
  ``allow_sending_without_reply`` is set.

Request parameters are recorded as :class:`ApiCall` objects.  aiogram sends every
parameter as a form field string; the emulator decodes them back: values that parse as
JSON objects/arrays become ``dict``/``list``, numeric ``*_id`` fields (``chat_id``,
``message_id``, ``message_thread_id``, ``user_id``, ...) and ``offset``/``limit``/
``timeout``-style fields become ``int``, ``"true"``/``"false"`` of boolean-looking fields
(``disable_*``, ``protect_*``, ``allow_*``, ``is_*``, ``can_*``, ``show_*``, ``drop_*``,
...) become ``bool``; everything else (notably ``text``) stays a string.

One module per area of the Bot API, each answering its own methods (``_methods``):
``updates`` (getUpdates, webhooks, raw updates), ``messages`` (what users send and the bot
sends, edits, deletes, copies, forwards), ``media`` (photos, documents, albums and the other
``send*``), ``chats`` (getChat, getChatMember, who is admin), ``buttons`` (button presses and
their answers), ``commands`` (command menus). They share ``server`` (HTTP, recorded calls,
injected failures, the update queue, waiting) and ``records`` (the users, chats and messages
known); ``wire``, ``entities`` and ``parse_mode`` are the pure parts.
"""

from __future__ import annotations

from bot_memory_aiogram.testing.emulator.buttons import ButtonMethods
from bot_memory_aiogram.testing.emulator.chats import ChatMethods
from bot_memory_aiogram.testing.emulator.commands import CommandMethods
from bot_memory_aiogram.testing.emulator.entities import command_entity, mention_entity, utf16_len
from bot_memory_aiogram.testing.emulator.media import MediaMethods
from bot_memory_aiogram.testing.emulator.messages import MessageMethods
from bot_memory_aiogram.testing.emulator.updates import UpdateMethods
from bot_memory_aiogram.testing.emulator.wire import ApiCall, EmulatorError

__all__ = [
    "ApiCall",
    "BotAPIEmulator",
    "EmulatorError",
    "command_entity",
    "mention_entity",
    "utf16_len",
]


class BotAPIEmulator(
    UpdateMethods, MessageMethods, MediaMethods, ChatMethods, ButtonMethods, CommandMethods
):
    """A Telegram Bot API server on loopback for one bot (see the package docstring)."""
