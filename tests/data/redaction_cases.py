"""The redaction corpora: every family bare and labelled, in English, Russian and Chinese
sentences and in config lines; labelled forms as people write them; and look-alikes -- text
that resembles a credential and must come back byte-for-byte.

A case is (name, text, secrets): the redactor must return ``text`` with each secret, in order,
replaced by the marker and nothing else changed.
"""

from __future__ import annotations

import base64
import random
import uuid
from dataclasses import dataclass

from tests.data.secret_corpus import FAMILIES
from tests.support.token_builders import ALNUM, B64, DIGITS, HEX, LOWER, UPPER, b64url, p, rand

MARK = "[REDACTED]"


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    secrets: tuple[str, ...] = ()

    @property
    def want(self) -> str:
        out, pos = [], 0
        for secret in self.secrets:
            i = self.text.index(secret, pos)
            out.append(self.text[pos:i] + MARK)
            pos = i + len(secret)
        return "".join(out) + self.text[pos:]


# ---------------------------------------------------------------------------
# each family in ten places: bare (alone, in three languages, in code) and labelled

BARE = (
    ("alone", "{s}"),
    ("en", "use {s} for the deploy, thanks"),
    ("ru", "Держи {s} и не теряй, ладно?"),
    ("zh", "用这个{s}试试。"),
    ("code", 'client = Client("{s}")'),
)
LABELLED = (
    ("env", "export SERVICE_TOKEN={s}"),
    ("json", '{{"api_key": "{s}", "region": "eu"}}'),
    ("en_label", "my {provider} token is {s}"),
    ("ru_label", "мой токен {provider}: {s}"),
    ("zh_label", "{provider}的密钥是{s}，别外传"),
)


def family_cases() -> list[Case]:
    cases = []
    for family in FAMILIES:
        rng = random.Random(family.name)
        for form, template in (*BARE, *LABELLED):
            sample, secrets = family.make(rng)
            text = template.format(s=sample, provider=family.provider)
            cases.append(Case(f"{family.name}/{form}", text, secrets))
    return cases


# ---------------------------------------------------------------------------
# labelled forms: "§" is a password-like value with no shape of its own

