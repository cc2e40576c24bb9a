"""Credentials recognised by their label: the labelled forms of ``redaction``.

A label is a key that holds a secret word -- password, passwd, pwd, pass, passphrase, secret,
token, credential(s), auth, an API / access / private / ... key, and пароль, токен, ключ,
секрет, 密码, 口令, 密钥, 令牌, 私钥, 凭证 -- in any case style and whatever surrounds it
(``DB_PASSWORD``, ``AWSToken``, ``password_super_secure``, ``x-api-key``, ``--db-password``).
What follows the label decides: an assignment (``=``, ``:``, ``=>``, ``:=``, YAML, JSON,
.env, flags) takes any value; prose ("my password is ...", "пароль от почты — ...",
"密码是...") and a bare blank take only a value that looks like a secret.  A key whose
secret word is not its last part (``password_min_length``, ``token_count``) is only a
hint, so its value must look like a secret as well.  Also here: XML/HTML attributes and
elements, ``Authorization:`` with any scheme word, and command-line flags that can only be
a password.

Never touched: references (``$(cmd)``, ``${VAR}``, ``$VAR``, ``{{ x }}``), placeholders
(``<...>``, ``xxxx``, ``****``, ``your_token_here``), code (``get_password()``,
``os.environ[...]``, identifiers, type names) and paths.

Every function returns spans ``(start, end)`` of the secret part; the caller replaces them.
"""

from __future__ import annotations

import functools
import re

__all__ = ["COMMAND_ANCHORS", "LABEL_ANCHORS", "MARKUP_ANCHORS", "is_placeholder", "label_spans"]

Span = tuple[int, int]

# ---------------------------------------------------------------------------
# what a value is not


# References to a secret rather than a secret: ${VAR}, $VAR, $(cmd), {{ x }}, %VAR%,
# <your-token>, {name}, YOUR_API_KEY / your-token-here, an environment variable's name,
# null-like literals, masks (****, xxxx, •••) and our own marker.
_PLACEHOLDER = re.compile(
    r"\[REDACTED\](?:[\s:/|,;-]*+\[REDACTED\])*+"
    r"|(?i:none|null|nil|undefined|true|false|empty|n/a|todo|tbd|redacted|hidden|masked"
    r"|removed|example|placeholder|dummy|required|optional|secret|password|token|value"
    r"|pass|pwd|test|changeme|changeit|foo|bar|baz|qux|foobar"  # metasyntactic names
    r"|(?:api|access|secret|private|client)?[-_]?key)"  # a key's name: secretKey: api-key
    # the same in Russian and Ukrainian: "пароль: пароль", "токен: значение", "пароль: нет"
    r"|(?i:нет|нету|немає|пусто|порожньо|пароль|ключ|токен|секрет|значение|значення|пример"
    r"|приклад|скрыт[оа]?|приховано|тест)"
    r"|[01]"  # a switch: PuttyPassword=0
    r"|!!?[A-Za-z]++"  # a YAML tag, the value follows: token: !vault |, !Ref DbPassword
    r"|\$\{\{?.*|\$\(.*|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9]|\$env:.*"
    r"|\{\{.*"
    r"|\{[^\W\d][\w.]*\}|\{[^{}]*[()][^{}]*\}"  # {name}, {пароль}, {base64(user:pass)}
    r"|%[A-Za-z_][A-Za-z0-9_]*%"
    r"|<[^<>]*>?|\[[^\[\]]*\]"
    r"|(?i:your|insert|enter|replace|paste|put|ваш|введите|вставьте|укажите|свій)[_ -].*"
    # masks: long runs anywhere, or a value of x's (xxxx-xxxx, sk-xxxx); a random secret
    # may hold a short run of x's ("xXxX", "XXXX") and is no mask
    r"|.*(?:x{6}|X{6}|\*{3}|•{3}|●{3}|\.{3}|…).*"
    r"|(?:[A-Za-z0-9]{1,12}[_.-])?(?:x{3,}|X{3,})(?:[_.:-](?:x{3,}|X{3,}))*|y{3,}|Y{3,}"
    r"|[A-Z0-9]*EXAMPLE[A-Z0-9]*"  # the documentation's keys: AKIAIOSFODNN7EXAMPLE
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"  # an environment variable's name: DB_PASSWORD
)


def is_placeholder(value: str) -> bool:
    return _PLACEHOLDER.fullmatch(value) is not None


