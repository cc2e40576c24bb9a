"""Building blocks for synthetic credentials: random strings from a seeded PRNG, and the
checks formats carry (GitHub's CRC32 tail, bech32, base64 JSON), computed here so that every
generated token is well-formed without ever being a real one."""

from __future__ import annotations

import base64
import json
import random
import string
import zlib

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "_-"
BASE62 = DIGITS + UPPER + LOWER


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    """``n`` characters of ``alphabet``, with a digit and a letter when it has both (random
    tokens of that length virtually always do)."""
    chars = [rng.choice(alphabet) for _ in range(n)]
    digits = [c for c in alphabet if c.isdigit()]
    letters = [c for c in alphabet if c.isalpha()]
    if n >= 4 and digits and letters:
        chars[1] = rng.choice(digits)
        chars[2] = rng.choice(letters)
        uppers = [c for c in letters if c.isupper()]
        lowers = [c for c in letters if c.islower()]
        if uppers and lowers:
            chars[3] = rng.choice(uppers)
            chars[0] = rng.choice(lowers)
    return "".join(chars)


def p(*parts: str) -> str:
    return "".join(parts)


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def base62(value: int, width: int) -> str:
    out = ""
    while value:
        value, rest = divmod(value, 62)
        out = BASE62[rest] + out
    return out.rjust(width, "0")


def crc32_token(rng: random.Random, prefix: str) -> str:
    """GitHub's format (npm's too): 30 random base62 characters and their CRC32 in base62."""
    body = rand(rng, ALNUM, 30)
    return prefix + body + base62(zlib.crc32(body.encode()), 6)


_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _bech32_polymod(values: list[int]) -> int:
    gen = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
    chk = 1
    for v in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if (top >> i) & 1 else 0
    return chk


def bech32(hrp: str, data: list[int]) -> str:
    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    polymod = _bech32_polymod([*expanded, *data, 0, 0, 0, 0, 0, 0]) ^ 1
    checksum = [(polymod >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_BECH32[d] for d in [*data, *checksum])


def jwt(rng: random.Random, *, signed: bool = True) -> str:
    header = b64url(json.dumps({"alg": "HS256" if signed else "none", "typ": "JWT"}).encode())
    claims = {"sub": str(rng.randrange(10**9)), "iat": 1700000000 + rng.randrange(10**7)}
    payload = b64url(json.dumps(claims).encode())
    return f"{header}.{payload}." + (rand(rng, B64URL, 43) if signed else "")


def discord_bot_token(rng: random.Random) -> str:
    snowflake = str(rng.randrange(10**17, 10**19))
    return ".".join((b64url(snowflake.encode()), rand(rng, B64URL, 6), rand(rng, B64URL, 38)))


def pypi_token(rng: random.Random, location: bytes = b"pypi.org") -> str:
    header = b"\x02\x01" + bytes([len(location)]) + location + b"\x02\x1f"
    return "pypi-" + b64url(header + rng.randbytes(150))


def pem(rng: random.Random, label: str, lines: int = 5) -> str:
    body = "\n".join(rand(rng, B64, 64) for _ in range(lines))
    return f"-----BEGIN {label}-----\n{body}\n{rand(rng, B64, 20)}==\n-----END {label}-----"
