"""The redaction corpora (tests/data/redaction_cases.py): every family bare and labelled in three
languages, labelled forms as people write them, look-alikes that must stay as written; the
checks formats carry; secrets split over consecutive messages; linear cost."""

from __future__ import annotations

import base64
import random
from collections import defaultdict

import pytest

from bot_memory.redaction.patterns import REDACTED, redact, redact_sequence
from tests.data.redaction_cases import LOOKALIKE_CASES, SECRET_CASES, Case
from tests.data.secret_corpus import FAMILIES
from tests.support.token_builders import ALNUM, B64URL, LOWER, UPPER, b64url, crc32_token, p, rand


def _by_group(cases: list[Case]) -> dict[str, list[Case]]:
    groups: dict[str, list[Case]] = defaultdict(list)
    for case in cases:
        groups[case.name.rsplit("/", 1)[0]].append(case)
    return groups


SECRET_GROUPS = _by_group(SECRET_CASES)
LOOKALIKE_GROUPS = _by_group(LOOKALIKE_CASES)


def test_corpus_sizes() -> None:
    assert len(FAMILIES) >= 30
    assert len({f.name for f in FAMILIES}) == len(FAMILIES)
    assert all(f.source.startswith("https://") for f in FAMILIES)
    assert len(LOOKALIKE_CASES) >= len(SECRET_CASES)
    for language in ("en", "ru", "zh"):  # each family is in a sentence of each language
        assert sum(c.name.endswith(f"/{language}") for c in SECRET_CASES) == len(FAMILIES)
        assert sum(c.name.endswith(f"/{language}_label") for c in SECRET_CASES) == len(FAMILIES)
    assert len({c.text for c in SECRET_CASES}) == len(SECRET_CASES)


def _mismatches(cases: list[Case], want: str = "want") -> list[str]:
    out = []
    for case in cases:
        expected = case.want if want == "want" else case.text
        got = redact(case.text)
        if got != expected:
            out.append(f"{case.name}: {case.text!r} -> {got!r}")
    return out


@pytest.mark.parametrize("group", sorted(g for g in SECRET_GROUPS if not g.startswith("label")))
def test_family_bare_and_labelled(group: str) -> None:
    assert _mismatches(SECRET_GROUPS[group]) == []


@pytest.mark.parametrize("case", SECRET_GROUPS["label"], ids=lambda c: c.name)
def test_labelled_form(case: Case) -> None:
    assert redact(case.text) == case.want


@pytest.mark.parametrize("group", sorted(LOOKALIKE_GROUPS))
def test_look_alikes_stay(group: str) -> None:
    assert _mismatches(LOOKALIKE_GROUPS[group], want="text") == []


def test_whole_corpora_as_one_text() -> None:
    secrets = "\n\n".join(c.text for c in SECRET_CASES)
    assert redact(secrets) == "\n\n".join(c.want for c in SECRET_CASES)
    looks = "\n\n".join(c.text for c in LOOKALIKE_CASES)
    assert redact(looks) == looks


def test_redaction_is_stable() -> None:
    for case in SECRET_CASES:
        assert redact(case.want) == case.want, case.name


# ---------------------------------------------------------------------------
# the checks a format carries decide, not length alone


@pytest.mark.parametrize(
    "prefix",
    [p("gh", "p_"), p("gh", "o_"), p("gh", "u_"), p("gh", "s_"), p("gh", "r_"), p("np", "m_")],
)
def test_a_distinctive_prefix_decides_whatever_the_checksum(prefix: str) -> None:
    # A token with a published, distinctive prefix is redacted by its shape: a checksum that
    # does not verify (mistyped, truncated and re-padded, made up for a test) leaves it no less
    # a credential.
    token = crc32_token(random.Random(prefix), prefix)
    body, tail = token[:-6], token[-6:]
    for variant in (
        token,
        body + tail[::-1],
        body[:-1] + "Z" + tail,
        prefix + rand(random.Random(9), ALNUM, 36),
        prefix + rand(random.Random(10), LOWER + "0123456789", 36),
    ):
        assert redact(f"use {variant} now") == f"use {REDACTED} now", variant
    assert redact(prefix + "X" * 36) == prefix + "X" * 36  # the documentation stand-in stays


