"""Credentials recognised by their shape alone: the bare-token families of ``redaction``.

Each family is written from its provider's published token format (the test corpus names the
source of truth next to each family).  A family with a distinctive published prefix (``ghp_``,
``github_pat_``, ``npm_``, ``sk_live_``, ``xoxb-``, ``glpat-``, ...) is redacted by its shape
alone: a checksum that does not verify (GitHub's and npm's CRC32 tail) leaves a mistyped or
made-up token no less a credential.  Where a family has no such prefix, what it carries decides,
not length alone: PyPI's macaroon header, the Discord bot token's base64 user ID.

How the text is searched, once: one regex finds the runs of token characters long enough to
hold a credential (a chat message has few: URLs, hashes, the odd token).  Inside a run a token
can only start at the run's start or just after a separator (``= : / . + ~ $``); each such
place is looked up by its first two characters in a table of prefixes, so a run costs a dict
lookup per separator.  The families without a fixed prefix are found by the literal at their
heart (``:AA`` of a Telegram bot token, ``Q~`` of an Azure AD client secret, ``-us`` of a
Mailchimp key, ``:fx`` of a DeepL key).  Some IDs come with a secret that has no shape of its
own (an AWS access key ID and its secret key, Alibaba's and Tencent's pairs, a Twilio API key
SID and its secret): the secret is taken when it follows the ID closely.

Stdlib only; pure functions; linear in the length of the text.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["MIN_TOKEN", "token_spans"]

Span = tuple[int, int]

# Shortest credential any family below accepts (an Alibaba AccessKey ID of the old length).
MIN_TOKEN = 16
_TOKEN_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/=.~:$-"
# Token characters become "a", everything else " ": runs are then found by bytes.find.
_RUN_MASK = bytes(ord("a") if i in _TOKEN_CHARS else ord(" ") for i in range(256))
_RUN_NEEDLE = b"a" * MIN_TOKEN


# ---------------------------------------------------------------------------
# checks a format carries


def _b64_decode(segment: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except (binascii.Error, ValueError):
        return None


_DISCORD_SHAPE = re.compile(r"[MN][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}")


def _discord_id_ok(token: str) -> bool:
    """The first segment of a Discord bot token is the bot's user ID (a snowflake) in base64;
    tokens of the older form (M... or N..., 24 + 6 + 27 characters) are known by that shape
    when their first and last parts read as random (upper, lower and a digit)."""
    first = token.split(".", 1)[0]
    raw = _b64_decode(first)
    if raw is not None and raw.isdigit() and 17 <= len(raw) <= 20:
        return True
    return (
        _DISCORD_SHAPE.fullmatch(token) is not None
        and _mixed(first)
        and _mixed(token.rsplit(".", 1)[1])
    )


def _mixed(value: str) -> bool:
    """Upper case, lower case and a digit: what a random base62/base64 secret has."""
    return (
        any(c.isdigit() for c in value)
        and any("a" <= c <= "z" for c in value)
        and any("A" <= c <= "Z" for c in value)
    )


def _digit_and_letter(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _hf_body_ok(body: str) -> bool:
    if len(body) == 34 and body.isalpha():
        return True
    return any(c.isupper() for c in body) and any(c.islower() for c in body)


def _has_digit(value: str) -> bool:
    return any(c.isdigit() for c in value)


def _has_letter(value: str) -> bool:
    return any(c.isalpha() for c in value)


# Documentation stand-ins: AKIAIOSFODNN7EXAMPLE, ghp_xxxx..., sk-...XXXXXXXX, sk-your-key.
# Long runs of one case, and "your" at the start of a part: a random token of 150
# characters spells "yoUR" or "xXxX" about once in 3,000, "XXXX" once in 50,000.
_FILLER = re.compile(r"x{6}|X{6}|\*{4}|0{8}|(?i:example|placeholder)|(?<![A-Za-z0-9])(?i:your)")
_MASK = re.compile(r"x{6}|X{6}|\*{4}|0{8}")  # masks alone


# ---------------------------------------------------------------------------
# families with a literal prefix


@dataclass(frozen=True, slots=True)
class _Family:
    name: str
    prefixes: tuple[str, ...]  # literal starts; their first two characters key the lookup
    pattern: re.Pattern[str]  # matched where a prefix starts; the whole match is secret
    check: Callable[[str], bool] | None = None
    # a secret without a shape that belongs to this ID when it follows closely
    companion: re.Pattern[str] | None = None
    filler: re.Pattern[str] | None = None  # what makes a match a stand-in (default _FILLER)


def _family(
    name: str,
    prefixes: tuple[str, ...],
    pattern: str,
    check: Callable[[str], bool] | None = None,
    companion: str | None = None,
    filler: re.Pattern[str] | None = None,
) -> _Family:
    return _Family(
        name,
        prefixes,
        re.compile(pattern),
        check,
        re.compile(companion) if companion else None,
        filler,
    )


_END = r"(?![A-Za-z0-9])"  # fixed-length bodies end where token characters do
_END_URL = r"(?![A-Za-z0-9_-])"
_B64 = r"[A-Za-z0-9+/]"
_B64URL = r"[A-Za-z0-9_-]"
_B64URL_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"


def _companion(alphabet: str, length: int) -> str:
    """A whole run of exactly ``length`` characters of ``alphabet``, within 160 characters
    (and no blank line) after the ID."""
    return (
        rf"(?:[^\n]|\n(?!\s*\n)){{0,160}}?(?<![{alphabet}])(?P<s>[{alphabet}]{{{length}}})"
        rf"(?![{alphabet}=])"
    )


FAMILIES: tuple[_Family, ...] = (
    # --- LLM providers
    # OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-), Anthropic (sk-ant-api03-/admin01-),
    # OpenRouter (sk-or-v1-), DeepSeek and others that took the same sk- prefix.
    _family(
        "sk_api_key",
        ("sk-",),
        r"sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}+"
        r"|ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_-]{32,}+"
        r"|or-v[0-9]-[A-Za-z0-9]{32,}+"
        r"|[A-Za-z0-9]{20,}+)" + _END_URL,
        lambda s: _digit_and_letter(s[3:]),
    ),
    _family("groq", ("gsk_",), r"gsk_[A-Za-z0-9]{48,56}" + _END),
    _family("perplexity", ("pplx-",), r"pplx-[A-Za-z0-9]{40,56}" + _END),
    _family("xai", ("xai-",), r"xai-[A-Za-z0-9]{70,90}" + _END, _digit_and_letter),
    # Hugging Face: 34 letters (any case: no identifier runs 34 letters without an underscore)
    # or 30-40 characters in both cases.
    _family(
        "huggingface",
        ("hf_",),
        r"hf_[A-Za-z0-9]{30,40}" + _END,
        lambda s: _hf_body_ok(s[3:]),
    ),
    _family(
        "huggingface_org",
        ("api_org_",),
        r"api_org_[A-Za-z0-9]{30,40}" + _END,
        lambda s: _hf_body_ok(s[8:]),
    ),
    _family("replicate", ("r8_",), r"r8_[A-Za-z0-9]{37}" + _END, _digit_and_letter),
    _family("langsmith", ("lsv2_",), r"lsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}" + _END),
    # --- cloud
    _family("google_api_key", ("AIza",), r"AIza[A-Za-z0-9_-]{35}" + _END_URL),
    _family("google_oauth_secret", ("GOCSPX-",), r"GOCSPX-[A-Za-z0-9_-]{28}" + _END_URL),
    _family("google_oauth_token", ("ya29.",), r"ya29\.[A-Za-z0-9_-]{30,}+", _digit_and_letter),
    _family(
        "aws_access_key_id",
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}" + _END,
        companion=_companion("A-Za-z0-9/+", 40),
    ),
    # Amazon Bedrock API keys: long-lived "ABSK" + base64 of "BedrockAPIKey-...", short-term
    # "bedrock-api-key-" + base64 of "bedrock.amazonaws.com...". The marker is long enough to
    # decide alone: a body that spells EXAMPLE is no documentation stand-in here.
    _family(
        "aws_bedrock_key",
        ("ABSK", "bedrock-api-key-"),
        r"(?:ABSKQmVkcm9ja0FQSUtleS" + _B64 + r"{20,}+"
        r"|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t" + _B64 + r"{4,}+)={0,2}",
        filler=_MASK,
    ),
    _family(
        "alibaba_access_key",
        ("LTAI",),
        r"LTAI[A-Za-z0-9]{12,20}" + _END,
        _digit_and_letter,
        companion=_companion("A-Za-z0-9", 30),
    ),
    _family(
        "tencent_secret_id",
        ("AKID",),
        r"AKID[A-Za-z0-9]{32}" + _END,
        _digit_and_letter,
        companion=_companion("A-Za-z0-9", 32),
    ),
    _family("yandex_api_key", ("AQVN",), r"AQVN[A-Za-z0-9_-]{35,38}" + _END_URL),
    _family("yandex_oauth", ("y0_",), r"y0_[A-Za-z0-9_-]{50,60}" + _END_URL, _digit_and_letter),
    _family("yandex_iam", ("t1.",), r"t1\.[A-Za-z0-9_-]{20,}+={0,2}\.[A-Za-z0-9_-]{80,}+={0,2}"),
    _family("digitalocean", ("dop_v1_", "doo_v1_", "dor_v1_"), r"do[opr]_v1_[a-f0-9]{64}" + _END),
    _family("vault", ("hvs.", "hvb.", "hvr."), r"hv[sbr]\.[A-Za-z0-9_-]{24,}+", _digit_and_letter),
    _family(
        "doppler",
        ("dp.",),
        r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9_-]{40,44}" + _END_URL,
        _digit_and_letter,
    ),
    # Cloudflare's scannable API credentials: cfk_ (global key), cfut_ (user token), cfat_
    # (account token), 40 characters and a checksum.
    _family(
        "cloudflare",
        ("cfk_", "cfut_", "cfat_"),
        r"cf(?:k|ut|at)_[A-Za-z0-9]{40,60}" + _END,
        _digit_and_letter,
    ),
    _family("pulumi", ("pul-",), r"pul-[a-f0-9]{40}" + _END),
    _family("databricks", ("dapi",), r"dapi[a-f0-9]{32}(?:-[0-9])?" + _END),
    _family(
        "grafana",
        ("glsa_", "glc_"),
        r"(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}" + _END + r"|glc_" + _B64 + r"{32,}+={0,2})",
    ),
    _family("new_relic", ("NRAK-",), r"NRAK-[A-Z0-9]{27}" + _END),
    _family(
        "sentry",
        ("sntrys_", "sntryu_"),
        r"(?:sntrys_eyJ[A-Za-z0-9+/=_-]{30,}+|sntryu_[a-f0-9]{64}" + _END + ")",
    ),
    _family(
        "supabase", ("sbp_", "sb_secret_"), r"(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{30,}+)"
    ),
    _family("atlassian", ("ATATT3",), r"ATATT3[A-Za-z0-9_=-]{150,}+"),
    _family(
        "terraform_cloud",
        (),  # found through ".atlasv1." below
        r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}+",
    ),
    # --- source hosting
    _family(
        "github_classic",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        r"gh[pousr]_[A-Za-z0-9]{36}" + _END,  # its CRC32 tail is not checked: see above
    ),
    _family(
        "github_fine_grained",
        ("github_pat_",),
        r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}" + _END,
    ),
    _family(
        "gitlab",
        tuple(
            f"gl{kind}-"
            for kind in (
                "pat",
                "oas",
                "dt",
                "rt",
                "cbt",
                "ptt",
                "ft",
                "imt",
                "agent",
                "soat",
                "ffct",
            )
        ),
        r"gl(?:pat|oas|dt|rt|cbt|ptt|ft|imt|agent|soat|ffct)-[A-Za-z0-9_-]{20,}+"
        # routable tokens end in .<base36 length><base36 CRC32> (older ones: .01.<9 chars>)
        r"(?:\.[0-9a-z]{2}(?:\.[0-9a-z]{9}|[0-9a-z]{7})(?![A-Za-z0-9]))?",
    ),
    _family(
        "gitlab_runner_registration",
        ("GR1348941",),
        r"GR1348941[A-Za-z0-9_-]{20}" + _END_URL,
        lambda s: _has_letter(s[9:]),
    ),
    # 1Password account secret key (its Secret Key, with the hyphens of the emergency kit)
    _family(
        "onepassword_secret_key",
        ("A3-",),
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}"
        + _END,
        _digit_and_letter,
    ),
    # --- package registries
    _family("npm", ("npm_",), r"npm_[A-Za-z0-9]{36}" + _END),  # CRC32 tail unchecked too
    _family(
        "pypi",
        ("pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"),
        # the macaroon header: version 2, location "pypi.org" (or "test.pypi.org")
        r"pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,}+",
    ),
    _family("docker_hub", ("dckr_pat_",), r"dckr_pat_[A-Za-z0-9_-]{27,}+"),
    _family("rubygems", ("rubygems_",), r"rubygems_[a-f0-9]{48}" + _END),
    _family("nuget", ("oy2",), r"oy2[a-z0-9]{43}" + _END, _digit_and_letter),
    # --- chat platforms
    _family(
        "slack",
        ("xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxo-", "xoxe-", "xoxe.", "xapp-"),
        r"(?:xox[abeoprs]-[A-Za-z0-9-]{10,}+|xoxe\.xox[bp]-[0-9]-[A-Za-z0-9]{60,}+"
        r"|xapp-[0-9]-[A-Za-z0-9-]{10,}+)",
        lambda s: sum(c.isdigit() for c in s) >= 4 and (len(s) >= 24 or s[3] not in "bp"),
    ),
    _family(
        "discord_bot_token",
        # the base64 of a snowflake's first two digits: 1x -> MT, 2x -> Mj ... 9x -> OT; the
        # older form starts with M or N and any character
        (*(lead + c for lead in "MN" for c in _B64URL_CHARS), "OD", "OT"),
        r"[MNO][A-Za-z0-9_-]{22,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{25,45}" + _END_URL,
        _discord_id_ok,
    ),
    # --- payments
    _family(
        "stripe",
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
        r"[rs]k_(?:live|test)_[A-Za-z0-9]{16,}+",
    ),
    _family(
        "webhook_signing_secret",
        ("whsec_",),
        r"whsec_" + _B64 + r"{20,}+={0,2}",
        lambda s: _digit_and_letter(s[6:]),
    ),
    _family(
        "square",
        ("sq0atp-", "sq0csp-", "EAAA"),
        r"(?:sq0atp-[A-Za-z0-9_-]{22}|sq0csp-[A-Za-z0-9_-]{43}|EAAA[A-Za-z0-9_-]{60,}+)" + _END_URL,
    ),
    _family(
        "braintree",
        ("access_token$",),
        r"access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}" + _END,
    ),
    _family(
        "shopify",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _END,
    ),
    _family("flutterwave", ("FLWSECK",), r"FLWSECK(?:_TEST)?-[a-fA-F0-9]{32}-X" + _END),
    # --- messaging and mail
    _family(
        "twilio_api_key",
        ("SK",),
        r"SK[0-9a-fA-F]{32}" + _END,
        _digit_and_letter,
        companion=_companion("A-Za-z0-9", 32),
    ),
    _family("sendgrid", ("SG.",), r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,50}" + _END_URL),
    _family("mailgun", ("key-",), r"key-[0-9a-f]{32}" + _END, _digit_and_letter),
    _family("brevo", ("xkeysib-",), r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}" + _END),
    # --- other services
    _family("linear", ("lin_api_",), r"lin_api_[A-Za-z0-9]{40}" + _END),
    _family(
        "notion",
        ("secret_", "ntn_"),
        r"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{46})" + _END,
        _mixed,
    ),
    _family("airtable", ("pat",), r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}" + _END),
    _family("postman", ("PMAK-",), r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _END),
    _family("dynatrace", ("dt0c01.",), r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}" + _END),
    _family("figma", ("figd_",), r"figd_[A-Za-z0-9_-]{40,}+"),
    _family("contentful", ("CFPAT-",), r"CFPAT-[A-Za-z0-9_-]{43}" + _END_URL),
    _family("vk", ("vk1.a.",), r"vk1\.a\.[A-Za-z0-9_-]{60,}+"),
    _family("onepassword_service", ("ops_eyJ",), r"ops_eyJ[A-Za-z0-9+/=_-]{60,}+"),
    _family("mapbox_secret", ("sk.eyJ",), r"sk\.eyJ[A-Za-z0-9_-]{20,}+\.[A-Za-z0-9_-]{20,}+"),
    _family("cloudflare_origin_ca", ("v1.0-",), r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}" + _END),
    _family(
        "age_secret_key",
        ("AGE-SECRET-KEY-1",),
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}" + _END,
    ),
    # JSON Web Tokens: header and payload are JSON ('{"' is "eyJ" in base64), the signature
    # may be missing (two segments; "alg": "none").
    _family(
        "jwt",
        ("eyJ",),
        r"eyJ[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+(?:\.[A-Za-z0-9_-]*+)?",
    ),
)

_BY_PREFIX: dict[str, tuple[_Family, ...]] = {}
for _fam in FAMILIES:
    for _prefix in _fam.prefixes:
        _key = _prefix[:2]
        if _fam not in _BY_PREFIX.get(_key, ()):
            _BY_PREFIX[_key] = (*_BY_PREFIX.get(_key, ()), _fam)
# A separator followed by a known prefix: where a token may start inside a run.
_SECOND: dict[str, str] = {}
for _key in sorted(_BY_PREFIX):
    _SECOND[_key[0]] = _SECOND.get(_key[0], "") + _key[1]
_CANDIDATE = re.compile(  # by first character, then a class of second ones
    r"[=:/.+~$](?="
    + "|".join(re.escape(a) + "[" + re.escape(b) + "]" for a, b in sorted(_SECOND.items()))
    + ")"
)


# ---------------------------------------------------------------------------
# families found through a literal inside them


@dataclass(frozen=True, slots=True)
class _Anchored:
    name: str
    anchor: str
    back: int  # characters from the token's start to the anchor (-1: a digit run, scanned)
    pattern: re.Pattern[str]
    check: Callable[[str], bool] | None = None


_TERRAFORM = next(f for f in FAMILIES if f.name == "terraform_cloud")
_ANCHORED: tuple[_Anchored, ...] = (
    # Telegram bot token: <bot ID, 5-16 digits>:AA<33 characters>, also in .../bot<token>/...;
    # the scanners' samples write ":A" and 34 random characters (then one is a digit).
    _Anchored(
        "telegram_bot_token",
        ":A",
        -1,
        re.compile(r"[0-9]{5,16}:A[A-Za-z0-9_-]{32,37}+" + _END_URL),
        lambda s: s[s.index(":") + 2 :].startswith("A") or _has_digit(s[s.index(":") + 2 :]),
    ),
    # Azure AD (Entra ID) client secret: 3 characters, a digit, "Q~", 31-34 more.
    _Anchored(
        "azure_ad_client_secret",
        "Q~",
        4,
        re.compile(r"[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])"),
        _digit_and_letter,
    ),
    # Mailchimp API key: 32 hex characters, "-us" and the data centre number.
    _Anchored("mailchimp", "-us", 32, re.compile(r"[0-9a-f]{32}-us[0-9]{1,2}" + _END)),
    # DeepL API key: a UUID with ":fx" (free plan keys).
    _Anchored(
        "deepl",
        ":fx",
        36,
        re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:fx" + _END),
    ),
    _Anchored("terraform_cloud", ".atlasv1.", 14, _TERRAFORM.pattern),
)

_ANCHORED_BY = {fam.anchor: fam for fam in _ANCHORED}
_ANCHOR_IN_RUN = re.compile("|".join(re.escape(fam.anchor) for fam in _ANCHORED))

# Anchored tokens may start inside a run (glued to "bot" in a Telegram API URL).
_LEFT_STOP = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _starts_clean(text: str, start: int, *, telegram: bool = False) -> bool:
    if start == 0 or text[start - 1] not in _LEFT_STOP:
        return True
    return telegram and text.endswith("bot", 0, start)


def _anchored_span(text: str, i: int, fam: _Anchored, run_start: int, out: list[Span]) -> None:
    if fam.back >= 0:
        begin = i - fam.back
    else:  # a run of digits before the anchor
        begin = i
        while begin > run_start and "0" <= text[begin - 1] <= "9" and i - begin < 16:
            begin -= 1
    if begin < run_start:
        return
    m = fam.pattern.match(text, begin)
    if (
        m is not None
        and _starts_clean(text, begin, telegram=fam.back < 0)
        and (fam.check is None or fam.check(m.group()))
        and not _FILLER.search(m.group())
    ):
        out.append(m.span())


def _run_spans(text: str, start: int, end: int, out: list[Span]) -> None:
    """Tokens in one run of token characters, ``text[start:end]``."""
    pos = start
    while True:
        resume = pos
        for fam in _BY_PREFIX.get(text[pos : pos + 2], ()):
            m = fam.pattern.match(text, pos, end)
            if m is None:
                continue
            token = m.group()
            if (fam.check is not None and not fam.check(token)) or (
                (fam.filler or _FILLER).search(token)
            ):
                continue
            out.append(m.span())
            resume = m.end()
            if fam.companion is not None:
                _companion_span(text, fam.companion, m.end(), out)
            break
        # the next place a token may start: just after a separator, before a known prefix
        after = _CANDIDATE.search(text, resume, end)
        if after is None:
            return
        pos = after.end()


def _companion_span(text: str, pattern: re.Pattern[str], start: int, out: list[Span]) -> None:
    m = pattern.match(text, start)
    if m is not None and _mixed(m.group("s")) and not _FILLER.search(m.group("s")):
        out.append(m.span("s"))


def token_spans(text: str, folded: bytes) -> list[Span]:
    """Spans of every bare credential in ``text`` (unsorted, may overlap).  ``folded`` is
    ``text`` as bytes, one per code point (ASCII kept, in either case)."""
    out: list[Span] = []
    mask = folded.translate(_RUN_MASK)
    find = mask.find
    start = find(_RUN_NEEDLE)
    while start != -1:
        end = find(b" ", start + MIN_TOKEN)
        if end == -1:
            end = len(mask)
        _run_spans(text, start, end, out)
        for anchor in _ANCHOR_IN_RUN.finditer(text, start, end):
            _anchored_span(text, anchor.start(), _ANCHORED_BY[anchor.group()], start, out)
        start = find(_RUN_NEEDLE, end)
    return out
