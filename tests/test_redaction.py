"""Tests for bot_memory.redaction.

Every credential below is GENERATED at import time from a seeded PRNG and assembled by
concatenation, so no literal that is or looks like a real credential lives in this file.
"""

from __future__ import annotations

import random
import string
import time
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_memory.redaction import REDACTED, redact, redact_value

# ---------------------------------------------------------------------------
# deterministic fake-credential generator

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "_-"


def fake(alphabet: str, n: int, seed: str) -> str:
    """``n`` characters from ``alphabet``; always contains a digit and a letter when the
    alphabet has both (real random tokens do, and some rules require it)."""
    rng = random.Random(seed)
    chars = [rng.choice(alphabet) for _ in range(n)]
    if n >= 2 and any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet):
        chars[0] = rng.choice([c for c in alphabet if c.isalpha()])
        chars[-1] = rng.choice([c for c in alphabet if c.isdigit()])
    return "".join(chars)


def p(*parts: str) -> str:
    """Join fragments (keeps credential prefixes split in the source)."""
    return "".join(parts)


def pem(label: str, seed: str, lines: int = 6) -> str:
    body = "\n".join(fake(B64, 64, f"{seed}{i}") for i in range(lines))
    return p(
        "-----BEGIN ",
        label,
        "-----\n",
        body,
        "\n",
        fake(B64, 20, seed),
        "==\n-----END ",
        label,
        "-----",
    )


def jwt(seed: str) -> str:
    header = p("ey", "J", fake(B64URL, 30, seed + "h"))
    payload = p("ey", "J", fake(B64URL, 80, seed + "p"))
    return ".".join((header, payload, fake(B64URL, 43, seed + "s")))


# ---------------------------------------------------------------------------
# credential samples: template with "§" where the secret goes, the secret, and optionally
# the full expected output when it is not simply the template with the marker.


@dataclass(frozen=True)
class Case:
    name: str
    template: str
    secret: str
    expected: str | None = None

    @property
    def text(self) -> str:
        return self.template.replace("§", self.secret)

    @property
    def want(self) -> str:
        return self.expected if self.expected is not None else self.template.replace("§", REDACTED)


AZURE_KEY = fake(B64, 86, "azure") + "=="
GCP_PEM_BODY = fake(B64, 64, "gcp1") + "\\n" + fake(B64, 64, "gcp2")