# Code, not a secret: calls and lookups (get_password(), os.environ[, ENV.fetch(),
# settings.SECRET_KEY, process.env.TOKEN), type names, and identifiers (snake_case with an
# underscore, camelCase that holds a secret word: user_password_hash, accessToken).
_CODE_VALUE = re.compile(
    r"[A-Za-z_][A-Za-z0-9_.]*(?:\(.*|\[.*)"
    r"|[A-Za-z_][A-Za-z0-9_]*=[^=].*"  # another assignment: its own key decides
    r"|(?:os|process|env|ENV|settings|config|conf|cfg|self|this|secrets|vars|request|args"
    r"|opts|options|params|ctx|context|app|props|import\.meta)\.[A-Za-z0-9_.]+"
    r"|(?:str|int|bytes|bool|float|string|number|boolean|any|object|char|varchar|text|uuid"
    r"|Optional|SecretStr|String|Any)\??"
    r"|[a-z][a-z0-9]*(?:_[a-z0-9]+)+"
    r"|[a-z]+(?:[A-Z][a-z]+)*(?i:password|passwd|secret|token|key|credentials?)[A-Za-z]*"
)
_PATH_OR_URL = re.compile(r"(?:~|\.{1,2})?/.*|[A-Za-z]:\\.*|.*://.*")


# What no identifier is: a published distinctive token prefix with a body, or a part of ten or
# more characters mixing letters and digits (a random body; "user_password_hash" has none).
_TOKEN_PREFIX = re.compile(
    r"(?:gh[pousr]_|github_pat_|npm_|[rs]k_(?:live|test)_|xox[abeoprs]-|xapp-"
    r"|gl(?:pat|oas|dt|rt|cbt|ptt|ft|imt|agent|soat|ffct)-|dckr_pat_|shp(?:at|ca|pa|ss)_"
    r"|lin_api_|whsec_|pypi-|hf_|api_org_)[A-Za-z0-9_-]{16,}+"
)
_PART = re.compile(r"[A-Za-z0-9]{10,}+")


def _token_like(value: str) -> bool:
    if _TOKEN_PREFIX.match(value):
        return True
    return any(_digit_and_letter(part) for part in _PART.findall(value))


def _is_code(value: str) -> bool:
    """Code, not a secret (under a label too): a call or lookup, a type name, an identifier.
    A value shaped like an identifier that holds a token (``ghp_...``, ``sk_prod_3f9a...``)
    is the secret: a label's value is redacted whatever its shape, references aside."""
    if _CODE_VALUE.fullmatch(value) is None:
        return False
    return "(" in value or "[" in value or not _token_like(value)


# Prose: the word after "password is" is mostly no password ("too short", "8 characters",
# "base64-encoded"), so a prose value must look like one.
_SECRET_SYMBOLS = "@$%^&+=~!"
_PROSE_NOT_SECRET = re.compile(
    r"[a-z0-9]+(?:-[a-z]+)++"  # "2fa-protected", "sha256-hashed", "8-characters"
    r"|0x[0-9A-Fa-f]{40}"  # a (public) wallet address
    r"|v?[0-9]+(?:\.[0-9]+)++"  # a version or an address: 1.2.3, 10.0.0.1
    r"|(?:[a-z0-9-]++\.)++[a-z]{2,12}(?::[0-9]{1,5})?"  # a host: sm02915.int.contoso.com:25
    r"|@[A-Za-z][A-Za-z0-9_]{2,31}"  # a mention: "Secret: @alice knows"
    r"|(?i:base(?:32|58|64)|sha-?[0-9]{1,3}|md[45]|utf-?(?:8|16|32)|argon2(?:id|i|d)?"
    r"|pbkdf2|aes-?[0-9]{3}|rsa-?[0-9]{3,4}|ed25519|x25519|[0-9]fa|gpt-?[0-9a-z.-]*"
    r"|[0-9]++(?:chars?|characters?|digits?|letters?|symbols?|bytes?|bits?|[smhdwk]|ms|mins?"
    r"|minutes?|hours?|days?|weeks?|months?|years?|mb|gb|kb))"
)


def _looks_secret(value: str, *, password: bool, bare: bool, hint: bool) -> bool:
    """Whether a value met in prose (or under a mere hint of a label) is a secret."""
    min_len = 6 if password else 12
    if bare:  # no word between key and value: stricter still
        min_len += 2 if password else 4
    if hint:
        min_len = max(min_len, 8)
    if len(value) < min_len:
        return False
    if _PROSE_NOT_SECRET.fullmatch(value) or _PATH_OR_URL.fullmatch(value):
        return False
    if _digit_and_letter(value):
        return True
    if value.isdigit():  # "my password is 20240817"; a bare "password 12345678" is not enough
        return password and not bare and not hint
    symbols = value.rstrip("!")  # "Secret: Lisbon!": an exclamation, no symbol of a secret
    return any(ch in _SECRET_SYMBOLS for ch in symbols) and any(ch.isalpha() for ch in value)