LABEL_FORMS: tuple[tuple[str, str], ...] = (
    # keys with extra words, any case style
    ("suffix_words", 'password_super_secure = "§"'),
    ("prefix_and_suffix", "my_password_sec = '§'"),
    ("caps_compound", "AWSToken=§"),
    ("all_caps_glued", "AWSTOKEN=§"),
    ("env", "DB_PASSWORD=§"),
    ("export", "export MY_SERVICE_SECRET=§"),
    ("yaml", "database:\n  user: app\n  password: §\n  host: db"),
    ("yaml_quoted", '  api_key: "§"'),
    ("json_camel", '{"clientSecret": "§", "clientId": "web"}'),
    ("header_x_api_key", "X-API-Key: §"),
    ("header_auth_token", "X-Auth-Token: §"),
    ("header_private_token", "curl -H 'Private-Token: §' https://gitlab.example.com/api/v4"),
    ("compose_list", "environment:\n  - POSTGRES_PASSWORD=§\n  - POSTGRES_DB=app"),
    ("powershell", '$env:API_KEY = "§"'),
    ("windows_set", "set DB_PASS=§"),
    ("properties", "spring.datasource.password=§"),
    ("python", 'token = "§"  # do not commit'),
    ("go", 'secret := "§"'),
    ("js", 'const apiKey = "§";'),
    ("php", "'password' => '§',"),
    ("toml", '[auth]\ntoken = "§"'),
    ("pgpassword", "PGPASSWORD=§ psql -h db app"),
    # command lines
    ("curl_u", "curl -u admin:§ https://api.example.com/v1"),
    ("curl_user", "curl --user 'deploy:§' https://ci.example.com"),
    ("curl_u_empty_user", 'curl -u ":§" https://api.example.com/v1'),
    ("mysql_p", "mysql -u root -p§ app"),
    ("mysql_password_eq", "mysql --password=§ app"),
    ("long_flag", "./run --db-password '§' --dry-run"),
    ("keytool", "keytool -importkeystore -srckeystore a.jks -storepass §"),
    ("openssl", "openssl pkcs12 -in cert.p12 -passin pass:§ -nodes"),
    ("sshpass", "sshpass -p '§' ssh deploy@host"),
    ("redis_cli", "redis-cli -h cache -a § ping"),
    ("docker_login", "docker login -u bot -p § registry.example.com"),
    # markup
    ("xml_add_key", '<add key="Password" value="§" />'),
    ("xml_add_api_key", '<add key="ApiKey" value="§"/>'),
    ("xml_element", "<password>§</password>"),
    ("xml_multiline", "<Password>\n    §\n</Password>"),
    ("xml_entry_key", '<entry key="db.password">§</entry>'),
    ("xml_property", '<property name="secret" value="§"/>'),
    ("html_input", '<input type="password" name="pw" value="§">'),
    # headers with any scheme word
    ("authorization_api_token", "Authorization: Api-Token §"),
    ("authorization_bearer", "Authorization: Bearer §"),
    ("authorization_no_scheme", "Authorization: §"),
    ("authorization_json", '{"headers": {"Authorization": "Token §"}}'),
    # English prose
    ("en_password_is", "my password is §"),
    ("en_wifi", "the wifi password is §, ask me if it fails"),
    ("en_api_key", "Here is my API key: §"),
    ("en_secret_key_was", "the secret key was §."),
    ("en_bot_token", "bot token: §"),
    ("en_access_key", "Secret access key: §"),
    ("en_colon_then_words", "password: § for the staging db"),
    ("en_token_is_colon", "The token is: §"),
    # Russian
    ("ru_password_colon", "мой пароль: §"),
    ("ru_password_dash", "пароль от почты — §"),
    ("ru_password_capital", "Пароль: §, не забудь сменить"),
    ("ru_password_takoy", "пароль такой: §"),
    ("ru_password_bare", "пароль §"),
    ("ru_password_quotes", "новый пароль «§»"),
    ("ru_bot_token", "токен бота: §"),
    ("ru_token_dash", "вот токен — §"),
    ("ru_api_key", "API ключ: §"),
    ("ru_key_api", "ключ API — §"),
    ("ru_secret_key", "секретный ключ: §"),
    ("ru_access_key", "ключ доступа: §"),
    ("ru_password_is", "пароль это §"),
    ("ru_wifi", "пароль от wifi: §"),
    ("ru_token_of_service", "мой токен GitHub: §"),
    ("ru_key_of_service", "ключ OpenAI — §"),
    ("ru_wifi_latin", "пароль Wi-Fi: §"),
    # Chinese
    ("zh_password_is", "密码是§"),
    ("zh_db_password", "数据库密码：§，别外传。"),
    ("zh_token", "令牌：§"),
    ("zh_access_token_is", "访问令牌是§"),
    ("zh_api_key", "API密钥=§"),
    ("zh_my_key", "我的密钥是§，别告诉别人"),
    ("zh_private_key", "私钥：§"),
    ("zh_kouling", "口令: § 记住了吗"),
    ("zh_password_wei", "密码为 §"),
    ("zh_changed", "我把新密码改成§了"),
    ("zh_credential", "凭证：§"),
    ("zh_wifi_space", "wifi密码是 §"),
)


def _password(rng: random.Random) -> str:
    return rand(rng, ALNUM, rng.randrange(10, 15)) + rng.choice("!@%*") + rng.choice(DIGITS)


def label_cases() -> list[Case]:
    cases = []
    for name, template in LABEL_FORMS:
        rng = random.Random(name)
        value = _password(rng)
        if name == "authorization_bearer":
            value = rand(rng, ALNUM, 32)
        cases.append(Case(f"label/{name}", template.replace("§", value), (value,)))
    # labelled forms that carry a whole token after the label: a two-part JWT, Basic auth
    rng = random.Random("forms")
    two_part_jwt = b64url(b'{"alg":"none"}') + "." + b64url(b'{"sub":"42","role":"admin"}')
    cases.append(Case("label/jwt_two_segments", f"cookie: {two_part_jwt}", (two_part_jwt,)))
    basic = base64.b64encode(f"bot:{_password(rng)}".encode()).decode()
    cases.append(Case("label/authorization_basic", f"Authorization: Basic {basic}", (basic,)))
    return cases


# ---------------------------------------------------------------------------
# look-alikes


