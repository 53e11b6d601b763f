#!/usr/bin/env python3
"""Writes secrets.json and lookalikes.json, the corpus of tests/redact_corpus.rs.

Every value is synthetic (random characters of the right length and alphabet, from a fixed
seed): none is a real secret. Run from this folder: `python3 gen_corpus.py`.

secrets.json: a list of {"text": ..., "secret": [...]}: `text` holds secrets; each string of
`secret` must be gone from the redacted text (its lines of 8 characters or more).
lookalikes.json: a list of strings that must come out unchanged.
"""

import base64
import json
import random
import string

R = random.Random(26)
LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
ALNUM = LOWER + UPPER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"


def rnd(alphabet, n):
    """n characters of `alphabet`, with a digit and both cases when it has them."""
    while True:
        s = "".join(R.choice(alphabet) for _ in range(n))
        need = [c for c in (LOWER, UPPER, DIGITS) if set(c) & set(alphabet)]
        if n < 8 or all(set(s) & set(c) for c in need):
            return s


secrets = []


def add(text, *parts):
    secrets.append({"text": text, "secret": list(parts) or [text]})


def pem(kind, lines=6, width=64):
    body = "\n".join(rnd(B64, width) for _ in range(lines))
    label = f"{kind} PRIVATE KEY" if kind else "PRIVATE KEY"
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----", body


# Existing rules.
for p in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]:
    for _ in range(2):
        add(p + rnd(ALNUM, 36))
for _ in range(3):
    add("github_pat_" + rnd(ALNUM, 22) + "_" + rnd(ALNUM, 59))
for p in ["AKIA", "ASIA"]:
    for _ in range(4):
        add(p + rnd(UPPER + DIGITS, 16))
for _ in range(6):
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    claims = base64.urlsafe_b64encode(
        json.dumps({"sub": rnd(DIGITS, 10), "iat": R.randint(10**9, 2 * 10**9)}).encode()
    ).decode().rstrip("=")
    add(f"{head}.{claims}.{rnd(URLSAFE, 43)}")
for _ in range(6):
    tok = rnd(ALNUM + "-._~", 32)
    add(f"Authorization: Bearer {tok}", tok)
for _ in range(4):
    cred = base64.b64encode(f"{rnd(LOWER, 6)}:{rnd(ALNUM, 14)}".encode()).decode()
    add(f"Authorization: Basic {cred}", cred)
for kind in ["RSA", "EC", "OPENSSH", "", "ENCRYPTED", "DSA"]:
    text, body = pem(kind)
    add(text, body)
for _ in range(3):
    body = "\n".join(rnd(B64, 64) for _ in range(8))
    text = (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n"
        + body
        + "\n="
        + rnd(B64, 4)
        + "\n-----END PGP PRIVATE KEY BLOCK-----"
    )
    add(text, body)
for p in ["xoxb-", "xoxp-", "xoxa-", "xoxs-"]:
    add(p + rnd(DIGITS, 12) + "-" + rnd(DIGITS, 12) + "-" + rnd(ALNUM, 24))
add("xapp-1-A" + rnd(UPPER + DIGITS, 10) + "-" + rnd(DIGITS, 13) + "-" + rnd(HEX, 64))
for p in ["sk_live_", "sk_test_", "rk_live_", "rk_test_"]:
    for _ in range(2):
        add(p + rnd(ALNUM, 24))
for _ in range(2):
    add("whsec_" + rnd(ALNUM, 32))
for _ in range(3):
    add("sk-" + rnd(ALNUM, 48))
for _ in range(2):
    add("sk-proj-" + rnd(URLSAFE, 120))
for _ in range(2):
    add("sk-ant-api03-" + rnd(URLSAFE, 93) + "AA")
for _ in range(4):
    add("AIza" + rnd(URLSAFE, 35))
for _ in range(3):
    sid = rnd(ALNUM, 24)
    add(f"Cookie: theme=dark; session_id={sid}", sid)

# Pairs: secret names, plural, short, glued, hashed.
for name in [
    "password",
    "passwords",
    "db_pass",
    "DB_PASS",
    "smtp_pass",
    "db_pw",
    "password_hash",
    "identitytoken",
    "accesstoken",
    "clientsecret",
    "MYSQL_PASSWORD",
    "api_keys",
    "refresh_tokens",
    "AccountKey",
    "SharedAccessKey",
    "passphrases",
]:
    value = rnd(ALNUM, 18)
    add(f"{name}={value}", value)
