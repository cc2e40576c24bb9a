"""Recognise direct requests to the bot's memory in the current human message.

``recognize()`` runs on every incoming message, so it is built to be cheap and
conservative:

* A false "remember" stores what the user never asked to keep; a false
  "forget"/"disable" destroys or hides memory.  Every rule therefore
  *whitelists* the shapes it accepts, and anything else -- questions, reported
  speech, idioms, negations, other things being switched -- returns ``None``.
* A request not to remember ("don't remember that", "off the record: ...", "别记这个", «не
  запоминай это») is a ``keep_out``: its subject is empty when it points at another message
  (the one replied to, or the speaker's previous one), and is the message's own words when the
  request opens it. Statements ("I don't remember that"), questions and quotes stay None.
* Requests start at the beginning of the message, after optional prefixes (an
  ``@mention``, a greeting, a time adverbial, a polite form: "hey bot, from now
  on please ..."), so triggers are only looked for in a bounded head of the
  text.  All patterns are anchored and free of nested ambiguous quantifiers,
  and the few end-anchored checks run on a bounded tail or on a bounded whole
  message, so the cost is linear in the message length.
* Matching happens on a normalised copy of the head (full-width punctuation,
  curly quotes, odd spaces and the traditional characters we care about are
  mapped one-to-one), so indices found there are valid in the original text and
  ``subject`` is sliced from the original, unnormalised message.

One module per language (``english``, ``chinese``, and ``slavic`` for Russian and
Ukrainian, whose words are in ``slavic_words``), the shared text handling in
``common`` and the entry point in ``recognizer``.  Pure Python, stdlib only.
"""

from bot_memory.intents import cyrillic
from bot_memory.intents.common import Action, Language, MemoryRequest
from bot_memory.intents.recognizer import recognize

__all__ = ["Action", "Language", "MemoryRequest", "cyrillic", "recognize"]