def _lookalike_items() -> list[tuple[str, str]]:
    rng = random.Random("look-alikes")

    def u() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + rng.randbytes(240)).decode()
    public_pem = "\n".join(rand(rng, B64, 64) for _ in range(4))
    return [
        # identifiers, hashes, numbers
        ("uuid", u()),
        ("uuid_upper", u().upper()),
        ("uuid_in_path", f"https://example.com/users/{u()}/settings"),
        ("git_sha", rand(rng, HEX, 40)),
        ("short_sha", rand(rng, HEX, 7)),
        ("sha256", rand(rng, HEX, 64)),
        ("docker_digest", "sha256:" + rand(rng, HEX, 64)),
        ("md5", rand(rng, HEX, 32)),
        ("order_number", "#A-2024-000123"),
        ("order_id", "ORD-20240517-88812345"),
        ("invoice", "INV-2024-0042"),
        ("tracking", "1Z999AA10123456784"),
        ("iban", "DE89370400440532013000"),
        ("telegram_chat_id", "-1001234567890"),
        ("telegram_link", "https://t.me/c/1234567890/42"),
        ("bot_username", "@my_helper_bot"),
        ("discord_snowflake", str(rng.randrange(10**17, 10**18))),
        ("discord_channel", f"https://discord.com/channels/{rng.randrange(10**17, 10**18)}/42"),
        ("aws_arn", "arn:aws:iam::123456789012:role/deploy"),
        ("aws_user_id", "AIDA" + rand(rng, UPPER + "234567", 16)),
        ("aws_role_id", "AROA" + rand(rng, UPPER + "234567", 16)),
        ("twilio_account_sid", "AC" + rand(rng, HEX, 32)),
        ("stripe_publishable", p("p", "k_live_", rand(rng, ALNUM, 24))),
        ("stripe_customer", "cus_" + rand(rng, ALNUM, 14)),
        (
            "mapbox_public",
            p("p", "k.", b64url(b'{"u":"acme","a":"ckx"}'), ".", rand(rng, ALNUM, 22)),
        ),
        ("supabase_publishable", "sb_publishable_" + rand(rng, ALNUM, 31)),
        (
            "google_client_id",
            f"{rng.randrange(10**11)}-{rand(rng, LOWER + DIGITS, 32)}.apps.googleusercontent.com",
        ),
        ("sentry_dsn", f"https://{rand(rng, HEX, 32)}@o123456.ingest.sentry.io/4505"),
        ("openai_org", "org-" + rand(rng, ALNUM, 24)),
        ("openai_file", "file-" + rand(rng, ALNUM, 24)),
        ("chat_completion_id", "chatcmpl-" + rand(rng, ALNUM, 29)),
        ("anthropic_message_id", "msg_01" + rand(rng, ALNUM, 22)),
        ("slack_channel", "C024BE91L"),
        ("discord_like_short_id", "MTIzNDU2Nzg5.abcdef.notatokenatallreallynot"),
        ("telegram_like", "12345678:ABCDEF is not a bot token"),
        ("hash_then_us", rand(rng, HEX, 32) + "-usage"),
        # URLs
        ("url_query", "https://example.com/search?q=redis+password&page=2#results"),
        ("url_utm", "https://shop.example.com/checkout?order=88812345&utm_source=tg"),
        ("url_yandex", "https://yandex.ru/maps/?ll=37.6176,55.7558&z=12"),
        ("url_baidu", "https://www.baidu.com/s?wd=%E5%AF%86%E7%A0%81"),
        ("url_reset", "https://example.com/reset-password?user=bob"),
        ("url_tokens_path", "http://localhost:8080/api/v1/tokens/count"),
        ("url_user_only", "https://bob@example.com/path"),
        ("url_pg_no_password", "postgres://app@db.internal:5432/app"),
        ("ssh_clone", "git@github.com:example/repo.git"),
        ("s3", "s3://bucket/backups/2024-05-17.tar.gz"),
        ("github_pr", "https://github.com/example/repo/pull/1234"),
        ("github_commit", "https://github.com/example/repo/commit/" + rand(rng, HEX, 40)),
        # base64 and encodings
        ("data_uri_png", "data:image/png;base64," + png),
        ("base64_text", "aGVsbG8gd29ybGQ="),
        ("jwt_header_only", "eyJhbGciOiJIUzI1NiJ9"),
        ("percent_encoded", "%D0%BF%D0%B0%D1%80%D0%BE%D0%BB%D1%8C"),
        # phones, addresses, times
        ("phone_ru", "+7 (915) 123-45-67"),
        ("phone_cn", "+86 138 0013 8000"),
        ("phone_us", "+1 (555) 123-4567"),
        ("phone_free", "8 800 555 35 35"),
        ("email", "alice.smith+bots@example.co.uk"),
        ("ipv4", "192.168.1.10:8080"),
        ("ipv6", "fe80::1ff:fe23:4567:890a"),
        ("mac", "00:1A:2B:3C:4D:5E"),
        ("timestamp", "2024-05-17T08:00:00Z"),
        ("version", "v1.24.3-rc.1"),
        # public keys and addresses
        (
            "ssh_ed25519",
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rand(rng, B64, 43) + " alice@laptop",
        ),
        ("ssh_rsa", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ" + rand(rng, B64, 300) + " bob@host"),
        ("public_key_pem", f"-----BEGIN PUBLIC KEY-----\n{public_pem}\n-----END PUBLIC KEY-----"),
        ("certificate", f"-----BEGIN CERTIFICATE-----\n{public_pem}\n-----END CERTIFICATE-----"),
        (
            "pgp_public",
            "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n"
            + public_pem
            + "\n-----END PGP PUBLIC KEY BLOCK-----",
        ),
        ("age_recipient", "age1" + rand(rng, "qpzry9x8gf2tvdw0s3jn54khce6mua7l", 58)),
        ("wireguard_public", rand(rng, B64, 43) + "="),
        ("eth_address", "0x" + rand(rng, HEX, 40)),
        ("btc_address", "bc1q" + rand(rng, "qpzry9x8gf2tvdw0s3jn54khce6mua7l", 38)),
        # shell, code, placeholders
        ("command_substitution", "$(gh auth token)"),
        ("braced_variable", "${GITHUB_TOKEN}"),
        ("variable", "$API_KEY"),
        ("windows_variable", "%APPDATA%"),
        ("actions_secret", "${{ secrets.NPM_TOKEN }}"),
        ("os_environ", "os.environ['OPENAI_API_KEY']"),
        ("process_env", "process.env.STRIPE_SECRET_KEY"),
        ("getter", "get_password()"),
        ("hf_identifier", "hf_hub_download"),
        ("npm_identifier", "npm_config_cache"),
        ("sklearn", "sk-learn"),
        ("prefix_only", "AKIA"),
        ("slack_prefix_only", "xoxb-"),
        ("placeholder_angle", "<your token>"),
        ("placeholder_caps", "<API_KEY>"),
        ("placeholder_x", "xxxx-xxxx-xxxx"),
        ("placeholder_stars", "**********"),
        ("placeholder_words", "your_token_here"),
        ("placeholder_env_name", "YOUR_API_KEY"),
        ("placeholder_sk", "sk-..."),
        ("placeholder_ghp", "ghp_" + "X" * 36),
        ("placeholder_aws", "AKIA" + "X" * 16),
        ("placeholder_dots", "•••••••"),
        ("tokenizer", "tokenizer.json"),
        ("max_tokens", "max_tokens=4096"),
        ("token_count", "token_count: 42"),
        ("password_hash_column", "password_hash"),
        ("secret_name", "SECRET_KEY_BASE"),
    ]


LOOKALIKE_FRAMES = (
    ("alone", "{x}"),
    ("en", "see {x} for details"),
    ("en_was", "it was {x}, nothing else"),
    ("ru", "глянь {x}, пожалуйста"),
    ("ru_link", "Ссылка: {x}"),
    ("zh", "请看{x}，谢谢"),
    ("zh_note", "备注：{x}"),
    ("fenced", "```\n{x}\n```"),
)

# References and placeholders also stay under a label.
LABELLED_LOOKALIKES = (
    "command_substitution",
    "braced_variable",
    "variable",
    "windows_variable",
    "actions_secret",
    "os_environ",
    "process_env",
    "getter",
    "placeholder_angle",
    "placeholder_caps",
    "placeholder_x",
    "placeholder_stars",
    "placeholder_words",
    "placeholder_env_name",
    "placeholder_sk",
    "placeholder_ghp",
    "placeholder_dots",
    "hf_identifier",
    "url_user_only",
    "url_pg_no_password",
)
LABEL_FRAMES = (
    ("token", "token: {x}"),
    ("env", "export GITHUB_TOKEN={x}"),
    ("json", '{{"password": "{x}"}}'),
    ("ru", "пароль: {x}"),
    ("zh", "密码：{x}"),
    ("header", "Authorization: Bearer {x}"),
)

# Prose about secrets, in three languages, that holds none.
PROSE = (
    "my password is too short",
    "the token expired yesterday",
    "I rotated the API key and the secret key last week",
    "the key is in the drawer",
    "the password is 8 characters long",
    "your password is required",
    "the password manager says 1Password is fine",
    "Bearer of bad news: the build is red",
    "the Authorization header is missing",
    "author: Alice; auth: required; bypass: false; passport: yes",
    "pass the salt, please",
    "set max_tokens=1024 and token_count: 42",
    "password-reset: enabled, passwordless login: on",
    "export GITHUB_TOKEN=$(gh auth token)",
    "export GITHUB_TOKEN=`gh auth token`",
    'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
    "def check(password: str) -> bool:",
    "token: Optional[str] = None",
    "password = user_password_hash",
    "self.api_key = api_key",
    "from huggingface_hub import hf_hub_download",
    "git push -u origin main",
    "docker run -u 1000:1000 -p 8080:80 img",
    "mysql -u root -p mydb",
    "curl --ntlm -u : https://intranet.example.com",
    "ssh -p 2222 host",
    "git --password-stdin and --no-password here",
    "the secret of a good bot is patience",
    "пароль слишком короткий",
    "токен истёк вчера",
    "ключ от квартиры под ковриком",
    "пароль от почты я забыл",
    "какой у тебя пароль? не говори",
    "секрет успеха — терпение",
    "вот ключ: положи его на место",
    "Токен обновится через 3600 секунд",
    "密码太短了，系统不让注册。",
    "修改密码：请到设置里修改",
    "密码学：研究加密的学科",
    "令牌过期了，重新登录吧",
    "密钥在抽屉里",
    "密码是多少？",
    "密码是六位数字",
    "请输入密码",
    "这个令牌的有效期是两个小时",
    # a separator, then words: a sentence, not a value
    "password: see the vault",
    "the password: same as before",
    "token: 42 tokens left",
    "pass: 3 of 5 tests",
    "const token = await getToken();",
    'token = request.headers.get("Authorization")',
    'password = input("Password: ")',
    "CREATE TABLE users (id int, password varchar(255));",
    '<input type="password" name="password" placeholder="Password">',
    '<label for="password">Password</label>',
    "<token>${TOKEN}</token>",
    "token_type=bearer&expires_in=3600",
    "Authorization header: Bearer <token>",
    "PWD=/home/bob/project",
    "--password-file /run/secrets/db",
    "docker run -e POSTGRES_PASSWORD -p 5432:5432 postgres",
    "Token: 12 в минуту",
    "пароль: такой же, как раньше",
    "токен — это единица текста для модели",
    "API ключ лежит в переменной окружения OPENAI_API_KEY",
    "пароль Wi-Fi: на обороте роутера",
    "токен GitHub — это строка для доступа к API",
    "ключ OpenAI: лежит в vault, спроси у Димы",
    "密码：和之前一样",
    "API密钥在环境变量里",
)


def lookalike_cases() -> list[Case]:
    items = _lookalike_items()
    cases = [
        Case(f"lookalike/{name}/{frame}", template.format(x=item))
        for name, item in items
        for frame, template in LOOKALIKE_FRAMES
    ]
    by_name = dict(items)
    cases += [
        Case(f"lookalike/{name}/label_{frame}", template.format(x=by_name[name]))
        for name in LABELLED_LOOKALIKES
        for frame, template in LABEL_FRAMES
    ]
    cases += [Case(f"prose/{i}", text) for i, text in enumerate(PROSE)]
    return cases


SECRET_CASES = family_cases() + label_cases()
LOOKALIKE_CASES = lookalike_cases()
