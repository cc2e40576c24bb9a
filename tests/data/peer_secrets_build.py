"""Builds tests/data/peer_secrets.jsonl: an approximation of a peer suite of credential samples
taken from two public secret scanners' own rule tests (gitleaks, Yelp/detect-secrets).

Run: ``.venv/bin/python -m tests.data.peer_secrets_build`` (writes the file; deterministic).

Two kinds of record:

- ``generated``: gitleaks builds most of its true positives with
  ``utils.GenerateSampleSecrets(identifier, secrets.NewSecret(regex))`` -- one random secret from
  the rule's regex, written in 30 forms (INI, JSON, XML, YAML, Go, Java, PHP, Python, CSV,
  Makefile, ...).  They are rebuilt here the same way: each rule below is (rule id, the
  identifier its Go file uses, the secret's regex from config/gitleaks.toml), the secret is drawn
  from the regex with a PRNG seeded by the rule id, and the forms are gitleaks' own templates.
- ``literal``: samples written out in the scanners' tests (gitleaks ``tps``/``fps``,
  detect-secrets' parametrized payloads), kept as they are in the JSONL file; this script reads
  them back from it and rewrites the file with the generated records renewed.

In the file, the second character of every credential is written as a JSON ``\\uXXXX`` escape,
so that the file holds no credential literally (a push-protection scanner reads the raw bytes);
``json.loads`` gives the sample back unchanged.
"""

from __future__ import annotations

import json
import random
import re
import string
from pathlib import Path
from typing import Any

try:
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - before Python 3.11
    import sre_parse  # type: ignore[no-redef]

PATH = Path(__file__).with_name("peer_secrets.jsonl")

ABOUT = (
    "Peer suite (an approximation): credential samples and look-alikes from the rule tests of "
    "gitleaks (cmd/generate/config/rules/*.go: tps, fps; secrets of GenerateSampleSecrets "
    "regenerated from config/gitleaks.toml regexes) and Yelp/detect-secrets "
    "(tests/plugins/*_test.py). Public test samples only, none of them a live credential. "
    "Each record: text, secret (the credential substring, or null for a negative), source, kind. "
    "Rebuild: python -m tests.data.peer_secrets_build. The second character of each secret is "
    "\\u-escaped so the raw file holds no credential literally."
)

# gitleaks cmd/generate/config/utils/generate.go, GenerateSampleSecrets: {i} identifier, {s} secret
FORMS = (
    ("ini - quoted1", '{i}Token="{s}"'),
    ("ini - quoted2", '{i}Token = "{s}"'),
    ("ini - unquoted1", "{i}Token={s}"),
    ("ini - unquoted2", "{i}Token = {s}"),
    ("json - string", '{\n    "{i}_token": "{s}"\n}'),
    ("json - escaped string", '\\{\n    \\"{i}_token\\": \\"{s}\\"\n\\}'),
    ("xml - element", "<{i}Token>{s}</{i}Token>"),
    ("xml - element multiline", "<{i}Token>\n    {s}\n</{i}Token>"),
    ("yaml - singleline - unquoted", "{i}_token: {s}"),
    ("yaml - singleline - single quote", "{i}_token: '{s}'"),
    ("yaml - singleline - double quote", '{i}_token: "{s}"'),
    ("yaml - multiline - literal", "{i}_token: |\n  {s}"),
    ("yaml - multiline - folding", "{i}_token: >\n  {s}"),
    ("C#", 'string {i}Token = "{s}";'),
    ("go - normal", 'var {i}Token string = "{s}"'),
    ("go - short", '{i}Token := "{s}"'),
    ("go - backticks", "{i}Token := `{s}`"),
    ("java", 'String {i}Token = "{s}";'),
    ("kotlin - notype", 'var {i}Token = "{s}"'),
    ("php - string concat", '${i}Token .= "{s}"'),
    ("python - single quote", "{i}Token = '{s}'"),
    ("python - double quote", '{i}Token = "{s}"'),
    ("csv - unquoted", "{i}Token,{s},"),
    ("logstash", '  "{i}Token" => "{s}"'),
    ("make - recursive assignment", '{i}_TOKEN = "{s}"'),
    ("make - simple assignment", '{i}_TOKEN := "{s}"'),
    ("make - shell assignment", '{i}_TOKEN ::= "{s}"'),
    ("make - evaluated shell assignment", '{i}_TOKEN :::= "{s}"'),
    ("make - conditional assignment", '{i}_TOKEN ?= "{s}"'),
    ("make - append", '{i}_TOKEN += "{s}"'),
)

UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"

# (rule id, identifier, secret regex). The regex is the rule's secret group in
# config/gitleaks.toml, with inline (?i) dropped: gitleaks' generator, like this one, draws from
# the character classes as written (utils.AlphaNumeric is [a-z0-9]). Identifiers are those of the
# rule's Go file where read, else the rule's keyword.
RULES: tuple[tuple[str, str, str], ...] = (
    # prefixed: the shape alone is distinctive
    (
        "1password-secret-key",
        "1password",
        r"A3-[A-Z0-9]{6}-[A-Z0-9]{11}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
    ),
    (
        "1password-secret-key/2",
        "1password",
        r"A3-[A-Z0-9]{6}-[A-Z0-9]{6}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
    ),
    ("adobe-client-secret", "adobe", r"p8e-[a-z0-9]{32}"),
    ("age-secret-key", "age", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ("alibaba-access-key-id", "alibaba", r"LTAI[a-z0-9]{20}"),
    ("anthropic-admin-api-key", "anthropic", r"sk-ant-admin01-[a-zA-Z0-9_\-]{93}AA"),
    ("anthropic-api-key", "anthropic", r"sk-ant-api03-[a-zA-Z0-9_\-]{93}AA"),
    ("artifactory-api-key", "artifactory", r"AKCp[A-Za-z0-9]{69}"),
    ("artifactory-reference-token", "artifactory", r"cmVmd[A-Za-z0-9]{59}"),
    ("atlassian-api-token/atatt3", "atlassian", r"ATATT3[A-Za-z0-9_\-=]{186}"),
    (
        "authress-service-client-access-key",
        "authress",
        r"(?:sc|ext|scauth|authress)_[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.acc[_-][a-z0-9-]{10,32}\.[a-z0-9+/_=-]{30,120}",
    ),
    ("aws-access-token/akia", "AWS", r"AKIA[A-Z2-7]{16}"),
    ("aws-access-token/asia", "AWS", r"ASIA[A-Z2-7]{16}"),
    ("aws-access-token/abia", "AWS", r"ABIA[A-Z2-7]{16}"),
    ("aws-access-token/acca", "AWS", r"ACCA[A-Z2-7]{16}"),
    ("beamer-api-token", "beamer", r"b_[a-z0-9=_\-]{44}"),
    ("clickhouse-cloud-api-secret-key", "clickhouse", r"4b1d[A-Za-z0-9]{38}"),
    ("clojars-api-token", "clojars", r"CLOJARS_[a-z0-9]{60}"),
    ("cloudflare-origin-ca-key", "cloudflare", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    ("databricks-api-token", "databricks", r"dapi[a-f0-9]{32}"),
    ("defined-networking-api-token", "dnkey", r"dnkey-[a-z0-9=_\-]{26}-[a-z0-9=_\-]{52}"),
    ("digitalocean-access-token", "digitalocean", r"doo_v1_[a-f0-9]{64}"),
    ("digitalocean-pat", "digitalocean", r"dop_v1_[a-f0-9]{64}"),
    ("digitalocean-refresh-token", "digitalocean", r"dor_v1_[a-f0-9]{64}"),
    ("doppler-api-token", "doppler", r"dp\.pt\.[a-z0-9]{43}"),
    ("dropbox-long-lived-api-token", "dropbox", r"[a-z0-9]{11}AAAAAAAAAA[a-z0-9\-_=]{43}"),
    ("dropbox-short-lived-api-token", "dropbox", r"sl\.[a-z0-9\-=_]{135}"),
    ("duffel-api-token", "duffel", r"duffel_(?:test|live)_[a-z0-9_\-=]{43}"),
    ("dynatrace-api-token", "dynatrace", r"dt0c01\.[a-z0-9]{24}\.[a-z0-9]{64}"),
    ("easypost-api-token", "easypost", r"EZAK[a-z0-9]{54}"),
    ("easypost-test-api-token", "easypost", r"EZTK[a-z0-9]{54}"),
    ("facebook-access-token", "facebook", r"[0-9]{15,16}(?:\||%)[0-9a-z\-_]{27,40}"),
    ("facebook-page-access-token", "facebook", r"EAA[MC][a-z0-9]{100,120}"),
    ("flutterwave-encryption-key", "flutterwave", r"FLWSECK_TEST-[a-h0-9]{12}"),
    ("flutterwave-public-key", "flutterwave", r"FLWPUBK_TEST-[a-h0-9]{32}-X"),
    ("flutterwave-secret-key", "flutterwave", r"FLWSECK_TEST-[a-h0-9]{32}-X"),
    ("flyio-access-token/fo1", "flyio", r"fo1_[\w-]{43}"),
    ("flyio-access-token/fm2", "flyio", r"fm2_[a-zA-Z0-9+/]{100,120}={0,3}"),
    ("frameio-api-token", "frameio", r"fio-u-[a-z0-9\-_=]{64}"),
    ("gcp-api-key", "gcp", r"AIza[\w-]{35}"),
    ("github-app-token/ghs", "github", r"ghs_[a-z0-9]{36}"),
    ("github-app-token/ghu", "github", r"ghu_[a-z0-9]{36}"),
    ("github-fine-grained-pat", "github", r"github_pat_[a-z0-9]{82}"),
    ("github-oauth", "github", r"gho_[a-z0-9]{36}"),
    ("github-pat", "github", r"ghp_[a-z0-9]{36}"),
    ("github-refresh-token", "github", r"ghr_[a-z0-9]{36}"),
    ("gitlab-cicd-job-token", "gitlab", r"glcbt-[a-z0-9]{5}_[a-z0-9]{20}"),
    ("gitlab-deploy-token", "gitlab", r"gldt-[a-z0-9]{20}"),
    ("gitlab-feature-flag-client-token", "gitlab", r"glffct-[a-z0-9]{20}"),
    ("gitlab-feed-token", "gitlab", r"glft-[a-z0-9]{20}"),
    ("gitlab-incoming-mail-token", "gitlab", r"glimt-[a-z0-9]{25}"),
    ("gitlab-kubernetes-agent-token", "gitlab", r"glagent-[a-z0-9]{50}"),
    ("gitlab-oauth-app-secret", "gitlab", r"gloas-[a-z0-9]{64}"),
    ("gitlab-pat", "gitlab", r"glpat-[a-z0-9]{20}"),
    ("gitlab-pat-routable", "gitlab", r"glpat-[a-z0-9]{27}\.[a-z0-9]{2}[a-z0-9]{7}"),
    ("gitlab-ptt", "gitlab", r"glptt-[a-f0-9]{40}"),
    ("gitlab-rrt", "gitlab", r"GR1348941[a-z0-9]{20}"),
    ("gitlab-runner-authentication-token", "gitlab", r"glrt-[a-z0-9]{20}"),
    (
        "gitlab-runner-authentication-token-routable",
        "gitlab",
        r"glrt-t[0-9]_[a-z0-9]{27}\.[a-z0-9]{2}[a-z0-9]{7}",
    ),
    ("gitlab-scim-token", "gitlab", r"glsoat-[a-z0-9]{20}"),
    ("gitlab-session-cookie", "gitlab", r"_gitlab_session=[a-z0-9]{32}"),
    ("gocardless-api-token", "gocardless", r"live_[a-z0-9\-_=]{40}"),
    ("grafana-api-key", "grafana", r"eyJrIjoi[A-Za-z0-9]{70,100}={0,3}"),
    ("grafana-cloud-api-token", "grafana", r"glc_[A-Za-z0-9+/]{32,100}={0,3}"),
    ("grafana-service-account-token", "grafana", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
    (
        "harness-api-key",
        "harness",
        r"(?:pat|sat)\.[a-zA-Z0-9_-]{22}\.[a-zA-Z0-9]{24}\.[a-zA-Z0-9]{20}",
    ),
    ("hashicorp-tf-api-token", "hashicorp", r"[a-z0-9]{14}\.atlasv1\.[a-z0-9\-_=]{60,70}"),
    ("heroku-api-key-v2", "heroku", r"HRKU-AA[0-9a-zA-Z_-]{58}"),
    ("huggingface-access-token", "huggingface", r"hf_[a-z]{34}"),
    ("huggingface-organization-api-token", "huggingface", r"api_org_[a-z]{34}"),
    ("infracost-api-token", "infracost", r"ico-[a-zA-Z0-9]{32}"),
    ("intra42-client-secret", "intra42", r"s-s4t2(?:ud|af)-[abcdef0123456789]{64}"),
    (
        "jwt",
        "jwt",
        r"ey[a-zA-Z0-9]{17,30}\.ey[a-zA-Z0-9\/\\_-]{17,40}\.(?:[a-zA-Z0-9\/\\_-]{10,40}={0,2})?",
    ),
    ("linear-api-key", "linear", r"lin_api_[a-z0-9]{40}"),
    ("lob-api-key", "lob", r"(?:live|test)_[a-f0-9]{35}"),
    ("lob-pub-api-key", "lob", r"(?:test|live)_pub_[a-f0-9]{31}"),
    ("mailchimp-api-key", "mailchimp", r"[a-f0-9]{32}-us[0-9][0-9]"),
    ("mailgun-private-api-token", "mailgun", r"key-[a-f0-9]{32}"),
    ("mailgun-pub-key", "mailgun", r"pubkey-[a-f0-9]{32}"),
    ("mailgun-signing-key", "mailgun", r"[a-h0-9]{32}-[a-h0-9]{8}-[a-h0-9]{8}"),
    ("mapbox-api-token", "mapbox", r"pk\.[a-z0-9]{60}\.[a-z0-9]{22}"),
    ("maxmind-license-key", "maxmind", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk"),
    ("new-relic-browser-api-token", "new-relic", r"NRJS-[a-f0-9]{19}"),
    ("new-relic-insert-key", "new-relic", r"NRII-[a-z0-9-]{32}"),
    ("new-relic-user-api-key", "new-relic", r"NRAK-[a-z0-9]{27}"),
    ("notion-api-token", "notion", r"ntn_[0-9]{11}[A-Za-z0-9]{32}[A-Za-z0-9]{3}"),
    ("npm-access-token", "npm", r"npm_[a-z0-9]{36}"),
    ("octopus-deploy-api-key", "octopus", r"API-[A-Z0-9]{26}"),
    ("okta-access-token", "okta", r"00[\w=\-]{40}"),
    (
        "openai-api-key",
        "openai",
        r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{74}T3BlbkFJ[A-Za-z0-9_-]{74}",
    ),
    ("openai-api-key/legacy", "openai", r"sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20}"),
    ("openshift-user-token", "openshift", r"sha256~[\w-]{43}"),
    ("perplexity-api-key", "perplexity", r"pplx-[a-zA-Z0-9]{48}"),
    ("plaid-api-token", "plaid", r"access-(?:sandbox|development|production)-" + UUID),
    ("planetscale-api-token", "planetscale", r"pscale_tkn_[\w=\.-]{32,64}"),
    ("planetscale-oauth-token", "planetscale", r"pscale_oauth_[\w=\.-]{32,64}"),
    ("planetscale-password", "planetscale", r"pscale_pw_[\w=\.-]{32,64}"),
    ("postman-api-token", "postman", r"PMAK-[a-f0-9]{24}\-[a-f0-9]{34}"),
    ("prefect-api-token", "prefect", r"pnu_[a-zA-Z0-9]{36}"),
    ("pulumi-api-token", "pulumi", r"pul-[a-f0-9]{40}"),
    ("pypi-upload-token", "pypi", r"pypi-AgEIcHlwaS5vcmc[\w-]{50,100}"),
    ("readme-api-token", "readme", r"rdme_[a-z0-9]{70}"),
    ("rubygems-api-token", "rubygems", r"rubygems_[a-f0-9]{48}"),
    ("scalingo-api-token", "scalingo", r"tk-us-[\w-]{48}"),
    ("sendgrid-api-token", "sendgrid", r"SG\.[a-z0-9=_\-\.]{66}"),
    ("sendinblue-api-token", "sendinblue", r"xkeysib-[a-f0-9]{64}\-[a-z0-9]{16}"),
    ("sentry-user-token", "sentry", r"sntryu_[a-f0-9]{64}"),
    ("settlemint-application-access-token", "settlemint", r"sm_aat_[a-zA-Z0-9]{16}"),
    ("settlemint-personal-access-token", "settlemint", r"sm_pat_[a-zA-Z0-9]{16}"),
    ("settlemint-service-access-token", "settlemint", r"sm_sat_[a-zA-Z0-9]{16}"),
    ("shippo-api-token", "shippo", r"shippo_(?:live|test)_[a-fA-F0-9]{40}"),
    ("shopify-access-token", "shopify", r"shpat_[a-fA-F0-9]{32}"),
    ("shopify-custom-access-token", "shopify", r"shpca_[a-fA-F0-9]{32}"),
    ("shopify-private-app-access-token", "shopify", r"shppa_[a-fA-F0-9]{32}"),
    ("shopify-shared-secret", "shopify", r"shpss_[a-fA-F0-9]{32}"),
    ("sourcegraph-access-token", "sourcegraph", r"sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}"),
    ("square-access-token", "square", r"(?:EAAA|sq0atp-)[\w-]{22,60}"),
    ("stripe-access-token", "stripe", r"(?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99}"),
    ("telegram-bot-api-token", "telegram", r"[0-9]{8}:A[a-z0-9_\-]{34}"),
    ("telegram-bot-api-token/min", "telegram", r"[0-9]{5}:A[a-z0-9_\-]{34}"),
    ("telegram-bot-api-token/max", "telegram", r"[0-9]{16}:A[a-z0-9_\-]{34}"),
    ("twilio-api-key", "twilio", r"SK[0-9a-fA-F]{32}"),
    ("typeform-api-token", "typeform", r"tfp_[a-z0-9\-_\.=]{59}"),
    ("vault-batch-token", "vault", r"hvb\.[\w-]{138,160}"),
    ("vault-service-token", "vault", r"hvs\.[\w-]{90,120}"),
    (
        "yandex-access-token",
        "yandex",
        r"t1\.[A-Z0-9a-z_-]{20,40}[=]{0,2}\.[A-Z0-9a-z_-]{86}[=]{0,2}",
    ),
    ("yandex-api-key", "yandex", r"AQVN[A-Za-z0-9_\-]{35,38}"),
    ("yandex-aws-access-token", "yandex", r"YC[a-zA-Z0-9_\-]{38}"),
    # semi-generic: a keyword near the value, the value itself of no distinctive shape
    ("adafruit-api-key", "adafruit", r"[a-z0-9_-]{32}"),
    ("adobe-client-id", "adobe", r"[a-f0-9]{32}"),
    ("airtable-api-key", "airtable", r"[a-z0-9]{17}"),
    ("algolia-api-key", "algolia", r"[a-z0-9]{32}"),
    ("alibaba-secret-key", "alibaba", r"[a-z0-9]{30}"),
    ("asana-client-id", "asana", r"[0-9]{16}"),
    ("asana-client-secret", "asana", r"[a-z0-9]{32}"),
    ("atlassian-api-token", "atlassian", r"[a-z0-9]{20}[a-f0-9]{4}"),
    ("bitbucket-client-id", "bitbucket", r"[a-z0-9]{32}"),
    ("bitbucket-client-secret", "bitbucket", r"[a-z0-9=_\-]{64}"),
    ("bittrex-access-key", "bittrex", r"[a-z0-9]{32}"),
    ("bittrex-secret-key", "bittrex", r"[a-z0-9]{32}"),
    ("cisco-meraki-api-key", "meraki", r"[0-9a-f]{40}"),
    ("cloudflare-api-key", "cloudflare", r"[a-z0-9_-]{40}"),
    ("cloudflare-global-api-key", "cloudflare", r"[a-f0-9]{37}"),
    ("codecov-access-token", "codecov", r"[a-z0-9]{32}"),
    ("cohere-api-token", "cohere", r"[a-zA-Z0-9]{40}"),
    ("coinbase-access-token", "coinbase", r"[a-z0-9_-]{64}"),
    ("confluent-access-token", "confluent", r"[a-z0-9]{16}"),
    ("confluent-secret-key", "confluent", r"[a-z0-9]{64}"),
    ("contentful-delivery-api-token", "contentful", r"[a-z0-9=_\-]{43}"),
    ("datadog-access-token", "datadog", r"[a-z0-9]{40}"),
    ("discord-api-token", "discord", r"[a-f0-9]{64}"),
    ("discord-client-id", "discord", r"[0-9]{18}"),
    ("discord-client-secret", "discord", r"[0-9]{32}"),
    ("droneci-access-token", "droneci", r"[a-z0-9]{32}"),
    ("dropbox-api-token", "dropbox", r"[a-z0-9]{15}"),
    ("etsy-access-token", "etsy", r"[a-z0-9]{24}"),
    ("facebook-secret", "facebook", r"[a-f0-9]{32}"),
    ("fastly-api-token", "fastly", r"[a-z0-9=_\-]{32}"),
    ("finicity-api-token", "finicity", r"[a-f0-9]{32}"),
    ("finicity-client-secret", "finicity", r"[a-z0-9]{20}"),
    ("finnhub-access-token", "finnhub", r"[a-z0-9]{20}"),
    ("flickr-access-token", "flickr", r"[a-z0-9]{32}"),
    ("freshbooks-access-token", "freshbooks", r"[a-z0-9]{64}"),
    ("gitter-access-token", "gitter", r"[a-z0-9_-]{40}"),
    ("heroku-api-key", "heroku", UUID),
    ("hubspot-api-key", "hubspot", UUID.replace("a-f", "A-F")),
    ("intercom-api-key", "intercom", r"[a-z0-9=_\-]{60}"),
    ("jfrog-api-key", "jfrog", r"[a-z0-9]{73}"),
    ("jfrog-identity-token", "jfrog", r"[a-z0-9]{64}"),
    ("kraken-access-token", "kraken", r"[a-z0-9\/=_\+\-]{80,90}"),
    ("kucoin-access-token", "kucoin", r"[a-f0-9]{24}"),
    ("kucoin-secret-key", "kucoin", UUID),
    ("launchdarkly-access-token", "launchdarkly", r"[a-z0-9=_\-]{40}"),
    ("linear-client-secret", "linear", r"[a-f0-9]{32}"),
    ("linkedin-client-id", "linkedin", r"[a-z0-9]{14}"),
    ("linkedin-client-secret", "linkedin", r"[a-z0-9]{16}"),
    ("mattermost-access-token", "mattermost", r"[a-z0-9]{26}"),
    ("messagebird-api-token", "messagebird", r"[a-z0-9]{25}"),
    ("messagebird-client-id", "messagebird", UUID),
    ("netlify-access-token", "netlify", r"[a-z0-9=_\-]{40,46}"),
    ("new-relic-user-api-id", "new-relic", r"[a-z0-9]{64}"),
    ("nytimes-access-token", "nytimes", r"[a-z0-9=_\-]{32}"),
    ("plaid-client-id", "plaid", r"[a-z0-9]{24}"),
    ("plaid-secret-key", "plaid", r"[a-z0-9]{30}"),
    ("privateai-api-token", "privateai", r"[a-z0-9]{32}"),
    ("rapidapi-access-token", "rapidapi", r"[a-z0-9_-]{50}"),
    ("sendbird-access-id", "sendbird", UUID),
    ("sendbird-access-token", "sendbird", r"[a-f0-9]{40}"),
    ("sentry-access-token", "sentry", r"[a-f0-9]{64}"),
    ("snyk-api-token", "snyk", UUID),
    ("sonar-api-token", "sonar", r"[a-z0-9=_\-]{40}"),
    ("squarespace-access-token", "squarespace", UUID),
    ("sumologic-access-id", "sumo", r"su[a-zA-Z0-9]{12}"),
    ("sumologic-access-token", "sumo", r"[a-z0-9]{64}"),
    ("travisci-access-token", "travis", r"[a-z0-9]{22}"),
    ("twitch-api-token", "twitch", r"[a-z0-9]{30}"),
    ("twitter-access-secret", "twitter", r"[a-z0-9]{45}"),
    ("twitter-access-token", "twitter", r"[0-9]{15,25}-[a-zA-Z0-9]{20,40}"),
    ("twitter-api-key", "twitter", r"[a-z0-9]{25}"),
    ("twitter-api-secret", "twitter", r"[a-z0-9]{50}"),
    ("twitter-bearer-token", "twitter", r"A{22}[a-zA-Z0-9%]{80,100}"),
    ("zendesk-secret-key", "zendesk", r"[a-z0-9]{40}"),
)

# Other generated true positives, written as the rule's Go file writes them: (rule, template, the
# secret's regex).
EXTRAS: tuple[tuple[str, str, str], ...] = (
    ("generic-api-key", 'some_api_token_123 = "{s}"', r"[a-zA-Z0-9]{60}"),
    ("generic-api-key", "creds = {s}", r"[a-zA-Z0-9]{30}"),
    ("generic-api-key", "private-key: {s}", r"[a-zA-Z0-9\-_.=]{100}"),
    ("generic-api-key", "passwd = {s}", r"[a-zA-Z0-9\-_.=]{30}"),
    ("generic-api-key", "mySecretString={s}", r"[a-zA-Z0-9]{30}"),
    ("generic-api-key", "todo_secret_do_not_commit = {s}", r"[a-zA-Z0-9]{30}"),
    ("telegram-bot-api-token", 'const bot = new Telegraf("{s}")', r"[0-9]{8}:A[a-z0-9_\-]{34}"),
    ("telegram-bot-api-token", "TELEGRAM_API_TOKEN = {s}", r"[0-9]{8}:A[a-z0-9_\-]{34}"),
    ("telegram-bot-api-token", "telegram bot: {s}", r"[0-9]{8}:A[a-z0-9_\-]{34}"),
    ("azure-ad-client-secret", '\\"pass\\": \\"{s}', r"[\w~.]{3}[0-9]Q~[\w~.-]{31,34}"),
    (
        "1password-service-account-token",
        'onepassword_api_token = "{s}"',
        r"ops_eyJ[a-zA-Z0-9+/]{250,258}={0,3}",
    ),
    ("slack-bot-token", '"bot_token4": "{s}"', r"xoxb-[0-9]{13}-[0-9]{12}-[a-z0-9]{24}"),
    (
        "slack-user-token",
        '"user_token6": "{s}"',
        r"xoxp-[0-9]{12}-[0-9]{13}-[0-9]{13}-[a-z0-9]{32}",
    ),
    ("slack-app-token", '"token4": "{s}"', r"xapp-1-A[0-9]{10}-[0-9]{13}-[a-z0-9]{64}"),
    ("slack-config-access-token", '"access_token3": "{s}"', r"xoxe\.xoxp-1-[a-z0-9]{163}"),
    ("slack-config-refresh-token", '"refresh_token3": "{s}"', r"xoxe-1-[a-z0-9]{146}"),
    ("slack-legacy-bot-token", '"bot_token10": "{s}', r"xoxb-[0-9]{10}-[a-z0-9]{24}"),
    ("slack-legacy-workspace-token", '"access_token1": "{s}', r"xoxa-[0-9]-[a-z0-9]{12}"),
    ("slack-legacy-workspace-token", '"refresh_token2": "{s}', r"xoxr-[a-z0-9]{12}"),
    (
        "slack-legacy-token",
        '"access_token6": "{s}"',
        r"xoxs-[0-9]{10}-[0-9]{10}-[0-9]{10}-[a-f0-9]{10}",
    ),
)

# ---------------------------------------------------------------------------
# a string from a regex (the subset the rules above use)

_CATEGORIES = {
    sre_parse.CATEGORY_DIGIT: string.digits,
    sre_parse.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
    sre_parse.CATEGORY_SPACE: " ",
}
_OPEN_REPEAT = 8  # characters an unbounded repeat adds beyond its minimum, at most


def _charset(items: Any) -> str:
    chars: list[str] = []
    negate = False
    for op, arg in items:
        if op is sre_parse.NEGATE:
            negate = True
        elif op is sre_parse.LITERAL:
            chars.append(chr(arg))
        elif op is sre_parse.RANGE:
            chars.extend(chr(c) for c in range(arg[0], arg[1] + 1))
        elif op is sre_parse.CATEGORY:
            chars.extend(_CATEGORIES[arg])
        else:
            raise ValueError(f"unsupported in a class: {op}")
    if negate:
        return "".join(c for c in string.ascii_letters + string.digits if c not in chars)
    return "".join(dict.fromkeys(chars))


def _emit(items: Any, rng: random.Random, out: list[str]) -> None:
    for op, arg in items:
        if op is sre_parse.LITERAL:
            out.append(chr(arg))
        elif op is sre_parse.IN:
            out.append(rng.choice(_charset(arg)))
        elif op is sre_parse.CATEGORY:
            out.append(rng.choice(_CATEGORIES[arg]))
        elif op is sre_parse.SUBPATTERN:
            _emit(arg[-1], rng, out)
        elif op is sre_parse.BRANCH:
            _emit(rng.choice(arg[1]), rng, out)
        elif op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT):
            low, high, sub = arg
            if high is sre_parse.MAXREPEAT:
                high = low + _OPEN_REPEAT
            for _ in range(rng.randint(low, high)):
                _emit(sub, rng, out)
        elif op is sre_parse.AT:
            continue
        else:
            raise ValueError(f"unsupported: {op}")


def from_regex(pattern: str, rng: random.Random) -> str:
    out: list[str] = []
    _emit(sre_parse.parse(pattern), rng, out)
    value = "".join(out)
    if not re.fullmatch(pattern, value):
        raise AssertionError((pattern, value))
    return value


def generated() -> list[dict[str, Any]]:
    records = []
    for rule, identifier, pattern in RULES:
        rng = random.Random(rule)
        secret = from_regex(pattern, rng)
        if rule == "gitlab-session-cookie":  # the cookie's name stays; its value is the secret
            secret = secret.split("=", 1)[1]
            template_secret = "_gitlab_session=" + secret
        else:
            template_secret = secret
        for form, template in FORMS:
            text = template.replace("{i}", identifier).replace("{s}", template_secret)
            records.append(
                {
                    "text": text,
                    "secret": secret,
                    "source": f"gitleaks rule {rule} ({form})",
                    "kind": "generated",
                }
            )
    for n, (rule, template, pattern) in enumerate(EXTRAS):
        secret = from_regex(pattern, random.Random(f"{rule}/{n}"))
        records.append(
            {
                "text": template.replace("{s}", secret),
                "secret": secret,
                "source": f"gitleaks rule {rule}",
                "kind": "generated",
            }
        )
    return records


# ---------------------------------------------------------------------------
# the file


def _escape_secret(line: str, secret: str | None) -> str:
    if not secret or len(secret) < 2:
        return line
    encoded = json.dumps(secret)[1:-1]
    if encoded[0] == "\\" or encoded[1] == "\\":
        return line
    escaped = encoded[0] + f"\\u{ord(encoded[1]):04x}" + encoded[2:]
    return line.replace(encoded, escaped)


def dump(record: dict[str, Any]) -> str:
    return _escape_secret(json.dumps(record, ensure_ascii=True), record.get("secret"))


def load(path: Path = PATH) -> list[dict[str, Any]]:
    """The suite's records (the header line left out)."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            if "_about" not in record:
                records.append(record)
    return records


def main() -> None:
    literal = [r for r in load() if r["kind"] == "literal"] if PATH.exists() else []
    records = literal + generated()
    for record in records:
        if record["secret"] is not None and record["secret"] not in record["text"]:
            raise AssertionError(record)
    lines = [json.dumps({"_about": ABOUT}, ensure_ascii=True)]
    lines += [dump(r) for r in records]
    PATH.write_text("\n".join(lines) + "\n", encoding="utf-8")
    positives = sum(r["secret"] is not None for r in records)
    print(f"{PATH.name}: {positives} credentials, {len(records) - positives} negatives")


if __name__ == "__main__":
    main()