def _lowered(prefix: str, n: int, seed: int) -> str:
    return prefix + rand(random.Random(seed), LOWER + "0123456789", n)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("githubToken", _lowered(p("gh", "p_"), 36, 1)),
        ("npmAccessTokenToken", _lowered(p("np", "m_"), 36, 2)),
        ("stripeToken", _lowered(p("sk", "_prod_"), 24, 3)),
        ("stripeToken", _lowered(p("sk", "_live_"), 24, 4)),
        ("slack_token", _lowered(p("xo", "xb-"), 40, 5)),
        ("GITLAB_TOKEN", _lowered(p("gl", "pat-"), 20, 6)),
        ("api_key", _lowered("prod_", 30, 7)),
        ("password", _lowered("db_", 16, 8)),
    ],
)
def test_a_value_under_a_secret_label_is_redacted_whatever_its_shape(key: str, value: str) -> None:
    # Snake-case token bodies read like identifiers; under a label they are still the secret.
    for text in (f"{key}={value}", f'{key}: "{value}"', f'{{"{key}": "{value}"}}'):
        assert redact(text) == text.replace(value, REDACTED), text


@pytest.mark.parametrize(
    "text",
    [
        "githubToken=${GITHUB_TOKEN}",
        "githubToken=<your-token>",
        "npmAccessToken=$NPM_TOKEN",
        "password = user_password_hash",
        "self.api_key = api_key",
        "stripeToken=get_stripe_token()",
        "password_field = password_input_v2",
    ],
)
def test_references_under_a_label_are_kept(text: str) -> None:
    assert redact(text) == text


def test_more_published_shapes() -> None:
    secret = rand(random.Random(11), ALNUM, 14)
    assert redact(f'curl -u ":{secret}" https://api.example.com') == (
        f'curl -u ":{REDACTED}" https://api.example.com'
    )
    assert redact(f"curl -u :{secret} https://x.example.com") == (
        f"curl -u :{REDACTED} https://x.example.com"
    )
    assert redact("curl --ntlm -u : https://intranet.example.com") == (
        "curl --ntlm -u : https://intranet.example.com"
    )
    telegram = p("12345678", ":AA", rand(random.Random(12), ALNUM + "_-", 33))
    assert redact(f"bot token {telegram} ok") == f"bot token {REDACTED} ok"
    sendgrid = p(
        "SG.", rand(random.Random(13), ALNUM, 10), "-_", rand(random.Random(14), ALNUM, 10), ".",
        rand(random.Random(15), ALNUM, 20), "_-", rand(random.Random(16), ALNUM, 21),
    )  # fmt: skip
    assert redact(f"key {sendgrid} ok") == f"key {REDACTED} ok"
    cookie = rand(random.Random(17), "0123456789abcdef", 32)
    assert redact(f"Cookie: _gitlab_session={cookie}; path=/") == (
        f"Cookie: _gitlab_session={REDACTED}; path=/"
    )
    assert redact(f"_gitlab_session={cookie}") == f"_gitlab_session={REDACTED}"


def test_shapes_the_peer_suite_found() -> None:
    # tests/data/peer_secrets.jsonl: published shapes whatever the checksum or the case.
    r = random.Random("peer")
    up = UPPER + "0123456789"
    onepassword = p("A3-", rand(r, up, 6), "-", rand(r, up, 11), "-", rand(r, up, 5), "-",
                    rand(r, up, 5), "-", rand(r, up, 5))  # fmt: skip
    discord_old = p("MZ", rand(r, ALNUM, 22), ".", rand(r, ALNUM, 6), ".", rand(r, ALNUM, 27))
    bedrock = p("AB", "SKQmVkcm9ja0FQSUtleS1", "EXAMPLE" * 12, "EXM=")
    huggingface = p("hf", "_", rand(r, LOWER, 34).replace("x", "q"))
    telegram = p("12345", ":A", rand(r, LOWER + "0123456789_-", 34))
    for token in (onepassword, discord_old, bedrock, huggingface, telegram):
        assert redact(f"use {token} now") == f"use {REDACTED} now", token
    for stand_in in (p("GR1348941", "1" * 20), p("xo", "xb-12345-abcd234")):
        assert redact(stand_in) == stand_in