CREDENTIALS: list[Case] = [
    # provider API keys
    Case(
        "openai_legacy", "Use § for the OpenAI calls, thanks!", p("s", "k-", fake(ALNUM, 48, "oa"))
    ),
    Case("openai_project", "key is § (project)", p("s", "k-", "proj-", fake(B64URL, 156, "oap"))),
    Case("openai_svcacct", "ci uses §\nok", p("s", "k-", "svcacct-", fake(B64URL, 120, "oas"))),
    Case(
        "anthropic",
        "ANTHROPIC=§ then restart",
        p("s", "k-", "ant-", "api03-", fake(B64URL, 93, "ant"), "AA"),
    ),
    Case("openrouter", "openrouter: § works", p("s", "k-", "or-", "v1-", fake(HEX, 64, "or"))),
    Case("groq", "groq key §.", p("g", "sk_", fake(ALNUM, 52, "groq"))),
    Case("google", "maps key=§&libraries=places", p("AI", "za", fake(B64URL, 35, "gg"))),
    Case("huggingface", "HF token § for the hub", p("h", "f_", fake(UPPER + LOWER, 34, "hf"))),
    # cloud
    Case("aws_akia", "id § region us-east-1", p("AK", "IA", fake(UPPER + DIGITS, 16, "akia"))),
    Case(
        "aws_asia", "temporary id §, expires soon", p("AS", "IA", fake(UPPER + DIGITS, 16, "asia"))
    ),
    Case("aws_secret_labelled", "aws_secret_access_key = §\nregion = eu", fake(B64, 40, "awss")),
    Case(
        "azure_account_key",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=§;EndpointSuffix=core.windows.net",
        AZURE_KEY,
    ),
    Case(
        "azure_sas_sig",
        "download https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&sig=§ now",
        fake(ALNUM, 30, "sig") + "%2B" + fake(ALNUM, 10, "sig2") + "%3D",
    ),
    Case(
        "azure_shared_access_signature",
        "BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=§",
        "sv=2022-11-02&ss=b&sp=rl&sig=" + fake(ALNUM, 40, "sas") + "%3D",
    ),
    Case("digitalocean", "doctl auth init -t §", p("do", "p_v1_", fake(HEX, 64, "do"))),
    # code hosts
    *(
        Case(f"github_{kind}", "export GH=§ # ci", p("gh", kind, "_", fake(ALNUM, 36, "gh" + kind)))
        for kind in "pousr"
    ),
    Case(
        "github_fine_grained",
        "token §!",
        p("github", "_pat_", fake(ALNUM, 22, "gpat1"), "_", fake(ALNUM, 59, "gpat2")),
    ),
    Case("gitlab", "gitlab § expires", p("gl", "pat-", fake(B64URL, 20, "glpat"))),
    # Slack
    *(
        Case(
            f"slack_{kind}",
            "slack: §, keep it safe",
            p(
                kind,
                "-",
                fake(DIGITS, 12, kind),
                "-",
                fake(DIGITS, 13, kind + "2"),
                "-",
                fake(ALNUM, 24, kind + "3"),
            ),
        )
        for kind in ("xo" + "xb", "xo" + "xp", "xo" + "xa", "xo" + "xr")
    ),
    Case(
        "slack_app",
        "socket mode §",
        p("xa", "pp-1-", fake(UPPER + DIGITS, 11, "xapp"), "-", fake(HEX, 64, "xapp2")),
    ),
    Case(
        "slack_webhook",
        "post to https://hooks.slack.com/services/§ please",
        p(
            "T",
            fake(UPPER + DIGITS, 10, "T"),
            "/B",
            fake(UPPER + DIGITS, 10, "B"),
            "/",
            fake(ALNUM, 24, "W"),
        ),
    ),
    # payments, mail, packages
    Case("stripe_sk_live", "stripe § live", p("s", "k_", "live_", fake(ALNUM, 24, "skl"))),
    Case("stripe_sk_test", "test mode (§)", p("s", "k_", "test_", fake(ALNUM, 24, "skt"))),
    Case("stripe_rk_live", "restricted: §", p("r", "k_", "live_", fake(ALNUM, 24, "rkl"))),
    Case(
        "sendgrid",
        "SENDGRID=§",
        p("S", "G.", fake(B64URL, 22, "sg1"), ".", fake(B64URL, 43, "sg2")),
    ),
    Case("npm", "//registry.npmjs.org/:_authToken=§", p("np", "m_", fake(ALNUM, 36, "npm"))),
    # Telegram
    Case(
        "telegram",
        "my bot token is § don't share",
        p(fake(DIGITS, 10, "tg"), ":", "AA", fake(B64URL, 33, "tg2")),
    ),
    Case(
        "telegram_in_api_url",
        "curl https://api.telegram.org/bot§/getMe",
        p(fake(DIGITS, 9, "tgu"), ":", "AA", fake(B64URL, 33, "tgu2")),
    ),
    # JWT, private keys
    Case("jwt", "session cookie: sid=§; Path=/", jwt("jwt")),
    Case("pem_rsa", "here you go:\n§\nthat's the prod one", pem("RSA PRIVATE KEY", "rsa")),
    Case("pem_pkcs8", "§", pem("PRIVATE KEY", "pkcs8")),
    Case("openssh", "id_ed25519:\n§\n", pem("OPENSSH PRIVATE KEY", "ssh", lines=4)),
    Case(
        "pem_truncated",
        "paste got cut:\n§\n(continued)",
        p("-----BEGIN EC PRIVATE KEY-----\n", fake(B64, 64, "t1"), "\n", fake(B64, 40, "t2")),
    ),
    Case(
        "gcp_service_account_json",
        '{"type": "service_account", "private_key": "§", '
        '"client_email": "a@b.iam.gserviceaccount.com"}',
        p("-----BEGIN PRIVATE KEY-----\\n", GCP_PEM_BODY, "\\n-----END PRIVATE KEY-----\\n"),
        expected=(
            '{"type": "service_account", "private_key": "[REDACTED]", '
            '"client_email": "a@b.iam.gserviceaccount.com"}'
        ),
    ),
    # URLs, headers
    Case(
        "url_password",
        "DATABASE_URL=postgres://bob:§@db.example.com:5432/app ok",
        fake(ALNUM, 18, "pg"),
    ),
    Case(
        "url_password_with_at",
        "REDIS=redis://:§@cache.internal:6379/0",
        "p@" + fake(ALNUM, 12, "redis"),
    ),
    Case(
        "authorization_bearer",
        "curl -H 'Authorization: Bearer §' https://api.example.com",
        fake(B64URL, 40, "bear"),
    ),
    Case(
        "authorization_basic",
        'headers = {"Authorization": "Basic §"}',
        fake(B64, 24, "basic") + "==",
    ),
    Case("bare_bearer", "try Bearer § against staging", fake(B64URL, 32, "bare")),
    # key = value / key: value / JSON / YAML
    Case("kv_password_eq", "login with password=§ and user=admin", "hunter2" + "!"),
    Case("kv_password_yaml", "db:\n  user: app\n  password: §\n  host: x", fake(ALNUM, 16, "yaml")),
    Case("kv_json_api_key", '{"api_key": "§", "model": "x"}', fake(ALNUM, 32, "json")),
    Case("kv_apikey", "apikey=§&format=json", fake(ALNUM, 20, "apikey")),
    Case("kv_x_api_key_header", "X-API-Key: §\nAccept: */*", fake(ALNUM, 28, "xapi")),
    Case("kv_client_secret", "client_secret = '§'", fake(B64URL, 30, "cs")),
    Case(
        "kv_access_token_query",
        "https://app.example.com/cb#access_token=§&state=xyz",
        fake(B64URL, 30, "at"),
    ),
    Case("kv_private_key", "private_key: §", fake(HEX, 64, "pk")),
    Case("kv_secret", "SECRET=§", fake(ALNUM, 24, "sec")),
    Case("kv_passwd", "passwd=§ (old)", fake(ALNUM, 10, "passwd")),
    Case("kv_pwd", "mysql -u root pwd=§", fake(ALNUM, 10, "pwd")),
    Case("kv_token_env", "export SLACK_BOT_TOKEN=§", fake(ALNUM, 30, "tokenv")),
    Case("kv_camel", 'const cfg = { clientSecret: "§" };', fake(ALNUM, 20, "camel")),
    Case("kv_markdown_bold", "**Password:** § (rotate monthly)", fake(ALNUM, 12, "md")),
    Case("kv_php_arrow", "'password' => '§',", fake(ALNUM, 12, "php")),
    Case("kv_escaped_json", r"{\"password\": \"§\"}", fake(ALNUM, 12, "esc")),
    Case("kv_semicolon", "Server=db;User Id=sa;Password=§;Encrypt=true", fake(ALNUM, 14, "odbc")),
    Case("kv_api_key_spaced", "Here is my API key: § (dev)", fake(ALNUM, 24, "apisp")),
    Case("kv_aws_console_wording", "Secret access key: §", fake(B64, 40, "awsc")),
    Case("kv_zh_password", "数据库密码：§，别外传。", fake(ALNUM, 12, "zh1")),
    Case("kv_zh_kouling", "口令: § 记住了吗", fake(ALNUM, 8, "zh2")),
    Case("kv_zh_miyao", "API密钥=§", fake(ALNUM, 32, "zh3")),
    Case("kv_zh_lingpai_quoted", "访问令牌：“§”", fake(ALNUM, 24, "zh4")),
]

