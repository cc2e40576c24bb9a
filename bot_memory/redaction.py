"""Credential redaction for text that is sent to a model or stored as a note.

``redact(text)`` replaces every recognised credential with :data:`REDACTED` and leaves
everything else byte-for-byte unchanged.  Labelled forms keep their label
(``password: [REDACTED]``, ``"api_key": "[REDACTED]"``, ``my API key is [REDACTED]``,
``密码是[REDACTED]``, ``--password [REDACTED]``, ``<input name="password"
value="[REDACTED]">``), URLs keep scheme, user and host (``postgres://bob:[REDACTED]@db/x``,
``discord.com/api/webhooks/<id>/[REDACTED]``), ``Authorization: Bearer`` keeps the scheme
word, and private-key blocks are replaced whole.  A label in prose ("is", "是", a bare
blank) only counts when the word after it looks like a secret: "my password is too short"
stays as it is.

Performance contract: the cost is linear in the length of the text.  Every pattern
starts with a multi-character literal (so the regex engine skips ahead like ``str.find``)
or is guarded by a substring pre-check; token rules have a left-boundary look-behind so
only the start of a run of token characters can begin a match; every open-ended
repetition is possessive (no backtracking) or bounded; key/value forms are only tried
at positions where a key word occurs.

Stdlib only; pure functions; thread-safe.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["REDACTED", "redact", "redact_value"]

REDACTED = "[REDACTED]"

# ---------------------------------------------------------------------------
# helpers

_Validator = Callable[[str], bool]


def _has_digit_and_letter(value: str) -> bool:
    """Random tokens virtually always mix digits and letters; prose and identifiers rarely."""
    has_digit = has_alpha = False
    for ch in value:
        if "0" <= ch <= "9":
            has_digit = True
        elif ch.isascii() and ch.isalpha():
            has_alpha = True
        if has_digit and has_alpha:
            return True
    return False


@dataclass(frozen=True, slots=True)
class _Rule:
    """One regex with a named group ``s`` (the secret); everything else in the match is kept."""

    name: str
    triggers: tuple[str, ...]
    pattern: re.Pattern[str]
    validator: _Validator | None = None
    trim_dot: bool = False  # give back trailing '.' (sentence punctuation) from the secret

    def apply(self, text: str) -> str:
        # Patterns that begin with a multi-character literal are scanned by the regex engine
        # about as fast as ``in``; the others get a substring pre-check.
        if self.triggers and not any(trigger in text for trigger in self.triggers):
            return text
        return self.pattern.sub(self._replace, text)

    def _replace(self, m: re.Match[str]) -> str:
        start, end = m.span("s")
        secret = m.string[start:end]
        if self.trim_dot:
            stripped = secret.rstrip(".")
            end -= len(secret) - len(stripped)
            secret = stripped
        if not secret or secret == REDACTED or _PLACEHOLDER.fullmatch(secret):
            return m.group(0)
        if self.validator is not None and not self.validator(secret):
            return m.group(0)
        return m.string[m.start() : start] + REDACTED + m.string[end : m.end()]


def _rule(
    name: str,
    triggers: tuple[str, ...],
    pattern: str,
    *,
    validator: _Validator | None = None,
    trim_dot: bool = False,
) -> _Rule:
    return _Rule(name, triggers, re.compile(pattern), validator, trim_dot)


# Values that are references to a secret rather than a secret: ${VAR}, $VAR, {{ x }},
# %VAR%, <your-token>, {name} (f-string / format field), YOUR_API_KEY / your-token-here,
# an environment variable's name (DB_PASSWORD), null-like literals and our own marker.
_PLACEHOLDER = re.compile(
    r"\[REDACTED\]"
    r"|(?i:none|null|nil|undefined|true|false)"
    r"|\$\{\{?.*"
    r"|\$[A-Z_][A-Z0-9_]*"
    r"|\{\{.*"
    r"|\{[A-Za-z_][A-Za-z0-9_.]*\}"
    r"|%[A-Z_][A-Z0-9_]*%"
    r"|<[^<>]*>"
    r"|(?i:your|insert|enter|replace|paste)[_-][A-Za-z0-9_-]*"
    r"|(?:[A-Z][A-Z0-9]*_)+(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD)"
)

# Left boundary for tokens: the token must start a run of token characters.
# Written after the literal prefix so the engine can still use the prefix to skip ahead.
_TOK = "A-Za-z0-9_-"


def _prefixed(prefix: str, body: str, *, extra_boundary: str = "") -> str:
    """``prefix`` + ``body`` with a look-behind asserting no token char precedes the prefix."""
    lit = re.escape(prefix)
    return rf"(?P<s>{lit}(?<![{extra_boundary}{_TOK}]{lit}){body})"


# ---------------------------------------------------------------------------
# rules, applied in this order

_PEM_LABEL = r"(?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?"
_PEM = _rule(
    "private_key_block",
    (),
    r"(?P<s>-----BEGIN " + _PEM_LABEL + r"-----"
    r"(?:"
    # complete block: body up to the next "-----", which must be the END line
    r"(?:[^-]++|-(?!----))*+-----END " + _PEM_LABEL + r"-----"
    # truncated block (no END): the marker plus following base64 lines
    r"|(?:[ \t]*+(?:\r?\n|\\r?\\n)?[ \t]*+[A-Za-z0-9+/=]{16,}+)*+"
    r"))",
)

# scheme://user:password@host -> password.  Anchored on the literal "://"; the scheme is
# left untouched so it need not be part of the match.  The password is the longest run up
# to the last '@' of the authority (raw '@' in passwords is common in chat).
_URL_PASSWORD = _rule(
    "url_password",
    (),
    r"://(?<=[A-Za-z0-9]://)[^\s:/?#@\[\]\"'`<>]{0,256}+:(?!\[REDACTED\])"
    r"(?P<s>[^\s/?#\"'`<>]{1,256})@",
)

_SLACK_WEBHOOK = _rule(
    "slack_webhook",
    (),
    r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/-]{8,}+)",
)
# https://discord.com/api/webhooks/<id>/<token>: the id stays, the token goes.
_DISCORD_WEBHOOK = _rule(
    "discord_webhook",
    ("/webhooks/",),
    r"discord(?:app)?\.com/api/(?:v[0-9]{1,2}/)?webhooks/[0-9]{15,25}/(?P<s>[A-Za-z0-9_-]{30,}+)",
)

_TOKEN_RULES: tuple[_Rule, ...] = (
    # OpenAI (sk- + alphanumerics, and project / service-account / admin keys), Anthropic,
    # OpenRouter: one pass over "sk-".  From 20 characters on: keys pasted in chat are
    # often older or shortened ones.
    _rule(
        "sk_api_key",
        (),
        _prefixed(
            "sk-",
            r"(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}+"
            r"|ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_-]{32,}+"
            r"|or-v[0-9]-[A-Za-z0-9]{32,}+"
            r"|[A-Za-z0-9]{20,}+)",
        ),
        # must look random: "sk-learn-extra-packages" is a name, not a key
        validator=lambda s: _has_digit_and_letter(s[3:]),
    ),
    _rule("groq", (), _prefixed("gsk_", r"[A-Za-z0-9]{40,}+")),
    _rule("google_api_key", (), _prefixed("AIza", r"[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])")),
    _rule("huggingface", (), _prefixed("hf_", r"[A-Za-z0-9]{30,}+")),
    _rule(
        "aws_access_key_id",
        ("AKIA", "ASIA"),
        r"(?P<s>(?:AKIA|ASIA)(?<![A-Za-z0-9](?:AKIA|ASIA))[A-Z0-9]{16}(?![A-Za-z0-9]))",
    ),
    _rule(
        "digitalocean",
        ("_v1_",),
        r"(?P<s>do[opr]_v1_(?<![A-Za-z0-9_-]do._v1_)[a-f0-9]{64}(?![A-Za-z0-9]))",
    ),
    _rule(
        "github_classic",
        (),
        r"(?P<s>gh[pousr]_(?<![A-Za-z0-9_-]gh._)[A-Za-z0-9]{36,}+)",
    ),
    _rule("github_fine_grained", (), _prefixed("github_pat_", r"[A-Za-z0-9_]{22,}+")),
    _rule("gitlab", (), _prefixed("glpat-", r"[A-Za-z0-9_-]{20,}+")),
    _rule(
        "slack_token",
        (),
        r"(?P<s>x(?:ox[abeprs]|app)-(?<![A-Za-z0-9_-]x....-)[A-Za-z0-9-]{10,}+)",
    ),
    # Stripe secret and restricted keys; publishable pk_ keys are public by design.
    _rule(
        "stripe",
        ("_live_", "_test_"),
        r"(?P<s>[rs]k_(?:live|test)_(?<![A-Za-z0-9_-].k_(?:live|test)_)[A-Za-z0-9]{16,}+)",
    ),
    # Stripe (and Svix) webhook signing secrets.
    _rule(
        "webhook_signing_secret",
        ("whsec_",),
        _prefixed("whsec_", r"[A-Za-z0-9+/]{20,}+={0,2}"),
        validator=lambda s: _has_digit_and_letter(s[6:]),
    ),
    _rule(
        "sendgrid",
        (),
        _prefixed("SG.", r"[A-Za-z0-9_-]{16,}+\.[A-Za-z0-9_-]{16,}+", extra_boundary="."),
    ),
    _rule("npm", (), _prefixed("npm_", r"[A-Za-z0-9]{36,}+")),
    _rule(
        "jwt",
        (),
        _prefixed(
            "eyJ", r"[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+", extra_boundary="."
        ),
    ),
)

# Telegram bot token: <bot id, 6-12 digits>:AA<31-36 chars>, also inside
# api.telegram.org/bot<token>/...  Anchored on the literal ":AA" and scanned backwards for
# the digits, so the text is not searched position by position for digit runs.
_TELEGRAM_TAIL = re.compile(r":AA[A-Za-z0-9_-]{31,36}+(?![A-Za-z0-9_-])")
_TELEGRAM_ID_DIGITS = (6, 12)
_TELEGRAM_LEFT_STOP = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_:-")


def _redact_telegram(text: str) -> str:
    i = text.find(":AA")
    if i == -1:
        return text
    min_digits, max_digits = _TELEGRAM_ID_DIGITS
    out: list[str] = []
    pos = 0
    while i != -1:
        tail = _TELEGRAM_TAIL.match(text, i)
        if tail is not None:
            start = i
            floor = max(pos, i - max_digits - 1)
            while start > floor and "0" <= text[start - 1] <= "9":
                start -= 1
            digits = i - start
            before = text[start - 1] if start > 0 else " "
            if min_digits <= digits <= max_digits and (
                before not in _TELEGRAM_LEFT_STOP or text.endswith("bot", 0, start)
            ):
                out.append(text[pos:start])
                out.append(REDACTED)
                pos = tail.end()
                i = text.find(":AA", pos)
                continue
        i = text.find(":AA", i + 1)
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


_AZURE_KEY = _rule(
    "azure_connection_string",
    ("AccountKey=", "SharedAccessKey=", "SharedAccessSignature="),
    r"(?:"
    + "|".join(
        rf"{name}=(?<![A-Za-z0-9]{name}=)"
        for name in ("AccountKey", "SharedAccessKey", "SharedAccessSignature")
    )
    + r")"
    r"(?P<s>[^\s;\"'`,]++)",
    trim_dot=True,
)
_AZURE_SIG = _rule(
    "azure_sas_signature",
    ("sig=",),
    r"[?&;]sig=(?P<s>[^\s;&#\"'`,]++)",
    trim_dot=True,
)

_AUTH_SCHEMES = frozenset({"bearer", "basic", "token", "digest", "bot", "apikey"})
_AUTHORIZATION = _rule(
    "authorization_header",
    ("uthorization", "UTHORIZATION"),
    r"[Aa](?<![A-Za-z0-9].)(?i:uthorization)\\?[\"'`]?[ \t]*[:=][ \t]*\\?[\"'`]?"
    r"(?:(?i:bearer|basic|token|digest|bot|apikey)[ \t]++)?"
    r"(?P<s>[^\s\"'`,;]++)",
    validator=lambda s: s.lower() not in _AUTH_SCHEMES,
    trim_dot=True,
)
_BEARER = _rule(
    "bearer_token",
    ("earer", "EARER"),
    r"[Bb](?<![A-Za-z0-9].)(?i:earer)[ \t]++(?P<s>[A-Za-z0-9._~+/=-]{16,}+)",
    validator=_has_digit_and_letter,
    trim_dot=True,
)

# Short command-line flags, only for commands where they can only be a password:
# mysql -pSECRET (attached; "-p dbname" prompts), sshpass -p SECRET, redis-cli -a SECRET.
_FLAG_VALUE = r"(?P<q>[\"']?)(?!-)(?P<s>[^\s\"'`;|&<>]{1,256}+)(?P=q)"
_MYSQL_PASSWORD = _rule(
    "mysql_p",
    ("mysql", "mariadb"),
    r"(?<![\w-])(?:mysql(?:dump|admin|import|check|show)?|mariadb(?:-dump|-admin)?)(?![\w-])"
    r"[^\n;|&]{0,160}?[ \t]-p" + _FLAG_VALUE,
)
# "--password hunter2", "--db-password 'x'", "--api-key x" (the "=" form is a key=value).
_CLI_SECRET_FLAG = _rule(
    "cli_secret_flag",
    ("--",),
    r"--(?<![\w-]--)(?!(?:no|ask|prompt|skip|reset|show|with|without|use|max|min|num)-)"
    r"(?:[A-Za-z0-9]++-){0,4}"
    r"(?i:pass(?:word|wd|phrase)?|pwd|token|secret(?:-access)?(?:-key)?|api-?key|private-key)"
    r"[ \t]++" + _FLAG_VALUE,
)
_SSHPASS_PASSWORD = _rule(
    "sshpass_p", ("sshpass",), r"(?<![\w-])sshpass[ \t]++-p[ \t]*+" + _FLAG_VALUE
)
_REDIS_CLI_PASSWORD = _rule(
    "redis_cli_a",
    ("redis-cli",),
    r"(?<![\w-])redis-cli(?![\w-])[^\n;|&]{0,160}?[ \t]-a[ \t]++" + _FLAG_VALUE,
)

# ---------------------------------------------------------------------------
# HTML: <input name="password" value="s3cr3t">, in either attribute order.

_HTML_TAG = re.compile(r"<[A-Za-z][A-Za-z0-9-]{0,20}+[ \t\r\n/][^<>]{0,2048}+>")
_HTML_SECRET_FIELD = re.compile(
    r"(?<![\w-])(?i:name|id|type|autocomplete)\s*=\s*\\?[\"']?[\w.\[\]-]{0,40}?"
    r"(?:(?<![A-Za-z])|(?<=[a-z])(?=[A-Z]))"  # word start or camelCase hump
    r"(?i:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|private[_-]?key)(?![a-z])"
)
_HTML_NOT_A_FIELD = re.compile(
    r"(?i)(?<![\w-])type\s*=\s*\\?[\"']?(?:checkbox|radio|submit|button|reset)(?![\w-])"
)
_HTML_VALUE = re.compile(
    r"(?i)(?<![\w-])value\s*=\s*"
    r"(?:\\?\"(?P<dq>[^\"\\]{1,4096}+)\\?\"|\\?'(?P<sq>[^'\\]{1,4096}+)\\?'"
    r"|(?P<uq>[^\s\"'`=<>\\]{1,4096}+))"
)


def _redact_html_tag(m: re.Match[str]) -> str:
    tag = m.group(0)
    if not _HTML_SECRET_FIELD.search(tag) or _HTML_NOT_A_FIELD.search(tag):
        return tag
    value = _HTML_VALUE.search(tag)
    if value is None:
        return tag
    group = next(g for g in ("dq", "sq", "uq") if value.start(g) >= 0)
    start, end = value.span(group)
    if _PLACEHOLDER.fullmatch(tag, start, end):
        return tag
    return tag[:start] + REDACTED + tag[end:]


def _redact_html(text: str) -> str:
    if "alue" not in text and "ALUE" not in text:  # value=, Value=, VALUE=
        return text
    return _HTML_TAG.sub(_redact_html_tag, text)


# ---------------------------------------------------------------------------
# key = value / key: value / JSON / YAML with a secret-like key

# Unquoted value characters: printable ASCII except whitespace, quotes and the list
# separators , ; & plus Latin-1/Latin Extended letters.  CJK text and CJK punctuation end
# the value, so "密码：abc123，记得改" redacts only "abc123" and "密码：请到设置里修改" nothing.
_VALUE_CHARS = r"!#-%(-+\--:<-_a-~\u00a1-\u024f"
_QUOTED_MAX = 4096

# Blanks inside a line: space, tab, NBSP, ideographic space... but no line break.
_BLANK = r"[^\S\r\n]"
_SEP = r"(?:=>|:=|[:=：＝])(?!=)"
# Symbols that make a word look like a password ("p@ss^word").  Not '#' or '*': "#hashtag"
# and "********" (a mask) are no secrets.
_SECRET_SYMBOLS = "@$%^&+=~"
# A prose value needs a digit or such a symbol in its first characters (_prose_value_ok
# decides); checked in the regex so "my password is too short" fails without a Python call.
_PROSE_VALUE_AHEAD = (
    rf"(?=[\"'`“‘「]?[!#-&(-~\u00a1-\u024f]{{0,64}}?[0-9{re.escape(_SECRET_SYMBOLS)}])"
)
_KV = re.compile(
    r"(?P<k>"
    r"(?:(?<![A-Za-z0-9])|(?<=[a-z0-9])(?=[A-Z]))"  # word start or camelCase hump
    r"(?i:pass(?:word|wd|phrase)|pwd|secret(?:[ _-]?access[ _-]?key|[ _-]?key)?|token"
    r"|api[ _-]?key|private[ _-]?key)"
    r"(?![A-Za-z0-9_-])"
    r"|密码|口令|密钥|秘钥|令牌|私钥"
    r")"
    # closing quote of a quoted key, optional Markdown bold
    r"(?:\\?[\"'`])?(?:\*\*)?"
    r"(?:"
    # "password: X", "password = X": any value
    rf"{_BLANK}*+{_SEP}(?:\*\*)?{_BLANK}*+"
    # prose -- "my password is X", "password for root: X", "密码是X" -- and a bare blank,
    # "password\tX" / 'password "X"': only values that look like a secret (_prose_value_ok)
    r"|(?P<prose>"
    rf"(?:{_BLANK}++(?i:for|of){_BLANK}++(?:(?i:the|my|our){_BLANK}++)?[A-Za-z0-9_.@-]{{1,40}}+)?"
    rf"(?:{_BLANK}*+{_SEP}"
    rf"|{_BLANK}++(?i:is|was)(?:{_BLANK}++(?i:now|still))?(?:{_BLANK}*+[:：])?"
    rf"|{_BLANK}*+(?:是|为|改成|改为|换成|设为|设置为)[:：]?)"
    rf"(?:\*\*)?{_BLANK}*+){_PROSE_VALUE_AHEAD}"
    rf"|(?P<bare>{_BLANK}++){_PROSE_VALUE_AHEAD}"
    r")"
    r"(?:"
    rf"\"(?P<dq>(?:[^\"\\\n]|\\.){{1,{_QUOTED_MAX}}}+)\""
    rf"|'(?P<sq>(?:[^'\\\n]|\\.){{1,{_QUOTED_MAX}}}+)'"
    rf"|`(?P<bq>[^`\n]{{1,{_QUOTED_MAX}}}+)`"
    rf"|“(?P<cq>[^”\n]{{1,{_QUOTED_MAX}}}+)”"
    rf"|「(?P<jq>[^」\n]{{1,{_QUOTED_MAX}}}+)」"
    rf"|(?:\\?[\"'`]|[“‘「])?(?P<uq>[{_VALUE_CHARS}]++)"
    r")"
)
_KV_QUOTED_GROUPS = ("dq", "sq", "bq", "cq", "jq")
# An unquoted value that is code, not a secret: get_password(), os.getenv(, os.environ[
_KV_CODE_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*(?:\(\)?|\[)")
# Every ASCII key above starts with one of these anchors (compared case-insensitively).
_KV_ASCII_ANCHORS = ("pass", "pwd", "secret", "token", "api", "private")
# CJK keys, found through one character each: (character, offsets of key starts from it).
_KV_CJK_ANCHORS = (("密", (0,)), ("令", (-1, 0)), ("钥", (-1,)))
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}


def _trim_unquoted(text: str, start: int, end: int) -> int:
    """New end for an unquoted value: drop sentence dots, unbalanced closing brackets and a
    backslash that escapes the following quote.  Linear in the value length."""
    value = text[start:end]
    counts = {ch: value.count(ch) for ch in "()[]{}<>"}
    while end > start:
        ch = text[end - 1]
        opener = _CLOSERS.get(ch)
        if ch == "." or (opener is not None and counts[ch] > counts[opener]):
            if opener is not None:
                counts[ch] -= 1
            end -= 1
            continue
        if ch == "\\" and end < len(text) and text[end] in "\"'`":
            end -= 1
            continue
        break
    return end


# Prose: the word after "password is" is mostly no password ("too short", "8 characters",
# "base64-encoded"), so a prose value must look like one.
_PASSWORD_KEY = re.compile(r"(?i:pass|pwd)|密码|口令")
_PROSE_NOT_SECRET = re.compile(
    r"[a-z0-9]+(?:-[a-z]+)++"  # "2fa-protected", "sha256-hashed", "8-characters"
    r"|(?:~|\.{1,2})?/.*|.*://.*"  # "~/.ssh/id_ed25519", "https://vault.example.com/k1"
    r"|0x[0-9A-Fa-f]{40}"  # a (public) wallet address
    r"|(?i:base(?:32|58|64)|sha-?[0-9]{1,3}|md[45]|utf-?(?:8|16|32)|argon2(?:id|i|d)?"
    r"|pbkdf2|aes-?[0-9]{3}|rsa-?[0-9]{3,4}|ed25519|x25519|[0-9]fa"
    r"|[0-9]++(?:chars?|characters?|digits?|letters?|symbols?|bytes?|bits?|[smhdw]|mins?"
    r"|minutes?|hours?|days?|weeks?|months?|years?))"
)
# The start of a command-line flag: "--password" is the CLI rule's, "--no-password" nobody's.
_CLI_FLAG = re.compile(r"(?<![\w-])--")
_CLI_FLAG_MAX = 40


def _prose_value_ok(key: str, value: str, *, bare: bool) -> bool:
    password = _PASSWORD_KEY.match(key) is not None
    min_len = 6 if password else 12
    if bare:  # no word between key and value: stricter still
        min_len += 2 if password else 4
    if len(value) < min_len:
        return False
    if _PROSE_NOT_SECRET.fullmatch(value):
        return False
    if _has_digit_and_letter(value):
        return True
    if value.isdigit():  # "my password is 20240817"; a bare "password 12345678" is not enough
        return password and not bare
    return any(ch in _SECRET_SYMBOLS for ch in value) and any(ch.isalpha() for ch in value)


def _in_cli_flag(text: str, key_start: int) -> bool:
    """Whether the key ends a ``--flag`` ("--password", "--db-password", "--no-password")."""
    start = key_start
    floor = max(0, key_start - _CLI_FLAG_MAX)
    while start > floor and (text[start - 1] == "-" or text[start - 1].isalnum()):
        start -= 1
    return _CLI_FLAG.match(text, start) is not None


def _kv_value_span(m: re.Match[str]) -> tuple[int, int] | None:
    for group in _KV_QUOTED_GROUPS:
        start, end = m.span(group)
        if start >= 0:
            break
    else:
        start, end = m.span("uq")
        end = _trim_unquoted(m.string, start, end)
        if _KV_CODE_VALUE.fullmatch(m.string, start, end):
            return None
    if end <= start:
        return None
    value = m.string[start:end]
    if _PLACEHOLDER.fullmatch(value):
        return None
    bare = m.start("bare") >= 0
    if bare and _in_cli_flag(m.string, m.start("k")):
        return None  # "--password x" is _CLI_SECRET_FLAG's; "--no-password x" has no value
    if (bare or m.start("prose") >= 0) and not _prose_value_ok(m.group("k"), value, bare=bare):
        return None
    return start, end


def _find_all(haystack: str, needle: str, found: set[int], offset: int = 0) -> None:
    i = haystack.find(needle)
    while i != -1:
        if i + offset >= 0:
            found.add(i + offset)
        i = haystack.find(needle, i + 1)


def _find_all_bytes(haystack: bytes, needle: bytes, found: set[int]) -> None:
    i = haystack.find(needle)
    while i != -1:
        found.add(i)
        i = haystack.find(needle, i + 1)


def _kv_candidates(text: str) -> list[int]:
    """Sorted positions where a secret-like key may start (a superset of the real ones)."""
    starts: set[int] = set()
    # One byte per code point, ASCII lower-cased, everything else b'?': indexes line up with
    # ``text``, and bytes.find is much faster than str.find on non-Latin-1 text.
    folded = text.encode("ascii", "replace").lower()
    if len(folded) == len(text):
        for anchor in _KV_ASCII_ANCHORS:
            _find_all_bytes(folded, anchor.encode(), starts)
    else:  # not expected; stay index-exact regardless
        lowered = text.translate(_ASCII_LOWER)
        for anchor in _KV_ASCII_ANCHORS:
            _find_all(lowered, anchor, starts)
    for char, offsets in _KV_CJK_ANCHORS:
        for offset in offsets:
            _find_all(text, char, starts, offset)
    return sorted(starts)


def _redact_kv(text: str) -> str:
    starts = _kv_candidates(text)
    if not starts:
        return text
    out: list[str] = []
    pos = 0
    for start in starts:
        if start < pos:
            continue
        m = _KV.match(text, start)
        if m is None:
            continue
        span = _kv_value_span(m)
        if span is None:
            continue
        out.append(text[pos : span[0]])
        out.append(REDACTED)
        pos = span[1]
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# ---------------------------------------------------------------------------
# public API

_STEPS: tuple[Callable[[str], str], ...] = (
    _PEM.apply,
    _URL_PASSWORD.apply,
    _SLACK_WEBHOOK.apply,
    _DISCORD_WEBHOOK.apply,
    *(rule.apply for rule in _TOKEN_RULES),
    _redact_telegram,
    _AZURE_KEY.apply,
    _AZURE_SIG.apply,
    _AUTHORIZATION.apply,
    _BEARER.apply,
    _CLI_SECRET_FLAG.apply,
    _MYSQL_PASSWORD.apply,
    _SSHPASS_PASSWORD.apply,
    _REDIS_CLI_PASSWORD.apply,
    _redact_html,
    _redact_kv,
)


def redact(text: str) -> str:
    """Return ``text`` with every recognised credential replaced by :data:`REDACTED`."""
    if not text:
        return text
    for step in _STEPS:
        text = step(text)
    return text


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