@pytest.mark.parametrize(
    "template",
    [
        'GITHUB_TOKEN ::= "{s}"',
        'GITHUB_TOKEN :::= "{s}"',
        'GITHUB_TOKEN ?= "{s}"',
        'GITHUB_TOKEN += "{s}"',
        '$githubToken .= "{s}"',
        'var githubToken string = "{s}"',
        "const apiKey: string = '{s}'",
        "github_token: |\n  {s}",
        "github_token: >-\n  {s}",
        "githubToken,{s},",
        'some_dict["secret"] = "{s}"',
        'apikey[]= "{s}"',
        'apikey = @"{s}"',
        "theapikey: {s}",
        "login_somewhere --http-password {s}",
        "creds = {s}",
    ],
)
def test_labels_as_config_and_build_files_write_them(template: str) -> None:
    secret = rand(random.Random(template), LOWER + "0123456789", 32)
    text = template.format(s=secret)
    assert redact(text) == text.replace(secret, REDACTED)


def test_curl_credentials_the_peer_suite_found() -> None:
    secret = rand(random.Random("curl"), ALNUM, 16)
    for text in (
        f"curl --user kevin:'{secret}' -iX PATCH",
        f'curl --user "{{client}}":"{secret}" https://x.example.com',
        f"curl --user roger23@example.com:{secret} https://x.example.com",
        f'curl -u "{secret}:" https://localhost:9200',
        f"curl -k -X POST https://x.example.com/a \\\n  -d 'world' \\\n  -u dev:{secret}",
    ):
        assert secret not in redact(text), text


def test_a_kubernetes_secret_manifest() -> None:
    value = base64.b64encode(rand(random.Random("k8s"), ALNUM, 12).encode()).decode()
    for manifest in (
        f"apiVersion: v1\nkind: Secret\ndata:\n  extra: {value}\n  user: YWRtaW4=\n",
        f"apiVersion: v1\ndata:\n  .dockercfg: |\n    {value}\nkind: 'Secret'\n",
    ):
        assert redact(manifest) == manifest.replace(value, REDACTED)
    external = f"kind: ExternalSecret\nspec:\n  data:\n    - remoteRef:\n        key: {value}\n"
    assert redact(external) == external


@pytest.mark.parametrize(
    "text",
    [
        "credentialsId: 'ff083f76-7804-4ef1-80e4-fe975bb9141b'",
        "<UserSecretsId>79a3edd0-2092-40a2-a04d-dcb46d5ca9ed</UserSecretsId>",
        "secret_length = X25519.secret_length",
        'LLM_SECRET_NAME = "NEXUS-GPT4-API-KEY"',
        'publicToken = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"',
        "X-MS-Exchange-Organization-AuthSource: sm02915.int.contoso.com",
        "PuttyPassword=0",
        "curl -i -u 'test:test'",
        '   curl -sL --user "$1:$2" "$3" > "$4"',
        'curl --user "xxx:yyy"',
        "aws_access_key: " + p("AKIA", "IOSFODNN7", "EXAMPLE"),
        'curl -H "Authorization: basic {base64(email:password[\\n])}"',
    ],
)
def test_peer_negatives_stay(text: str) -> None:
    assert redact(text) == text


def test_discord_token_needs_a_user_id_in_its_first_part() -> None:
    parts = (b64url(b"112233445566778899"), rand(random.Random(1), B64URL, 6))
    token = ".".join((*parts, rand(random.Random(2), B64URL, 38)))
    assert redact(token) == REDACTED
    words = ".".join(
        (b64url(b"not a user id at all!"), "abcdef", rand(random.Random(3), B64URL, 38))
    )
    assert redact(words) == words


def test_pypi_token_needs_the_macaroon_header() -> None:
    fake = p("pypi-", rand(random.Random("pypi"), B64URL, 150))
    assert redact(fake) == fake


def test_a_random_secret_that_happens_to_spell_a_filler_word_is_kept_secret() -> None:
    # A 150-character random token holds "your" or "xxxx" in some case about once in 3,000.
    for filler in ("yoUR", "xXxX", "XxxX", "XXXX", "xxxx"):
        token = p("ya", "29.", "z8dAve9ISIem", filler, rand(random.Random(filler), B64URL, 120))
        assert redact(f"use {token} now") == f"use {REDACTED} now"
        value = p("Abc1", filler, "3def456ghi789")
        assert redact(f"my token: {value}") == f"my token: {REDACTED}"