# ---------------------------------------------------------------------------
# look-alikes: must come back byte-for-byte identical

LOOK_ALIKES: list[str] = [
    "fixed in commit " + fake(HEX, 40, "sha1") + ", please pull",
    "sha256:" + fake(HEX, 64, "sha256") + " is the image digest",
    "request id 123e4567-e89b-12d3-a456-426614174000 failed",
    "see https://example.com/search?q=redis+password&page=2#results",
    "clone ssh://git@github.com/example/repo.git or git@github.com:example/repo.git",
    "the callback had ?token_type=bearer&expires_in=3600 in it",
    "mail me at alice.smith+bots@example.co.uk",
    "we are on v1.2.3, then sk-1.0 and release-2024.05",
    "my password is too short",
    "the token expired yesterday",
    "I rotated the API key and the secret key last week",
    "密码太短了，系统不让注册。",
    "修改密码：请到设置里修改",
    "密码学：研究加密的学科",
    "password reset link sent to your inbox",
    "aGVsbG8gd29ybGQ= is just base64, so is " + fake(B64, 60, "b64"),
    "# Title\n\n- item one\n- **bold** and `code`\n\n```python\nprint('hi')\n```\n> quote",
    "call get_password() then compare with the password_hash column",
    "pip install scikit-learn (sk-learn) first",
    "AKIA on its own is just a prefix, ASIA-PACIFIC is a region",
    "call me at +1 (555) 123-4567 or +86 138 0013 8000",
    "message link https://t.me/c/1234567890/42 and https://t.me/durov/123",
    "the job ran at 12:30:45 and again at 2024-05-01T08:00:00Z",
    "-----BEGIN CERTIFICATE-----\n" + fake(B64, 64, "cert") + "\n-----END CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----\n" + fake(B64, 64, "pub") + "\n-----END PUBLIC KEY-----",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + fake(B64, 43, "sshpub") + " alice@laptop",
    "publishable key " + p("p", "k_", "live_", fake(ALNUM, 24, "pk")) + " is public by design",
    "the admin UI lives at https://example.com:8443/admin?user=bob",
    "set max_tokens=1024 and token_count: 42",
    "password-reset: enabled, passwordless login: on",
    "ghp_ is the prefix, e.g. ghp_abc",
    "use hf_hub_download() and npm_config_cache",
    "a JWT starts with eyJhbGciOiJIUzI1NiJ9 but that is only a header",
    "12345678:ABCDEF is not a bot token",
    "xoxo, see you",
    "the tokenizer: gpt2; the secretary: Alice",
    "password=${DB_PASSWORD} and token: <your-token-here>",
    'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
    'password="" means no password',
    "if password == expected: ok",
    "mailto:bob@example.com and http://bob@example.com/",
    "Bearer of bad news: the build is red",
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "already clean: password=[REDACTED] and token: [REDACTED]",
    'password = os.environ["DB_PASSWORD"]; token = os.getenv("TOKEN")',
    "password = get_password()",
    "password: null, token = None",
]