def _digit_and_letter(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


# ---------------------------------------------------------------------------
# labels

# Words that make a key a label.  PASSWORD_WORDS set the lower bar for prose values.
_LONG_WORDS = ("password", "passwd", "passphrase", "secret", "token", "credential")
_PASSWORD_WORDS = frozenset(
    {
        "password",
        "passwd",
        "passphrase",
        "pass",
        "pwd",
        "storepass",
        "keypass",
        "пароль",
        "密码",
        "口令",
    }
)
_EXACT_WORDS = frozenset({"pass", "pwd", "auth", "storepass", "keypass", "credentials", "creds"})
_HINT_WORDS = frozenset(
    {"auth", "credential", "credentials", "creds", "passwords", "secrets", "tokens"}
)
# A key that names something about the secret, not the secret: token_url, secret_name,
# SECRET_LENGTH, and credentialsId / UserSecretsId (an ID that refers to stored credentials).
_ABOUT_WORDS = frozenset({"name", "url", "uri", "endpoint", "length", "len", "size"})
_REFERENCE_IDS = frozenset({"credential", "credentials", "creds", "secrets"})
# "<qualifier> key" is a label (api key, access key, ...); a bare "key" is not.
_KEY_QUALIFIERS = frozenset(
    {
        "api", "access", "secret", "private", "app", "application", "account", "auth",
        "master", "signing", "encryption", "client", "consumer", "subscription", "service",
        "admin", "write", "storage", "shared", "sharedaccess", "license", "x", "ocp",
    }
)  # fmt: skip
# "--no-password", "show_password", "use_token": a switch about the secret, not the secret.
# "theapikey", "myprivatekey": a qualified key written as one word.
_ONE_WORD_KEYS = ("apikey", "secretkey", "privatekey", "accesskey")
_NEGATORS = frozenset(
    {
        "no", "ask", "prompt", "skip", "show", "hide", "with", "without", "use", "require",
        "allow", "disable", "enable", "forgot", "forget", "is", "has", "max", "min", "num",
        "check", "verify", "validate", "generate", "rotate", "count", "public",
    }
)  # fmt: skip
_SEGMENT = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_NONE, _HINT, _LABEL = 0, 1, 2


def _secret_word(seg: str, prev: str | None) -> str | None:
    if seg in _EXACT_WORDS:
        return seg
    if seg.endswith("s") and seg[:-1] in _LONG_WORDS:  # plural: a hint
        return seg
    for word in _LONG_WORDS:
        if seg.endswith(word):
            return word
    if seg == "key" and prev in _KEY_QUALIFIERS:
        return "key"
    if seg == "keys" and prev in _KEY_QUALIFIERS:
        return "secrets"
    if seg.endswith("key") and (seg[:-3] in _KEY_QUALIFIERS or seg.endswith(_ONE_WORD_KEYS)):
        return "key"
    return None


@functools.lru_cache(maxsize=4096)
def key_strength(key: str) -> tuple[int, bool]:
    """(_NONE, _HINT or _LABEL, whether it names a password) for an ASCII key."""
    segs = [s.lower() for s in _SEGMENT.findall(key)]
    strength, password = _NONE, False
    for idx, seg in enumerate(segs):
        word = _secret_word(seg, segs[idx - 1] if idx else None)
        if word is None:
            continue
        password = password or word in _PASSWORD_WORDS
        last = idx == len(segs) - 1
        strength = max(strength, _LABEL if last and word not in _HINT_WORDS else _HINT)
    if strength == _LABEL and len(segs) == 2 and segs[0] in _NEGATORS:
        return _NONE, False
    if strength == _HINT and (
        segs[-1] in _ABOUT_WORDS or (segs[-1] in ("id", "ids") and segs[-2] in _REFERENCE_IDS)
    ):
        return _NONE, False
    return strength, password


# ---------------------------------------------------------------------------
# key = value, key: value, prose

# Unquoted value characters: printable ASCII except whitespace, quotes and the list
# separators , ; & plus Latin-1/Latin Extended and Cyrillic letters (words end at a blank, so
# "пароль: солнышко" is "password: sunflower").  CJK text and CJK punctuation end the value,
# so "密码：abc123，记得改" redacts only "abc123" and "密码：请到设置里修改" nothing.
_VALUE_CHARS = r"!#-%(-+\--:<-_a-~\u00a1-\u024f\u0400-\u052f"
_QUOTED_MAX = 4096
# An unquoted value is read this far; a longer one is measured once and its inside skipped,
# so "password=password=..." stays linear.
_UNQUOTED_MAX = 512
_VALUE_RUN = re.compile(rf"[{_VALUE_CHARS}]*+")
_BLANK = r"[^\S\r\n]"  # blanks inside a line
# =, :, =>, := and the other assignment operators of config and build files: ::= and :::=
# (Makefile), ?= and += (Makefile, shell), .= (PHP).
_SEP = r"(?:=>|:{1,3}=|[?+.]=|[:=：＝])(?!=)"
# A declared type between the key and its "=": var token string = "...", const key: string = ...
_TYPE = (
    rf"(?:{_BLANK}*+:)?{_BLANK}++(?:string|String|str|bytes|\[\]byte|SecretStr|Secret|char\*|"
    r"std::string|NSString\s?\*)(?=[^\S\r\n]*+(?:=|:=))"
)
# A YAML block scalar: "token: |" or "token: >-", the value on the next, indented line.
_BLOCK = rf"(?:[|>][-+]?[0-9]?{_BLANK}*+\r?\n{_BLANK}++)?"
_DASH = r"(?:[—–]|-(?=[^\S\r\n]))"
# A prose value needs a digit or a symbol in its first characters (_looks_secret decides);
# checked in the regex so "my password is too short" fails without a Python call.
_PROSE_VALUE_AHEAD = (
    rf"(?=[\"'`“‘「«]?[!#-&(-~\u00a1-\u024f\u0400-\u052f]{{0,64}}?"
    rf"[0-9{re.escape(_SECRET_SYMBOLS)}])"
)
_TAIL = re.compile(
    # closing quote of a quoted key, optional Markdown bold
    r"(?P<kq>\\?[\"'`])?(?:(?<=[\"'`])\]|\[\])?(?:\*\*)?"
    r"(?:"
    # "password: X", "password = X": any value
    rf"(?P<sep>(?:{_TYPE})?{_BLANK}*+{_SEP}(?:\*\*)?{_BLANK}*+{_BLOCK})"
    # a comma glued to both (CSV: "token,VALUE,"): only a value that looks like a secret
    rf"|(?P<comma>,)(?=[^\s,]){_PROSE_VALUE_AHEAD}"
    # prose -- "my password is X", "password for root: X", "пароль от почты — X", "密码是X" --
    # and a bare blank, "password\tX" / 'password "X"': only values that look like a secret
    r"|(?P<prose>"
    rf"(?:{_BLANK}++(?i:for|of|от|для|від|до){_BLANK}++(?:(?i:the|my|our){_BLANK}++)?[\w.@-]{{1,40}}+)?"
    rf"(?:{_BLANK}*+(?:{_SEP}|{_DASH})"
    rf"|{_BLANK}++(?i:is|was|это|был|будет|теперь|такой)(?:{_BLANK}++(?i:now|still|такой|такая))?"
    rf"(?:{_BLANK}*+(?:[:：]|{_DASH}))?"
    rf"|{_BLANK}*+(?:是|为|改成|改为|换成|设为|设置为)[:：]?)"
    rf"(?:\*\*)?{_BLANK}*+){_PROSE_VALUE_AHEAD}"
    # "--http-password X": after a password flag a blank is the separator
    r"|(?:(?<=-password)|(?<=-passwd)|(?<=-passphrase)|(?<=-secret)|(?<=-token))"
    rf"(?P<flagval>{_BLANK}++)(?=[^\s-])"
    rf"|(?P<bare>{_BLANK}++){_PROSE_VALUE_AHEAD}"
    r")"
    r"(?:"
    rf"@?\"(?P<dq>(?:[^\"\\\n]|\\.){{1,{_QUOTED_MAX}}}+)\""
    rf"|'(?P<sq>(?:[^'\\\n]|\\.){{1,{_QUOTED_MAX}}}+)'"
    rf"|`(?P<bq>[^`\n]{{1,{_QUOTED_MAX}}}+)`"
    rf"|“(?P<cq>[^”\n]{{1,{_QUOTED_MAX}}}+)”"
    rf"|«(?P<gq>[^»\n]{{1,{_QUOTED_MAX}}}+)»"
    rf"|「(?P<jq>[^」\n]{{1,{_QUOTED_MAX}}}+)」"
    rf"|(?:\\?[\"'`]|[“‘「«])?(?P<uq>[{_VALUE_CHARS}]{{1,{_UNQUOTED_MAX}}}+)"
    r")"
)
_KEY_TAIL = re.compile(r"(?P<key>[A-Za-z0-9_.-]{0,64}+)" + _TAIL.pattern)
_QUOTED_GROUPS = ("dq", "sq", "bq", "cq", "gq", "jq")
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


_GOES_ON = re.compile(rf"{_BLANK}++[^\W\d_]")
# "Secret: I'm pregnant", "The secret: Don't tell": the value is a word cut at a contraction.
_CONTRACTION = re.compile(r"['’][^\W\d_]")


def _in_sentence(m: re.Match[str], end: int) -> bool:
    """'password: see the vault', 'token = await getToken()': a separator, then words that go on
    as a sentence; the value must look like a secret there.  Not 'PGPASSWORD=x psql' (a shell
    assignment before a command) and not a value that ends its line."""
    if _CONTRACTION.match(m.string, end):
        return True
    sep = m.group("sep")
    if sep is None or ("=" in sep and sep.strip() == sep and ":" not in sep):
        return False
    return _GOES_ON.match(m.string, end) is not None


# A label written as a word in a sentence ("bus pass: expired", "Secret: surprise party",
# "API key: revoked", "Password: forgotten"), not as a config key (DB_PASSWORD=, apiKey:,
# password=): its unquoted value after a spaced separator must look like a secret.
_WORD_KEY = re.compile(r"[^\W\d_][^\W\d_A-ZА-ЯЁ]*+(?: [^\W\d_]++)*+")


_BARE_PASS = re.compile(r"(?i)(?<![^\W\d_])pass\Z")


# A one-word answer about a password, not a password: "Password: changed", "Пароль: поменяла",
# "пароль: забув". Only after a label written as words with a spaced separator.
_STATUS = re.compile(
    r"(?i:changed|expired|forgotten|forgot|reset|same|unchanged|updated|lost|unknown"
    r"|помен[яе]л[аи]?|смен[иеё]л[аи]?|измен[иеё]н[аоы]?|измени?л[аи]?|забыл[аи]?|сброшен[аоы]?"
    r"|истек|истёк|устарел|нет|нету|есть|да|такой|прежний|старый|новый"
    r"|змінив|змінила|змінили|змінено|забув|забула|забули|скинуто|немає|є|так|старий|новий)"
    r"[.!?…]*"
)


def _label_in_prose(m: re.Match[str], key: str) -> bool:
    sep = m.group("sep")
    if sep is None or sep.strip() == sep or m.start("uq") < 0 or m.start("kq") >= 0:
        return False
    return _WORD_KEY.fullmatch(key) is not None


def _value_span(
    m: re.Match[str], strength: int, password: bool, flag: bool, end_uq: int = -1, key: str = ""
) -> Span | None:
    text = m.string
    for group in _QUOTED_GROUPS:
        start, end = m.span(group)
        if start >= 0:
            break
    else:
        group = "uq"
        start, end = m.start("uq"), max(m.end("uq"), end_uq)
        if is_placeholder(text[start:end]):  # "sk-...", before its dots go
            return None
        end = _trim_unquoted(text, start, end)
    if end <= start:
        return None
    value = text[start:end]
    if group == "uq" and _STATUS.fullmatch(value) and _label_in_prose(m, key or "x"):
        return None
    bare = m.start("bare") >= 0 or (m.start("flagval") >= 0 and not flag)
    if bare and m.start("kq") >= 0:
        return None  # a quoted key takes a separator: name="password" placeholder=...
    if is_placeholder(value) or _is_code(value) or _PATH_OR_URL.fullmatch(value):
        return None
    if group == "bq" and any(ch.isspace() for ch in value):
        return None  # `gh auth token`: a command, or words in code quotes
    if flag and bare:
        if value.startswith("-"):
            return None
        bare = False  # "--password x": the flag is the separator
    # A password's label keeps any value ("WiFi password: sunflower"); a bare "pass" is as
    # often a ticket ("bus pass: expired").
    ambiguous = not password or _BARE_PASS.search(key) is not None
    in_prose = group == "uq" and not flag and ambiguous and _label_in_prose(m, key)
    prose = (
        bare
        or m.start("prose") >= 0
        or m.start("comma") >= 0
        or in_prose
        or (group == "uq" and not flag and _in_sentence(m, end))
    )
    password = password or in_prose  # "Secret: aB3$kd9Lq2": the password's bar
    hint = strength == _HINT
    if (prose or hint) and not _looks_secret(value, password=password, bare=bare, hint=hint):
        return None
    return start, end


# ASCII keys: identifier characters around the secret word.
_KEY_CHAR = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_KEY_MAX = 64
_PREV_WORD = re.compile(rf"([A-Za-z]+){_BLANK}$")


def _ascii_key(text: str, i: int, end: int) -> tuple[int, int, int, bool, bool] | None:
    """The key around position ``i`` ending at ``end``: (start, end, strength, password,
    whether it is a flag)."""
    start = i
    floor = max(0, i - _KEY_MAX)
    while start > floor and text[start - 1] in _KEY_CHAR:
        start -= 1
    if start > 0 and text[start - 1] in "/\\":
        return None  # a path or URL segment: ".../reset-password"
    key = text[start:end]
    flag = key.startswith("-")
    strength, password = key_strength(key)
    if strength == _NONE and key.lower() in ("key", "keys"):
        # "API key", "secret access key", "Access Key" written as words
        prev = _PREV_WORD.search(text, max(0, start - 16), start)
        if prev is not None:
            strength, password = key_strength(prev.group(1) + "_" + key)
    if strength == _NONE:
        return None
    return start, end, strength, password, flag


# Russian and Chinese labels: the word itself, then the same tail.
_RU_KEY = re.compile(
    r"(?i:(?P<pw>пароль|пароля|паролем|паролю)"
    r"|(?P<tok>токен|токена|токеном|секрет|секрета|секретный\s+ключ|приватный\s+ключ)"
    r"|(?P<key>(?:api|апи)[\s-]?ключ|ключ(?:а|ом)?(?:\s+(?:api|апи|доступа))?))"
    r"(?![а-яё])"
    # whose: "токен бота", "пароль администратора" (a word in the genitive), or a name in
    # Latin letters before a separator: "токен GitHub:", "пароль Wi-Fi:", "ключ OpenAI —"
    r"(?:\s(?!(?i:для|от)\s)(?:[а-яёА-ЯЁ]{1,20}(?i:а|я|ы|и|ов|ей)(?![а-яё])"
    r"|[A-Za-z][A-Za-z0-9]{0,30}+(?:[-.][A-Za-z0-9]{1,30}+){0,3}+"
    r"(?=[^\S\r\n]*+(?:[:：=]|[—–]|-[^\S\r\n]))))?"
)
_ZH_KEY = re.compile(r"(?P<pw>密码|口令)|(?P<tok>密钥|秘钥|令牌|私钥|凭证|凭据)")
_CYRILLIC_LETTER = re.compile(r"[а-яёА-ЯЁ]")


def _other_key(text: str, i: int) -> tuple[int, int, int, bool, bool] | None:
    ch = text[i]
    if "\u4e00" <= ch <= "\u9fff":
        m = _ZH_KEY.match(text, i)
        if m is None:
            return None
        return i, m.end(), _LABEL, m.start("pw") >= 0, False
    start = i
    while start > 0 and _CYRILLIC_LETTER.match(text[start - 1]):
        start -= 1
    # "API ключ", "API-ключ": the word before belongs to the key
    if text.endswith(("API ", "API-", "api ", "апи ", "АПИ "), 0, start):
        start -= 4
    m = _RU_KEY.match(text, start)
    if m is None:
        return None
    if m.start("key") >= 0:
        qualified = (
            " " in m.group() or "-" in m.group() or m.group().lower().startswith(("api", "апи"))
        )
        return start, m.end(), _LABEL if qualified else _HINT, False, False
    return start, m.end(), _LABEL, m.start("pw") >= 0, False


# Where a label may be: ASCII anchors are found by the caller in the ASCII-folded text, the
# others here in the lower-cased text.
LABEL_ANCHORS = (b"pass", b"pwd", b"secret", b"token", b"key", b"auth", b"cred")
_OTHER_ANCHOR = re.compile(
    "|".join(
        [
            *(
                f"{word}|{word.capitalize()}|{word.upper()}"
                for word in ("парол", "токен", "ключ", "секрет")
            ),
            *("密码", "密钥", "口令", "秘钥", "令牌", "私钥", "凭证", "凭据"),
        ]
    )
)


def kv_spans(text: str, positions: list[int]) -> list[Span]:
    starts = positions
    if not text.isascii():
        others = [m.start() for m in _OTHER_ANCHOR.finditer(text)]
        if others:
            starts = sorted([*positions, *others])
    out: list[Span] = []
    done = 0  # keys and values already looked at
    for i in starts:
        if i < done:
            continue
        if text[i].isascii():
            # the tail first: most words that merely contain a secret word have none
            m = _KEY_TAIL.match(text, i)
            if m is None:
                done = i + 1
                continue
            key = _ascii_key(text, i, m.end("key"))
        else:
            key = _other_key(text, i)
            if key is None:
                continue
            done = key[1]
            m = _TAIL.match(text, key[1])
        if key is None or m is None:
            continue
        key_start, key_end, strength, password, flag = key
        end_uq = -1
        if m.end("uq") - m.start("uq") == _UNQUOTED_MAX:  # a long run: measured once
            end_uq = done = _VALUE_RUN.match(text, m.start("uq")).end()  # type: ignore[union-attr]
        span = _value_span(m, strength, password, flag, end_uq, text[key_start:key_end])
        if span is not None:
            out.append(span)
            done = max(done, span[1])
    return out


# ---------------------------------------------------------------------------
# markup: <input name="password" value="...">, <add key="ApiKey" value="..."/>,
# <password>...</password>, <entry key="db.password">...</entry>

_HTML_TAG = re.compile(r"<[A-Za-z][A-Za-z0-9:_-]{0,40}+[ \t\r\n/][^<>]{0,2048}+>")
_FIELD_NAME = re.compile(
    r"(?i)(?<![\w-])(?:name|id|key|property|param|field|for|autocomplete|type)\s*=\s*\\?[\"']?"
    r"(?P<name>[\w.\[\]:-]{1,60})"
)
_NOT_A_FIELD = re.compile(
    r"(?i)(?<![\w-])type\s*=\s*\\?[\"']?(?:checkbox|radio|submit|button|reset)(?![\w-])"
)
_VALUE_ATTR = re.compile(
    r"(?i)(?<![\w-])value\s*=\s*"
    r"(?:\\?\"(?P<dq>[^\"\\]{1,4096}+)\\?\"|\\?'(?P<sq>[^'\\]{1,4096}+)\\?'"
    r"|(?P<uq>[^\s\"'`=<>\\]{1,4096}+))"
)
_ELEMENT = re.compile(
    r"<(?P<tag>[A-Za-z_][\w.:-]{0,60}+)(?P<attrs>[ \t\r\n][^<>]{0,1024}+)?>"
    r"(?P<body>[^<]{1,4096}+)</(?P=tag)[ \t\r\n]*>"
)


def _markup_name_strength(names: list[str]) -> tuple[int, bool]:
    best = (_NONE, False)
    for name in names:
        local = re.split(r"[.:\[\]]", name)[-1] or name
        strength = key_strength(local)
        if strength[0] == _NONE and local.lower() == "password":
            strength = (_LABEL, True)
        best = max(best, strength)
    return best


def _checked(value: str, strength: int, password: bool) -> bool:
    if not value or is_placeholder(value) or _is_code(value) or _PATH_OR_URL.fullmatch(value):
        return False
    return strength == _LABEL or _looks_secret(value, password=password, bare=False, hint=True)


# What the caller looks for to start markup_spans: value=, Value=, VALUE=, and closing tags.
MARKUP_ANCHORS = (b"value", b"</")


def markup_spans(text: str, kinds: set[str]) -> list[Span]:
    out: list[Span] = []
    if "value" in kinds:
        for tag in _HTML_TAG.finditer(text):
            body = tag.group()
            if _NOT_A_FIELD.search(body):
                continue
            strength, password = _markup_name_strength(
                [m.group("name") for m in _FIELD_NAME.finditer(body)]
            )
            value = _VALUE_ATTR.search(body)
            if strength == _NONE or value is None:
                continue
            group = next(g for g in ("dq", "sq", "uq") if value.start(g) >= 0)
            if _checked(value.group(group), strength, password):
                out.append((tag.start() + value.start(group), tag.start() + value.end(group)))
    if "</" in kinds:
        for element in _ELEMENT.finditer(text):
            names = [element.group("tag")]
            if element.group("attrs"):
                names += [m.group("name") for m in _FIELD_NAME.finditer(element.group("attrs"))]
            strength, password = _markup_name_strength(names)
            if strength == _NONE:
                continue
            start, end = element.span("body")
            while start < end and text[start].isspace():
                start += 1
            while end > start and text[end - 1].isspace():
                end -= 1
            if _checked(text[start:end], strength, password):
                out.append((start, end))
    return out


# ---------------------------------------------------------------------------
# headers and command lines

# "Authorization: <any scheme word> <credential>" keeps the scheme; "Authorization: <x>" too.
_AUTHORIZATION = re.compile(
    r"[Aa](?<![A-Za-z0-9].)(?i:uthorization)\\?[\"'`]?[ \t]*[:=][ \t]*\\?[\"'`]?"
    r"(?:[A-Za-z][A-Za-z0-9_-]{0,30}+[ \t]++(?=[^\s\"'`,;]))?"
    r"(?P<s>[^\s\"'`,;]++)"
)
_BEARER = re.compile(r"[Bb](?<![A-Za-z0-9].)(?i:earer)[ \t]++(?P<s>[A-Za-z0-9._~+/=-]{16,}+)")
_SCHEME_WORDS = frozenset(
    {
        "bearer", "basic", "token", "digest", "bot", "apikey", "api-key", "api-token",
        "negotiate", "ntlm", "hoba", "mutual", "aws4-hmac-sha256",
    }
)  # fmt: skip


def _credential_ok(value: str) -> bool:
    if is_placeholder(value):
        return False
    value = value.rstrip(".")
    if value.lower() in _SCHEME_WORDS or len(value) < 8 or _is_code(value):
        return False
    if _PATH_OR_URL.fullmatch(value):
        return False
    return _digit_and_letter(value) or len(value) >= 20


def header_spans(text: str, kinds: set[str]) -> list[Span]:
    out: list[Span] = []
    if "authorization" in kinds:
        for m in _AUTHORIZATION.finditer(text):
            if _credential_ok(m.group("s")):
                start = m.start("s")
                out.append((start, start + len(m.group("s").rstrip("."))))
    if "bearer" in kinds:
        for m in _BEARER.finditer(text):
            value = m.group("s").rstrip(".")
            if _digit_and_letter(value) and not is_placeholder(value):
                out.append((m.start("s"), m.start("s") + len(value)))
    return out


# Short flags, only where the command makes them a password: mysql -pSECRET (attached;
# "-p dbname" prompts), sshpass -p, redis-cli -a, docker login -p, sqlcmd / bcp -P,
# zip / unzip -P, 7z -pSECRET, mongo / mongosh -p, curl -u user:password, smbclient -U
# user%password, openssl -pass pass:SECRET, keytool -storepass / -keypass.
_FLAG_VALUE = r"(?P<q>[\"']?)(?!-)(?P<s>[^\s\"'`;|&<>]{1,256}+)(?P=q)"
# The rest of the command up to the flag, over continuation lines ("\" at a line's end).
_LINE = r"(?:[^\n;|&]|\\\r?\n){0,400}?"
_CURL_FLAG = r"[ \t\n](?:-u|--user)[ \t=]*+"
_CURL_USER = _CURL_FLAG + r"(?P<q>[\"']?)[^\s:\"'/]{0,64}:"  # -u ":pw" too
# -u "user":"password", -u kevin:'password': the password quoted on its own
_CURL_QUOTED = (
    _CURL_FLAG + r"(?:\"[^\"\n]{0,64}\"|'[^'\n]{0,64}'|[^\s:\"'/]{1,64}):"
    r"(?P<pq>[\"'])(?P<s>[^\"'\n]{1,256})(?P=pq)"
)
# -u "sk_live_...:" (an API key as the user, the password empty): a value with letters and digits
_CURL_KEY = (
    _CURL_FLAG + r"(?P<q>[\"']?)(?=[^\s:\"']{0,255}[0-9])(?=[^\s:\"']{0,255}[A-Za-z])"
    r"(?P<s>[^\s:\"'/]{8,256}):(?P=q)(?=\s|$)"
)
_SMB_USER = r"[ \t]-U[ \t]*+[^\s%]{1,64}%"
_SECRET_VALUE = r"(?P<s>[^\s\"'`;|&<>]{1,256}+)"


def _command(name: str) -> str:
    return rf"(?<![\w-]){name}(?![\w-])" + _LINE


_COMMAND_FLAGS: tuple[tuple[bytes, re.Pattern[str]], ...] = tuple(
    (anchor, re.compile(pattern))
    for anchor, pattern in (
        (b"mysql", _command("mysql(?:dump|admin|import|check|show)?") + r"[ \t]-p" + _FLAG_VALUE),
        (b"mariadb", _command("mariadb(?:-dump|-admin)?") + r"[ \t]-p" + _FLAG_VALUE),
        (b"sshpass", r"(?<![\w-])sshpass[ \t]++-p[ \t]*+" + _FLAG_VALUE),
        (b"redis-cli", _command("redis-cli") + r"[ \t]-a[ \t]++" + _FLAG_VALUE),
        (b"docker", _command(r"docker[ \t]++login") + r"[ \t]-p[ \t]++" + _FLAG_VALUE),
        (b"sqlcmd", _command("(?:sqlcmd|bcp)") + r"[ \t]-P[ \t]*+" + _FLAG_VALUE),
        (b"zip", _command("(?:un)?zip") + r"[ \t]-P[ \t]++" + _FLAG_VALUE),
        (b"7z", _command("7z[az]?") + r"[ \t]-p" + _FLAG_VALUE),
        (b"mongo", _command("mongo(?:sh|dump|restore)?") + r"[ \t]-p[ \t]++" + _FLAG_VALUE),
        (b"curl", _command("curl") + _CURL_USER + _SECRET_VALUE + "(?P=q)"),
        (b"curl", _command("curl") + _CURL_QUOTED),
        (b"curl", _command("curl") + _CURL_KEY),
        (b"smbclient", _command("smbclient") + _SMB_USER + _SECRET_VALUE),
        (b"pass:", r"(?<![\w-])-pass(?:in|out)?[ \t]++pass:" + _SECRET_VALUE),
    )
)


COMMAND_ANCHORS = tuple(dict.fromkeys(anchor for anchor, _ in _COMMAND_FLAGS))


def command_spans(text: str, kinds: set[str]) -> list[Span]:
    out: list[Span] = []
    for anchor, pattern in _COMMAND_FLAGS:
        if anchor.decode() in kinds:
            out.extend(
                m.span("s") for m in pattern.finditer(text) if not is_placeholder(m.group("s"))
            )
    return out


def label_spans(text: str, kinds: set[str], positions: list[int]) -> list[Span]:
    """Spans of every labelled secret in ``text``.  ``kinds``: the anchors the caller found
    (``COMMAND_ANCHORS``, ``MARKUP_ANCHORS``, "authorization", "bearer"), ``positions``: where
    it found ``LABEL_ANCHORS``, sorted."""
    out = header_spans(text, kinds) if "authorization" in kinds or "bearer" in kinds else []
    if kinds:
        out += command_spans(text, kinds)
        out += markup_spans(text, kinds)
    out += kv_spans(text, positions)
    return out