def test_documentation_examples_are_placeholders() -> None:
    for text in (p("AKIA", "IOSFODNN7", "EXAMPLE"), p("sk-", "x" * 40), p("ghp_", "*" * 36)):
        assert redact(f"key {text}") == f"key {text}"


# ---------------------------------------------------------------------------
# across messages


def test_token_split_over_two_messages() -> None:
    token = p("sk-", "proj-", rand(random.Random("split"), B64URL, 120))
    first, second = "here is the key: " + token[:50], token[50:] + " thanks"
    assert redact_sequence([first, second]) == [
        f"here is the key: {REDACTED}",
        f"{REDACTED} thanks",
    ]


def test_token_whose_halves_mean_nothing_alone() -> None:
    token = crc32_token(random.Random("gh-split"), p("gh", "p_"))
    first, second = "token " + token[:12], token[12:]
    assert redact(first) == first and redact(second) == second
    assert redact_sequence([first, second]) == [f"token {REDACTED}", REDACTED]


def test_split_over_three_messages() -> None:
    token = p(
        "xox", "b-", "123456789012", "-", "1234567890123", "-", rand(random.Random(4), ALNUM, 24)
    )
    parts = [token[:10], token[10:30], token[30:]]
    assert redact_sequence(parts) == [REDACTED, REDACTED, REDACTED]


def test_label_in_one_message_value_in_the_next() -> None:
    value = rand(random.Random("next"), ALNUM, 12) + "!7"
    assert redact_sequence(["the db password is", value]) == ["the db password is", REDACTED]
    assert redact_sequence(["мой пароль:", value]) == ["мой пароль:", REDACTED]


def test_sequence_changes_nothing_else() -> None:
    texts = ["see commit 3f2a9c1", "d8e7b6a5 for the fix", "ok", "", "password reset link sent"]
    assert redact_sequence(texts) == texts
    assert redact_sequence([]) == []
    secret = crc32_token(random.Random(5), p("gh", "o_"))
    assert redact_sequence([secret]) == [REDACTED]
    assert redact_sequence(["a", f"x {secret} y", "b"]) == ["a", f"x {REDACTED} y", "b"]


# ---------------------------------------------------------------------------
# linear cost on adversarial input (a backtracking guard, not a benchmark)

N = 100_000


def _repeat(chunk: str) -> str:
    return (chunk * (N // len(chunk) + 1))[:N]


ADVERSARIAL = {
    "token_run": _repeat(rand(random.Random(6), ALNUM, 997)),
    "separators": _repeat("a=b:c/d.e+f~g$"),
    "prefix_after_separators": _repeat("=gh=sk=xo=AK=ey=MT"),
    "github_prefixes": _repeat(p("gh", "p_")),
    "discord_dots": _repeat("MTIz.abcdef."),
    "telegram_digits": _repeat("1234567890:AA"),
    "azure_ad": _repeat("abc7Q~"),
    "mailchimp": _repeat("0123456789abcdef-us"),
    "deepl": _repeat(":fx"),
    "labels": _repeat("password token secret api_key auth cred pwd "),
    "label_words": _repeat("passwordtokensecretkey"),
    "labels_colons": _repeat("token:"),
    "russian": _repeat("пароль: токен — ключ API "),
    "chinese": _repeat("密码是令牌：密钥为"),
    "xml": _repeat("<password>"),
    "xml_close": _repeat("<password>a</password>"),
    "markup_values": _repeat('<add key="Password" value="'),
    "authorization": _repeat("Authorization: Api-Token "),
    "curl": _repeat("curl -u a:"),
    "anchors": _repeat("-----begin ://hooks.slack.com/webhooks/ sig= value </ bearer mysql "),
    "base64_blob": _repeat(rand(random.Random(7), UPPER + LOWER + "0123456789+/", 1000)),
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_input_is_redacted_once(name: str) -> None:
    # Its cost (linear growth from 10 to 100 KB) is measured by bench/bench_redaction.py: a
    # pattern that backtracks without bound would hang here.
    text = ADVERSARIAL[name]
    out = redact(text)
    assert redact(out) == out