# ---------------------------------------------------------------------------
# table-driven tests


def test_table_sizes() -> None:
    assert len(CREDENTIALS) >= 30
    assert len(LOOK_ALIKES) >= 30
    assert len({case.name for case in CREDENTIALS}) == len(CREDENTIALS)


@pytest.mark.parametrize("case", CREDENTIALS, ids=lambda c: c.name)
def test_credential_is_redacted(case: Case) -> None:
    out = redact(case.text)
    assert out == case.want
    # the secret's characters are gone (every 8-character window of it)
    core = case.secret
    for i in range(0, max(1, len(core) - 8), 4):
        window = core[i : i + 8]
        if len(window) == 8:
            assert window not in out, window


@pytest.mark.parametrize("case", CREDENTIALS, ids=lambda c: c.name)
def test_credential_in_prose(case: Case) -> None:
    before = "Привет! 你好，这是上下文。 Some context here.\n"
    after = "\nThanks — 谢谢！ 🙂"
    assert redact(before + case.text + after) == before + case.want + after


@pytest.mark.parametrize("case", CREDENTIALS, ids=lambda c: c.name)
def test_redaction_is_stable(case: Case) -> None:
    assert redact(case.want) == case.want


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alike_survives(text: str) -> None:
    assert redact(text) == text