for name in ["password", "api_key", "token", "client_secret"]:
    value = rnd(ALNUM, 16)
    add(f'{{\\"{name}\\":\\"{value}\\"}}', value)
    add(f'{{\\\\\\"{name}\\\\\\":\\\\\\"{value}\\\\\\"}}', value)
    add(f'{{\\\\\\\\\\\\\\"{name}\\\\\\\\\\\\\\":\\\\\\\\\\\\\\"{value}\\\\\\\\\\\\\\"}}', value)
value = "$2b$12$" + rnd(B64.replace("+", "."), 53)
add(f'"password_hash": "{value}"', value[7:])
add("pwd=" + (v := rnd(ALNUM, 14)), v)
add('{"pwd": "' + (v := rnd(ALNUM, 14)) + '"}', v)

# URLs with a password, any scheme.
for scheme in ["postgres", "postgresql", "mysql", "https", "http", "redis", "rediss",
               "mongodb+srv", "mongodb", "amqp", "amqps", "ftp", "sftp", "smtp", "ldap"]:
    pw = rnd(ALNUM, 16)
    user = "" if scheme.startswith("redis") else rnd(LOWER, 5)
    add(f"{scheme}://{user}:{pw}@db.example.internal:5432/app", pw)
for flag in ["-u", "--user", "-u", "--user"]:
    pw = rnd(ALNUM, 14)
    add(f"curl -sS {flag} {rnd(LOWER, 6)}:{pw} https://api.example.com/v1", pw)
pw = rnd(ALNUM, 14)
add(f"curl --user='admin:{pw}' https://api.example.com", pw)

# Vendor tokens.
for _ in range(4):
    add("hf_" + rnd(LOWER + UPPER, 34))
for p in ["glpat-", "glpat-", "gldt-", "glptt-", "glrt-"]:
    add(p + rnd(URLSAFE, 20))
for _ in range(4):
    add("SG." + rnd(URLSAFE, 22) + "." + rnd(URLSAFE, 43))
for _ in range(3):
    path = f"T{rnd(UPPER + DIGITS, 8)}/B{rnd(UPPER + DIGITS, 10)}/{rnd(ALNUM, 24)}"
    add(f"https://hooks.slack.com/services/{path}", path)
for host in ["discord.com", "discordapp.com", "discord.com"]:
    tok = rnd(URLSAFE, 68)
    add(f"https://{host}/api/webhooks/{rnd(DIGITS, 18)}/{tok}", tok)
for _ in range(4):
    tok = f"{rnd(DIGITS, 9)}:AA{rnd(URLSAFE, 33)}"
    add(tok)
tok = f"{rnd(DIGITS, 10)}:AA{rnd(URLSAFE, 33)}"
add(f"https://api.telegram.org/bot{tok}/sendMessage", tok)
for _ in range(3):
    add("ya29." + rnd(URLSAFE, 120))
for _ in range(3):
    add("GOCSPX-" + rnd(URLSAFE, 28))
for p in ["hvs.", "hvs.", "hvb.", "hvr."]:
    add(p + rnd(URLSAFE, 90))
bech32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
for _ in range(3):
    add("AGE-SECRET-KEY-1" + "".join(R.choice(bech32) for _ in range(58)))
for p in ["shpat_", "shpss_", "shpca_", "shppa_"]:
    add(p + rnd(HEX, 32))
for p in ["dop_v1_", "doo_v1_", "dor_v1_"]:
    add(p + rnd(HEX, 64))
for _ in range(3):
    add("gsk_" + rnd(ALNUM, 52))
for _ in range(3):
    add("lin_api_" + rnd(ALNUM, 40))
for _ in range(3):
    add("SK" + rnd(HEX, 32))
for _ in range(2):
    token = rnd(HEX, 32)
    add(f"TWILIO AC{rnd(HEX, 32)} {token}", token)
for _ in range(3):
    add("key-" + rnd(HEX, 32))
for _ in range(3):
    add("npm_" + rnd(ALNUM, 36))
for _ in range(3):
    add("pypi-AgEIcHlwaS5vcmc" + rnd(URLSAFE, 70))
