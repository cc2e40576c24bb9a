"""Synthetic credentials for the redaction tests, one generator per family.

Each family follows its provider's published token format; ``source`` names the source of
truth.  Nothing here is a real credential: every token is built at import time from a seeded
PRNG and assembled from parts, with the format's checksum computed where it has one (GitHub's
and npm's CRC32 tail, PyPI's macaroon header, the Discord bot token's base64 user ID, age's
bech32 checksum), so a push-protection scanner finds no literal credential in this file.
"""

from __future__ import annotations

import base64
import json
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from tests.support.token_builders import (
    ALNUM,
    B64,
    B64URL,
    DIGITS,
    HEX,
    LOWER,
    UPPER,
    b64url,
    bech32,
    crc32_token,
    discord_bot_token,
    jwt,
    p,
    pem,
    pypi_token,
    rand,
)


@dataclass(frozen=True)
class Family:
    name: str
    provider: str  # how people name it in a sentence
    source: str  # the source of truth for the format
    make: Callable[[random.Random], tuple[str, tuple[str, ...]]]  # (text, its secret parts)


def token(
    make: Callable[[random.Random], str],
) -> Callable[[random.Random], tuple[str, tuple[str, ...]]]:
    """A family whose sample is one token, secret whole."""

    def sample(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        value = make(rng)
        return value, (value,)

    return sample


def pair(
    make_id: Callable[[random.Random], str], make_secret: Callable[[random.Random], str], glue: str
) -> Callable[[random.Random], tuple[str, tuple[str, ...]]]:
    """An ID and the secret that comes with it, pasted together."""

    def sample(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        ident, secret = make_id(rng), make_secret(rng)
        return ident + glue + secret, (ident, secret)

    return sample


def part(
    make: Callable[[random.Random], tuple[str, str, str]],
) -> Callable[[random.Random], tuple[str, tuple[str, ...]]]:
    """A family whose secret is a part of a larger text (before, secret, after)."""

    def sample(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        before, secret, after = make(rng)
        return before + secret + after, (secret,)

    return sample


def _gitlab(rng: random.Random) -> str:
    kind = rng.choice(["pat", "oas", "dt", "rt", "cbt", "ptt", "ft", "imt", "agent", "soat"])
    return p("gl", kind, "-", rand(rng, B64URL, 20))


def _gitlab_routable(rng: random.Random) -> str:
    # glpat-<base64 payload>.<base36 payload length><base36 CRC32>
    return p("gl", "pat-", rand(rng, B64URL, 37), ".", "01", rand(rng, DIGITS + LOWER, 7))


FAMILIES: list[Family] = [
    # --- LLM providers
    Family(
        "openai_project",
        "OpenAI",
        "https://platform.openai.com/docs/api-reference/authentication (sk-proj-, sk-svcacct-)",
        token(lambda r: p("s", "k-", r.choice(["proj-", "svcacct-"]), rand(r, B64URL, 156))),
    ),
    Family(
        "openai_legacy",
        "OpenAI",
        "https://platform.openai.com/docs/api-reference/authentication (sk- + 48; T3BlbkFJ)",
        token(lambda r: p("s", "k-", rand(r, ALNUM, 20), "T3BlbkFJ", rand(r, ALNUM, 20))),
    ),
    Family(
        "anthropic",
        "Anthropic",
        "https://docs.anthropic.com/en/api/overview (x-api-key: sk-ant-api03-...AA)",
        token(lambda r: p("s", "k-ant-", "api03-", rand(r, B64URL, 93), "AA")),
    ),
    Family(
        "openrouter",
        "OpenRouter",
        "https://openrouter.ai/docs/api-reference/authentication (sk-or-v1- + 64 hex)",
        token(lambda r: p("s", "k-or-v1-", rand(r, HEX, 64))),
    ),
    Family(
        "groq",
        "Groq",
        "https://console.groq.com/docs/quickstart (gsk_ + 52)",
        token(lambda r: p("g", "sk_", rand(r, ALNUM, 52))),
    ),
    Family(
        "perplexity",
        "Perplexity",
        "https://docs.perplexity.ai/guides/getting-started (pplx- + 48)",
        token(lambda r: p("pp", "lx-", rand(r, ALNUM, 48))),
    ),
    Family(
        "xai",
        "xAI",
        "https://docs.x.ai/docs/overview (xai- + 80)",
        token(lambda r: p("x", "ai-", rand(r, ALNUM, 80))),
    ),
    Family(
        "huggingface",
        "Hugging Face",
        "https://huggingface.co/docs/hub/security-tokens (hf_ + 34 letters)",
        token(lambda r: p("h", "f_", rand(r, UPPER + LOWER, 34))),
    ),
    Family(
        "huggingface_org",
        "Hugging Face",
        "https://huggingface.co/docs/hub/security-tokens (organization API tokens: api_org_)",
        token(lambda r: p("api", "_org_", rand(r, UPPER + LOWER, 34))),
    ),
    Family(
        "replicate",
        "Replicate",
        "https://replicate.com/docs/topics/security/api-tokens (r8_ + 37)",
        token(lambda r: p("r", "8_", rand(r, ALNUM, 37))),
    ),
    Family(
        "langsmith",
        "LangSmith",
        "https://docs.smith.langchain.com/administration/concepts#api-keys (lsv2_pt_/lsv2_sk_)",
        token(
            lambda r: p(
                "lsv2", "_", r.choice(["pt", "sk"]), "_", rand(r, HEX, 32), "_", rand(r, HEX, 10)
            )
        ),
    ),
    # --- cloud
    Family(
        "google_api_key",
        "Google",
        "https://cloud.google.com/docs/authentication/api-keys (AIza + 35)",
        token(lambda r: p("AI", "za", rand(r, B64URL, 35))),
    ),
    Family(
        "google_oauth_secret",
        "Google OAuth",
        "https://support.google.com/cloud/answer/15549257 (client secrets: GOCSPX-)",
        token(lambda r: p("GOC", "SPX-", rand(r, B64URL, 28))),
    ),
    Family(
        "google_oauth_token",
        "Google",
        "https://developers.google.com/identity/protocols/oauth2 (access tokens: ya29.)",
        token(lambda r: p("ya", "29.", rand(r, B64URL, 150))),
    ),
    Family(
        "aws_access_key",
        "AWS",
        "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html"
        "#identifiers-prefixes (AKIA, ASIA, ABIA, ACCA + 16 base32; secret: 40 base64)",
        pair(
            lambda r: p(r.choice(["AKIA", "ASIA", "ABIA", "ACCA"]), rand(r, UPPER + "234567", 16)),
            lambda r: rand(r, B64, 40),
            " ",
        ),
    ),
    Family(
        "aws_bedrock",
        "Amazon Bedrock",
        "https://docs.aws.amazon.com/bedrock/latest/userguide/api-keys-how.html (long-term ABSK...,"
        " short-term bedrock-api-key-...)",
        token(
            lambda r: r.choice(
                [
                    p("AB", "SK", base64.b64encode(b"BedrockAPIKey-" + r.randbytes(80)).decode()),
                    p(
                        "bedrock-api-key-",
                        base64.b64encode(
                            b"bedrock.amazonaws.com/?Action=CallWithBearerToken&X-Amz-Credential="
                            + r.randbytes(60)
                        ).decode(),
                    ),
                ]
            )
        ),
    ),
    Family(
        "alibaba",
        "Alibaba Cloud",
        "https://www.alibabacloud.com/help/en/ram/user-guide/create-an-accesskey-pair"
        " (AccessKey ID LTAI..., secret 30 characters)",
        pair(lambda r: p("LT", "AI", rand(r, ALNUM, 20)), lambda r: rand(r, ALNUM, 30), " / "),
    ),
    Family(
        "tencent",
        "Tencent Cloud",
        "https://www.tencentcloud.com/document/product/598/37140 (SecretId AKID..., SecretKey)",
        pair(lambda r: p("AK", "ID", rand(r, ALNUM, 32)), lambda r: rand(r, ALNUM, 32), " "),
    ),
    Family(
        "yandex_api_key",
        "Yandex Cloud",
        "https://yandex.cloud/en/docs/iam/concepts/authorization/api-key (AQVN...)",
        token(lambda r: p("AQ", "VN", rand(r, B64URL, 36))),
    ),
    Family(
        "yandex_iam_token",
        "Yandex Cloud",
        "https://yandex.cloud/en/docs/iam/concepts/authorization/iam-token (t1. ...)",
        token(lambda r: p("t", "1.", rand(r, B64URL, 60), ".", rand(r, B64URL, 86))),
    ),
    Family(
        "yandex_oauth",
        "Yandex",
        "https://yandex.ru/dev/id/doc/en/tokens/ (OAuth tokens y0_...)",
        token(lambda r: p("y", "0_", rand(r, B64URL, 55))),
    ),
    Family(
        "digitalocean",
        "DigitalOcean",
        "https://docs.digitalocean.com/reference/api/create-personal-access-token/ (dop_v1_)",
        token(lambda r: p("do", r.choice("opr"), "_v1_", rand(r, HEX, 64))),
    ),
    Family(
        "azure_ad_client_secret",
        "Azure AD",
        "https://learn.microsoft.com/en-us/purview/sit-defn-azure-ad-client-secret (..7Q~...)",
        token(lambda r: p(rand(r, ALNUM, 3), r.choice(DIGITS), "Q~", rand(r, ALNUM + "_~.-", 34))),
    ),
    Family(
        "cloudflare",
        "Cloudflare",
        "https://developers.cloudflare.com/fundamentals/api/get-started/token-formats (cfut_ ...)",
        token(
            lambda r: p(
                "cf", r.choice(["k", "ut", "at"]), "_", rand(r, ALNUM, 40), rand(r, ALNUM, 8)
            )
        ),
    ),
    Family(
        "cloudflare_origin_ca",
        "Cloudflare",
        "https://developers.cloudflare.com/fundamentals/api/get-started/ca-keys/ (v1.0-...)",
        token(lambda r: p("v1", ".0-", rand(r, HEX, 24), "-", rand(r, HEX, 146))),
    ),
    Family(
        "vault",
        "Vault",
        "https://developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes (hvs., hvb.)",
        token(lambda r: p("hv", r.choice("sb"), ".", rand(r, B64URL, 90))),
    ),
    Family(
        "terraform_cloud",
        "Terraform Cloud",
        "https://developer.hashicorp.com/terraform/cloud-docs/users-teams-organizations/api-tokens",
        token(lambda r: p(rand(r, ALNUM, 14), ".atlas", "v1.", rand(r, B64URL, 67))),
    ),
    Family(
        "doppler",
        "Doppler",
        "https://docs.doppler.com/reference/auth-token-formats (dp.pt., dp.st., dp.sa. ...)",
        token(lambda r: p("dp", ".", r.choice(["pt", "st", "sa", "ct"]), ".", rand(r, ALNUM, 43))),
    ),
    Family(
        "pulumi",
        "Pulumi",
        "https://www.pulumi.com/docs/pulumi-cloud/access-management/access-tokens/ (pul- + 40 hex)",
        token(lambda r: p("pu", "l-", rand(r, HEX, 40))),
    ),
    Family(
        "databricks",
        "Databricks",
        "https://docs.databricks.com/en/dev-tools/auth/pat.html (dapi + 32 hex)",
        token(lambda r: p("da", "pi", rand(r, HEX, 32))),
    ),
    Family(
        "grafana",
        "Grafana",
        "https://grafana.com/docs/grafana/latest/administration/service-accounts/ (glsa_)",
        token(lambda r: p("gl", "sa_", rand(r, ALNUM, 32), "_", rand(r, HEX, 8))),
    ),
    Family(
        "new_relic",
        "New Relic",
        "https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/ (user keys NRAK-)",
        token(lambda r: p("NR", "AK-", rand(r, UPPER + DIGITS, 27))),
    ),
    Family(
        "sentry",
        "Sentry",
        "https://docs.sentry.io/account/auth-tokens/ (sntrys_ organization, sntryu_ user tokens)",
        token(
            lambda r: r.choice(
                [
                    p(
                        "sntr",
                        "ys_",
                        b64url(json.dumps({"iat": 1.7e9, "org": "acme"}).encode()),
                        "_",
                        rand(r, B64URL, 43),
                    ),
                    p("sntr", "yu_", rand(r, HEX, 64)),
                ]
            )
        ),
    ),
    Family(
        "supabase",
        "Supabase",
        "https://supabase.com/docs/guides/api/api-keys (sb_secret_), access tokens sbp_",
        token(
            lambda r: r.choice(
                [p("sb", "_secret_", rand(r, B64URL, 31)), p("sb", "p_", rand(r, HEX, 40))]
            )
        ),
    ),
    Family(
        "atlassian",
        "Atlassian",
        "https://support.atlassian.com/atlassian-account/docs/manage-api-tokens-for-your-atlassian-account/"
        " (ATATT3...)",
        token(lambda r: p("ATA", "TT3", rand(r, B64URL, 170), "=", rand(r, HEX.upper(), 8))),
    ),
    # --- source hosting
    Family(
        "github_classic",
        "GitHub",
        "https://github.blog/engineering/platform-security/behind-githubs-new-authentication-token-formats/"
        " (gh[pousr]_ + 30 base62 + CRC32 in 6 base62)",
        token(lambda r: crc32_token(r, p("gh", r.choice("pousr"), "_"))),
    ),
    Family(
        "github_fine_grained",
        "GitHub",
        "https://docs.github.com/en/authentication/keeping-your-account-and-data-secure/"
        "managing-your-personal-access-tokens (github_pat_ 22 _ 59)",
        token(lambda r: p("github", "_pat_", rand(r, ALNUM, 22), "_", rand(r, ALNUM, 59))),
    ),
    Family(
        "gitlab",
        "GitLab",
        "https://docs.gitlab.com/security/tokens/#token-prefixes (glpat-, gldt-, glrt-, ...)",
        token(_gitlab),
    ),
    Family(
        "gitlab_routable",
        "GitLab",
        "https://handbook.gitlab.com/handbook/engineering/architecture/design-documents/cells/"
        "routable_tokens/ (payload, '.', base36 length and CRC32)",
        token(_gitlab_routable),
    ),
    Family(
        "gitlab_runner_registration",
        "GitLab",
        "https://docs.gitlab.com/security/tokens/#token-prefixes (runners: GR1348941)",
        token(lambda r: p("GR13", "48941", rand(r, B64URL, 20))),
    ),
    # --- package registries
    Family(
        "npm",
        "npm",
        "https://github.blog/changelog/2021-09-23-npm-has-a-new-access-token-format/ (CRC32)",
        token(lambda r: crc32_token(r, p("np", "m_"))),
    ),
    Family(
        "pypi",
        "PyPI",
        "https://pypi.org/help/#apitoken (pypi- + base64 macaroon, location pypi.org)",
        token(lambda r: pypi_token(r, r.choice([b"pypi.org", b"test.pypi.org"]))),
    ),
    Family(
        "docker_hub",
        "Docker Hub",
        "https://docs.docker.com/security/for-developers/access-tokens/ (dckr_pat_)",
        token(lambda r: p("dckr", "_pat_", rand(r, B64URL, 27))),
    ),
    Family(
        "rubygems",
        "RubyGems",
        "https://guides.rubygems.org/api-key-scopes/ (rubygems_ + 48 hex)",
        token(lambda r: p("rubygems", "_", rand(r, HEX, 48))),
    ),
    Family(
        "nuget",
        "NuGet",
        "https://learn.microsoft.com/en-us/nuget/nuget-org/scoped-api-keys (oy2 + 43)",
        token(lambda r: p("o", "y2", rand(r, LOWER + DIGITS, 43))),
    ),
    # --- chat platforms
    Family(
        "slack",
        "Slack",
        "https://api.slack.com/concepts/token-types (xoxb-, xoxp-, xapp-, legacy xoxs-)",
        token(
            lambda r: r.choice(
                [
                    p(
                        "xo",
                        "x",
                        r.choice("bpsar"),
                        "-",
                        rand(r, DIGITS, 12),
                        "-",
                        rand(r, DIGITS, 13),
                        "-",
                        rand(r, ALNUM, 24),
                    ),
                    p(
                        "xa",
                        "pp-1-",
                        rand(r, UPPER + DIGITS, 11),
                        "-",
                        rand(r, DIGITS, 13),
                        "-",
                        rand(r, HEX, 64),
                    ),
                    p("xo", "xe.xoxp-1-", rand(r, UPPER + DIGITS, 160)),
                ]
            )
        ),
    ),
    Family(
        "discord_bot_token",
        "Discord",
        "https://discord.com/developers/docs/reference#authentication (bot token: base64 user ID."
        "timestamp.HMAC)",
        token(discord_bot_token),
    ),
    Family(
        "telegram_bot_token",
        "Telegram",
        "https://core.telegram.org/bots/api#authorizing-your-bot (<bot id>:<35 characters>)",
        token(lambda r: p(str(r.randrange(10**8, 10**10)), ":", "AA", rand(r, B64URL, 33))),
    ),
    # --- payments
    Family(
        "stripe",
        "Stripe",
        "https://docs.stripe.com/keys (sk_live_, sk_test_, rk_live_); whsec_ signing secrets",
        token(
            lambda r: (
                p(r.choice(["s", "r"]), "k_", r.choice(["live", "test"]), "_", rand(r, ALNUM, 99))
                if r.random() < 0.7
                else p("wh", "sec_", rand(r, B64, 32))
            )
        ),
    ),
    Family(
        "square",
        "Square",
        "https://developer.squareup.com/docs/build-basics/access-tokens (EAAA, sq0csp-)",
        token(
            lambda r: r.choice(
                [
                    p("EA", "AA", rand(r, B64URL, 60)),
                    p("sq0", "csp-", rand(r, B64URL, 43)),
                    p("sq0", "atp-", rand(r, B64URL, 22)),
                ]
            )
        ),
    ),
    Family(
        "braintree",
        "Braintree",
        "https://developer.paypal.com/braintree/docs/guides/authorization/access-tokens"
        " (access_token$production$...)",
        token(
            lambda r: p(
                "access",
                "_token$",
                "production$",
                rand(r, LOWER + DIGITS, 16),
                "$",
                rand(r, HEX, 32),
            )
        ),
    ),
    Family(
        "shopify",
        "Shopify",
        "https://shopify.dev/docs/apps/build/authentication-authorization/access-tokens (shpat_)",
        token(lambda r: p("sh", r.choice(["pat", "pca", "ppa", "pss"]), "_", rand(r, HEX, 32))),
    ),
    Family(
        "flutterwave",
        "Flutterwave",
        "https://developer.flutterwave.com/docs/authentication (FLWSECK-...-X)",
        token(lambda r: p("FLW", "SECK", r.choice(["", "_TEST"]), "-", rand(r, HEX, 32), "-X")),
    ),
    # --- messaging and mail
    Family(
        "twilio",
        "Twilio",
        "https://www.twilio.com/docs/iam/api-keys/key-resource-v1 (SID ^SK[0-9a-fA-F]{32}$,"
        " the basic-auth user; the secret is its password)",
        pair(lambda r: p("S", "K", rand(r, HEX, 32)), lambda r: rand(r, ALNUM, 32), ":"),
    ),
    Family(
        "sendgrid",
        "SendGrid",
        "https://www.twilio.com/docs/sendgrid/ui/account-and-settings/api-keys (SG.22.43)",
        token(lambda r: p("S", "G.", rand(r, B64URL, 22), ".", rand(r, B64URL, 43))),
    ),
    Family(
        "mailgun",
        "Mailgun",
        "https://documentation.mailgun.com/docs/mailgun/api-reference/authentication (key-)",
        token(lambda r: p("ke", "y-", rand(r, HEX, 32))),
    ),
    Family(
        "mailchimp",
        "Mailchimp",
        "https://mailchimp.com/developer/marketing/guides/quick-start/ (32 hex + -us<dc>)",
        token(lambda r: p(rand(r, HEX, 32), "-us", str(r.randrange(1, 22)))),
    ),
    Family(
        "brevo",
        "Brevo",
        "https://developers.brevo.com/docs/getting-started (xkeysib- + 64 hex + 16)",
        token(lambda r: p("xkey", "sib-", rand(r, HEX, 64), "-", rand(r, ALNUM, 16))),
    ),
    Family(
        "deepl",
        "DeepL",
        "https://developers.deepl.com/docs/getting-started/auth (free keys: a UUID + :fx)",
        token(lambda r: p(str(uuid.UUID(int=r.getrandbits(128))), ":f", "x")),
    ),
    # --- other services
    Family(
        "linear",
        "Linear",
        "https://linear.app/developers/graphql#personal-api-keys (lin_api_ + 40)",
        token(lambda r: p("lin", "_api_", rand(r, ALNUM, 40))),
    ),
    Family(
        "notion",
        "Notion",
        "https://developers.notion.com/docs/authorization (ntn_ + 46, legacy secret_ + 43)",
        token(
            lambda r: r.choice(
                [p("nt", "n_", rand(r, ALNUM, 46)), p("sec", "ret_", rand(r, ALNUM, 43))]
            )
        ),
    ),
    Family(
        "airtable",
        "Airtable",
        "https://airtable.com/developers/web/guides/personal-access-tokens (pat<14>.<64 hex>)",
        token(lambda r: p("pa", "t", rand(r, ALNUM, 14), ".", rand(r, HEX, 64))),
    ),
    Family(
        "postman",
        "Postman",
        "https://learning.postman.com/docs/developer/postman-api/authentication/ (PMAK-)",
        token(lambda r: p("PM", "AK-", rand(r, HEX, 24), "-", rand(r, HEX, 34))),
    ),
    Family(
        "dynatrace",
        "Dynatrace",
        "https://docs.dynatrace.com/docs/manage/identity-access-management/access-tokens-and-oauth-clients"
        "/access-tokens#token-format (dt0c01.<24>.<64>)",
        token(
            lambda r: p(
                "dt0", "c01.", rand(r, UPPER + DIGITS, 24), ".", rand(r, UPPER + DIGITS, 64)
            )
        ),
    ),
    Family(
        "figma",
        "Figma",
        "https://www.figma.com/developers/api#access-tokens (figd_)",
        token(lambda r: p("fi", "gd_", rand(r, B64URL, 40))),
    ),
    Family(
        "contentful",
        "Contentful",
        "https://www.contentful.com/developers/docs/references/authentication/ (CFPAT- + 43)",
        token(lambda r: p("CF", "PAT-", rand(r, B64URL, 43))),
    ),
    Family(
        "vk",
        "VK",
        "https://id.vk.com/about/business/go/docs/ru/vkid/latest/vk-id/tokens (vk1.a.)",
        token(lambda r: p("vk", "1.a.", rand(r, B64URL, 200))),
    ),
    Family(
        "onepassword",
        "1Password",
        "https://developer.1password.com/docs/service-accounts/ (ops_eyJ...)",
        token(
            lambda r: p(
                "op",
                "s_",
                b64url(
                    json.dumps(
                        {"signInAddress": "my.1password.com", "secret": rand(r, ALNUM, 40)}
                    ).encode()
                ),
            )
        ),
    ),
    Family(
        "mapbox_secret",
        "Mapbox",
        "https://docs.mapbox.com/help/dive-deeper/access-tokens/ (secret sk.eyJ..., public pk.)",
        token(
            lambda r: p(
                "s",
                "k.",
                b64url(json.dumps({"u": "acme", "a": rand(r, ALNUM, 25)}).encode()),
                ".",
                rand(r, B64URL, 22),
            )
        ),
    ),
    Family(
        "age",
        "age",
        "https://age-encryption.org/v1 (AGE-SECRET-KEY-1 + bech32)",
        token(lambda r: bech32("age-secret-key-", [r.randrange(32) for _ in range(52)]).upper()),
    ),
    Family(
        "jwt",
        "JWT",
        "https://www.rfc-editor.org/rfc/rfc7519 (header.payload.signature; unsecured: two parts)",
        token(lambda r: jwt(r, signed=r.random() < 0.7)),
    ),
    # --- private keys, URLs, webhooks, connection strings
    Family(
        "private_key_pem",
        "SSH",
        "https://www.rfc-editor.org/rfc/rfc7468 (PEM), OpenSSH PROTOCOL.key",
        token(
            lambda r: pem(
                r,
                r.choice(
                    ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"]
                ),
            )
        ),
    ),
    Family(
        "url_password",
        "database",
        "https://www.rfc-editor.org/rfc/rfc3986#section-3.2.1 (userinfo user:password@)",
        part(
            lambda r: (
                r.choice(
                    [
                        "postgres://app:",
                        "mysql://root:",
                        "redis://:",
                        "amqp://guest:",
                        "mongodb+srv://bot:",
                    ]
                ),
                rand(r, ALNUM + "!*", 18),
                "@db.internal:5432/app",
            )
        ),
    ),
    Family(
        "slack_webhook",
        "Slack",
        "https://api.slack.com/messaging/webhooks (hooks.slack.com/services/T.../B.../...)",
        part(
            lambda r: (
                "https://hooks.slack.com/services/",
                p(
                    "T",
                    rand(r, UPPER + DIGITS, 10),
                    "/B",
                    rand(r, UPPER + DIGITS, 10),
                    "/",
                    rand(r, ALNUM, 24),
                ),
                "",
            )
        ),
    ),
    Family(
        "discord_webhook",
        "Discord",
        "https://discord.com/developers/docs/resources/webhook (/webhooks/<id>/<token>)",
        part(
            lambda r: (
                f"https://discord.com/api/webhooks/{r.randrange(10**17, 10**19)}/",
                rand(r, B64URL, 68),
                "",
            )
        ),
    ),
    Family(
        "azure_storage",
        "Azure",
        "https://learn.microsoft.com/en-us/azure/storage/common/storage-configure-connection-string",
        part(
            lambda r: (
                "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=",
                rand(r, B64, 86) + "==",
                ";EndpointSuffix=core.windows.net",
            )
        ),
    ),
]