def test_all_look_alikes_together_survive() -> None:
    text = "\n".join(LOOK_ALIKES)
    assert redact(text) == text


def test_all_credentials_together() -> None:
    text = "\n---\n".join(case.text for case in CREDENTIALS)
    want = "\n---\n".join(case.want for case in CREDENTIALS)
    assert redact(text) == want


# ---------------------------------------------------------------------------
# specific behaviours


def test_key_and_separator_are_kept() -> None:
    value = fake(ALNUM, 12, "kv")
    assert redact("password: " + value) == "password: [REDACTED]"
    assert redact('"api_key": "' + value + '"') == '"api_key": "[REDACTED]"'
    assert redact("token=" + value + ".") == "token=[REDACTED]."


def test_url_keeps_scheme_user_host() -> None:
    value = fake(ALNUM, 12, "url")
    assert redact("postgres://bob:" + value + "@db.example.com/x") == (
        "postgres://bob:[REDACTED]@db.example.com/x"
    )


def test_bearer_keeps_scheme_word() -> None:
    value = fake(B64URL, 30, "hdr")
    assert redact("Authorization: Bearer " + value) == "Authorization: Bearer [REDACTED]"


def test_private_key_block_replaced_whole() -> None:
    block = pem("PRIVATE KEY", "whole")
    assert redact("a\n" + block + "\nb") == "a\n[REDACTED]\nb"


def test_multiple_secrets_in_one_line() -> None:
    a = p("gh", "p_", fake(ALNUM, 36, "m1"))
    b = p("AK", "IA", fake(UPPER + DIGITS, 16, "m2"))
    assert redact(f"{a} and {b}") == "[REDACTED] and [REDACTED]"


def test_empty_and_plain() -> None:
    assert redact("") == ""
    assert redact("hello") == "hello"


def test_redact_value_walks_structures() -> None:
    secret = p("gh", "p_", fake(ALNUM, 36, "rv"))
    value = {
        "role": "user",
        "content": f"token {secret}",
        "parts": [f"x {secret}", ("a", f"password={secret}"), 3, None],
        secret: True,
    }
    out = redact_value(value)
    assert out == {
        "role": "user",
        "content": "token [REDACTED]",
        "parts": ["x [REDACTED]", ("a", "password=[REDACTED]"), 3, None],
        REDACTED: True,
    }
    assert value["content"] == f"token {secret}"  # input untouched
    assert redact_value(7) == 7
    assert redact_value(b"raw") == b"raw"


# ---------------------------------------------------------------------------
# linearity: adversarial 100 KB inputs (a catastrophic-backtracking guard, not a benchmark)

N = 100_000