add("pypi-AgENdGVzdC5weXBpLm9yZw" + rnd(URLSAFE, 70))
for _ in range(3):
    sig = rnd(ALNUM, 30) + "%2B" + rnd(ALNUM, 10) + "%3D"
    add(
        f"https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&ss=b&sp=r&se=2030-01-01&sig={sig}",
        sig,
    )
for _ in range(2):
    key = rnd(B64, 86) + "=="
    add(
        f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={key};EndpointSuffix=core.windows.net",
        key,
    )
    key = rnd(B64, 43) + "="
    add(
        f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey={key}",
        key,
    )

# An AWS secret access key without a name, beside its key id.
for i in range(6):
    kid = "AKIA" + rnd(UPPER + DIGITS, 16)
    sec = rnd(B64, 40)
    text = [f"{kid} {sec}", f"{kid},{sec}", f"{sec}:{kid}",
            f"keys: {kid} / {sec}", f"id={kid} and then {sec} end", f"{sec} {kid}"][i]
    add(text, kid, sec)

# Base64 inside a line whose text holds a secret.
for kind in ["RSA", "EC", ""]:
    text, body = pem(kind, lines=4)
    b = base64.b64encode((text + "\n").encode()).decode()
    add(f"client-key-data: {b}", b[:60], b[-60:])
for _ in range(3):
    b = base64.b64encode(f"export DB_PASSWORD={rnd(ALNUM, 20)}\n".encode()).decode()
    add(f"env {b} end", b)
b = base64.b64encode(f"aws_secret = {rnd(ALNUM, 24)} and token: {rnd(ALNUM, 24)}".encode()).decode()
add(f"blob={b};", b)

lookalikes = []


def keep(text):
    lookalikes.append(text)


for _ in range(15):
    keep(rnd(HEX, 40))
for _ in range(10):
    keep(f"commit {rnd(HEX, 40)}")
for _ in range(10):
    keep(f"sha256:{rnd(HEX, 64)}")
for _ in range(10):
    keep(rnd(HEX, 8) + "-" + rnd(HEX, 4) + "-4" + rnd(HEX, 3) + "-a" + rnd(HEX, 3) + "-" + rnd(HEX, 12))
for _ in range(6):
    keep(f"md5 {rnd(HEX, 32)}")
for p in ["/home/ann/project", "/usr/local/lib/python3.12/site-packages/numpy/core/_multiarray_umath.cpython-312-x86_64-linux-gnu.so",
          "/var/lib/docker/overlay2/" + rnd(HEX, 64) + "/merged", "C:\\Users\\ann\\AppData\\Local\\Temp",
          "~/.config/envelope/config.toml", "./target/debug/build/envelope-" + rnd(HEX, 16) + "/out",
          "src/shape/redact/anchors.rs:120:5"]:
    keep(p)
keep("PWD=/home/ann/project")
keep("OLDPWD=/home/ann")
keep('{"pwd": "/home/ann/x"}')
keep('{"cwd": "/srv/app", "pwd": "/srv/app/sub"}')
keep("pwd: /home/ann/project")
keep("PWD=~/work")
for slug in ["sk-circle-bounce-delay", "sk-learn-random-forest-classifier", "sk-blue-river-mountain-sky",
             "task-sk-flaky-integration-retry", "risk-assessment-quarterly-report-final",
             "desk-booking-service-deployment-config"]:
    keep(slug)
for h in ["access-control-allow-credentials: true", "Access-Control-Allow-Credentials: true",
          '{"Access-Control-Allow-Credentials": "true"}', "withCredentials: true",
          '{"withCredentials": true}', "access-control-allow-credentials: false",
          "Access-Control-Allow-Origin: https://app.example.com", "password: true",
          '{"password": false}', "token: null"]:
    keep(h)
for t in ["max_tokens: 4096", "max_tokens=4096", "token_count: 5", '{"token_count": 5}', "input_tokens: 1234",
          '"prompt_tokens": 12, "completion_tokens": 34', "tokens: 7", "auth_method=oauth",
          "author: Ann <ann@example.com>", "sort_key=created_at", "public_key=ssh-ed25519",
          "keyboard layout: us", "monkey: 3", "passage: chapter 2", "oauth_url: https://auth.example.com/authorize",
          "session_id: 42", "pass: 3", "First pass: done", "pw: see the vault",
          'fetch(url, {credentials: "include"})', '{"credentials": "same-origin"}', "credentials: omit", "fail: 0", "tests pass: 120", '{"pass": "/tmp/x"}',
          "bypass=true", "compass: north", "password_policy: strict", "token_type: bearer",
          "Enter your password:", "the bearer of this letter", "Bearer tokens are described in RFC 6750",
          "the basic idea is simple", "Basic usage: run it", "key-value store", "npm_config_cache=/tmp/npm",
          "hf_hub_download(repo_id)", "SG.api is a module", "gsk_short", "hvs.short", "ya29 is a prefix",
          "the AGE-SECRET-KEY-1 prefix", "sig=abc", "dop_v1_short", "glpat- tokens", "AC adapter",
          "SKU 12345 in stock", "ACCESS DENIED", "key-value", "lin_api_ docs", "pypi-token docs",
          "sk_live_ prefix", "xoxb- prefix", "ghp_ prefix", "AKIA prefix", "curl -u ann https://api.example.com",
          "curl https://api.example.com/v1/items?limit=10", "git@github.com:org/repo.git",
          "ssh://git@github.com/org/repo.git", "https://example.com:8443/path?q=1#frag",
          "http://localhost:3000/api/v1", "mailto:ann@example.com", "postgres://db.example.internal:5432/app",
          "redis://cache:6379/0", "https://hooks.slack.com/services/", "https://discord.com/api/webhooks",
          "Meeting at 10:30, room AA", "12:30:45 AA batteries", "ratio 16:9", "id 123456789:AB",
          "SharedAccessKeyName=RootManageSharedAccessKey", "AccountName=acct", "EndpointSuffix=core.windows.net"]:
    keep(t)
for _ in range(6):
    keep(base64.b64encode(R.choice(["hello world, this is a harmless sentence of text",
                                      "The quick brown fox jumps over the lazy dog again and again",
                                      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n"]).encode()).decode())
for _ in range(3):
    cert = "-----BEGIN CERTIFICATE-----\n" + "\n".join(rnd(B64, 64) for _ in range(4)) + "\n-----END CERTIFICATE-----\n"
    keep("client-certificate-data: " + base64.b64encode(cert.encode()).decode())
for _ in range(3):
    keep("certificate-authority-data: " + base64.b64encode(("-----BEGIN CERTIFICATE-----\n" + rnd(B64, 64)).encode()).decode())
keep("-----BEGIN PUBLIC KEY-----\n" + rnd(B64, 64) + "\n-----END PUBLIC KEY-----")
keep("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n" + rnd(B64, 64) + "\n-----END PGP PUBLIC KEY BLOCK-----")
for _ in range(5):
    keep("my_very_long_function_name_" + "_".join(R.choice(["that", "goes", "on", "and", "forever", "more"]) for _ in range(8)))
for _ in range(5):
    keep(" ".join(R.choice(["the", "build", "passed", "token", "secret", "key", "password", "reset", "email",
                            "sent", "user", "asked", "for", "a", "new", "one", "after", "login"]) for _ in range(12)))
for _ in range(5):
    keep(f"2026-01-0{R.randint(1, 9)}T12:{R.randint(10, 59)}:{R.randint(10, 59)}Z INFO request_id={rnd(HEX, 16)} status=200 duration_ms={R.randint(1, 999)}")
for _ in range(5):
    keep(f"docker.io/library/nginx@sha256:{rnd(HEX, 64)}")
for _ in range(5):
    keep(f"integrity sha512-{rnd(B64, 86)}==")
for _ in range(5):
    keep(f"version = \"{R.randint(0, 9)}.{R.randint(0, 30)}.{R.randint(0, 99)}\"")
for _ in range(5):
    keep(f"{rnd(UPPER, 4)}{rnd(DIGITS, 4)}: see https://example.com/issues/{R.randint(1, 9999)}")

with open("secrets.json", "w") as f:
    json.dump(secrets, f, indent=1)
    f.write("\n")
with open("lookalikes.json", "w") as f:
    json.dump(lookalikes, f, indent=1)
    f.write("\n")
print(len(secrets), "secrets,", len(lookalikes), "look-alikes")