def _repeat(chunk: str, n: int = N) -> str:
    return (chunk * (n // len(chunk) + 1))[:n]


ADVERSARIAL: dict[str, str] = {
    "password=": _repeat("password="),
    "sk-": _repeat("s" + "k-"),
    "eyJ": _repeat("eyJ"),
    "eyJ.": _repeat("eyJ."),
    "begin_no_end": _repeat("-----BEGIN PRIVATE KEY-----"),
    "begin_no_end_newline": _repeat("-----BEGIN RSA PRIVATE KEY-----\n" + "QUJD" * 10 + "\n"),
    "begin_then_dashes": "-----BEGIN PRIVATE KEY-----" + "-" * N,
    "a_run": "a" * N,
    "upper_run": "A" * N,
    "digit_run": "9" * N,
    "digits_colons": _repeat("123456789:AA"),
    "scheme_sep": _repeat("://"),
    "url_userinfo": _repeat("a://b:"),
    "url_no_at": "x://u:" + "p" * N,
    "url_many_at": "x://u:" + "p@" * (N // 2),
    "authorization": _repeat("Authorization: "),
    "bearer": _repeat("Bearer "),
    "bearer_tokens": _repeat("Bearer " + "a1" * 30 + " "),
    "json_password_open_quote": _repeat('"password": "'),
    "unterminated_quote": 'password="' + "a" * N,
    "unterminated_backtick": _repeat("password=`"),
    "zh_key": _repeat("密码："),
    "zh_lingpai": _repeat("令牌令"),
    "AKIA": _repeat("AKIA"),
    "slack": _repeat("xo" + "xb-"),
    "webhook": _repeat("hooks.slack.com/services/"),
    "closers": "password=" + ")" * N,
    "dots": "token: " + "." * N,
    "quotes": '"' * N,
    "backslashes": "\\" * N,
    "underscored_keys": _repeat("token_"),
    "camel": _repeat("aToken:"),
    "sig": _repeat("&sig="),
    "account_key": _repeat("AccountKey="),
    "spaces": " " * N,
    "newlines": "\n" * N,
    "base64": _repeat(B64),
    "mixed": _repeat(
        "password=sk-eyJ.-----BEGIN PRIVATE KEY-----://a:b Authorization: Bearer 密码："
    ),
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_input_is_fast(name: str) -> None:
    text = ADVERSARIAL[name]
    start = time.perf_counter()
    out = redact(text)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0, f"{name}: {elapsed:.3f}s"
    assert redact(out) == out


# ---------------------------------------------------------------------------
# properties

FRAGMENTS = [
    *("password", "Password", "token", "api_key", "secret", "密码", "令牌"),
    *("=", ":", "：", " ", "\n", '"', "'", "`", "\\", "**", "(", ")", ".", ",", ";", "&", "@", "/"),
    *("://", "x://u:", "[REDACTED]", "Authorization: ", "Bearer ", "Basic "),
    *("-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----", "eyJ", "AKIA", "s" + "k-"),
    *(
        "bot",
        "123456789",
        ":AA",
        "AccountKey=",
        "&sig=",
        "${X}",
        "<t>",
        "hooks.slack.com/services/",
    ),
    *("abc123", fake(ALNUM, 40, "frag1"), fake(B64URL, 33, "frag2")),
    *(case.secret for case in CREDENTIALS[::5]),
]

_text_with_triggers = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=40
).map("".join)


@settings(max_examples=400, deadline=None)
@given(_text_with_triggers)
def test_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_idempotent_arbitrary_text(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


# No digits, no upper case, none of - _ : = ： @ . / : no credential can be formed.
_SAFE_ALPHABET = string.ascii_lowercase + " \n\t,!?()'\"#*" + "你好密码令牌钥，。！？、"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_SAFE_ALPHABET))
def test_text_without_triggers_is_unchanged(text: str) -> None:
    assert redact(text) == text


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=_SAFE_ALPHABET, max_size=30),
    st.sampled_from(
        [c for c in CREDENTIALS if c.template == "§" or c.name.startswith(("github", "slack_x"))]
    ),
    st.text(alphabet=_SAFE_ALPHABET, max_size=30),
)
def test_secret_between_arbitrary_prose(before: str, case: Case, after: str) -> None:
    text = before + " " + case.text + " " + after
    assert redact(text) == before + " " + case.want + " " + after
