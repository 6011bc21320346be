"""What code can do is code: calculators, encoders, hashes, validators, text utilities and seeded random
numbers, recognised from a tool's name and the shape of its parameters.

A match gives the op `{"kind": "compute", "fn": ..., "params": [...]}`: `params` are the tool's own
parameter names, in the order the function takes them. Pure functions are read-only; random ones draw
from the service's seeded rng (so they advance a counter in state, and replay the same values).
A domain error (a square root of -1, a division by zero, bad Base64) is a 422 with the reason.
"""

from __future__ import annotations

import base64
import cmath
import hashlib
import html
import ipaddress
import json
import math
import re
import statistics
import urllib.parse
import uuid
from collections.abc import Callable
from typing import Any

from compoworld.core.envelope import InvalidArguments, NotFound, ToolError

NUM = ("number", "integer")


class DomainError(ToolError):
    """The arguments are valid, but the function is not defined there (422)."""

    code = 422
    type = "domain_error"


def _rule(message: str) -> ToolError:
    return DomainError(message)


def _finite(x: float) -> float:
    if isinstance(x, float) and not math.isfinite(x):
        raise _rule("the result is not a finite number")
    return x


def _div(a: float, b: float) -> float:
    if b == 0:
        raise _rule("division by zero")
    return a / b


def _mod(a: float, b: float) -> float:
    if b == 0:
        raise _rule("modulo by zero")
    return math.fmod(a, b)


def _b64decode(s: str) -> str:
    try:
        return base64.b64decode(s.encode(), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError) as e:
        raise _rule(f"not valid Base64 text: {e}") from None


def _hexdecode(s: str) -> str:
    try:
        return bytes.fromhex(s).decode("utf-8")
    except (ValueError, UnicodeDecodeError) as e:
        raise _rule(f"not valid hexadecimal text: {e}") from None


def _json_validate(s: str) -> dict[str, Any]:
    try:
        json.loads(s)
    except json.JSONDecodeError as e:
        return {"valid": False, "error": e.msg, "line": e.lineno, "column": e.colno}
    return {"valid": True}


def _json_format(s: str) -> str:
    try:
        return json.dumps(json.loads(s), indent=2, ensure_ascii=False)
    except json.JSONDecodeError as e:
        raise _rule(f"not valid JSON: {e.msg} at line {e.lineno}") from None


def _ip(s: str) -> dict[str, Any]:
    try:
        ip = ipaddress.ip_address(s.strip())
    except ValueError:
        return {"valid": False}
    return {"valid": True, "version": ip.version, "private": ip.is_private, "loopback": ip.is_loopback}


EMAIL = re.compile(r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$")


def _email(s: str) -> dict[str, Any]:
    ok = bool(EMAIL.match(s.strip()))
    return {"valid": ok, "domain": s.strip().rsplit("@", 1)[-1].lower() if ok else None}


def _url(s: str) -> dict[str, Any]:
    p = urllib.parse.urlparse(s.strip())
    return {"valid": p.scheme in ("http", "https") and bool(p.netloc), "scheme": p.scheme, "host": p.hostname}


def _stats(s: str) -> dict[str, int]:
    return {"characters": len(s), "words": len(s.split()), "lines": len(s.splitlines()) or (1 if s else 0)}


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")


UNARY: dict[str, Callable[[float], Any]] = {
    "abs": abs,
    "sqrt": math.sqrt,
    "cbrt": lambda x: math.copysign(abs(x) ** (1 / 3), x),
    "exp": math.exp,
    "exp2": lambda x: 2.0**x,
    "expm1": math.expm1,
    "log": math.log,
    "ln": math.log,
    "log10": math.log10,
    "log2": math.log2,
    "log1p": math.log1p,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "sinh": math.sinh,
    "cosh": math.cosh,
    "tanh": math.tanh,
    "asinh": math.asinh,
    "acosh": math.acosh,
    "atanh": math.atanh,
    "ceil": math.ceil,
    "floor": math.floor,
    "trunc": math.trunc,
    "round": lambda x: math.floor(abs(x) + 0.5) * (1 if x >= 0 else -1),
    "round_to_even": round,
    "pow10": lambda x: 10.0**x,
    "square": lambda x: x * x,
    "factorial": lambda x: math.factorial(int(x)) if x == int(x) and 0 <= x <= 170 else _domain("factorial"),
    "degrees": math.degrees,
    "radians": math.radians,
    "radians_to_degrees": math.degrees,
    "degrees_to_radians": math.radians,
    "gamma": math.gamma,
    "lgamma": math.lgamma,
    "erf": math.erf,
    "erfc": math.erfc,
    "is_nan": math.isnan,
    "is_inf": math.isinf,
    "signbit": lambda x: math.copysign(1, x) < 0,
    "is_prime": lambda x: _is_prime(x),
    "fibonacci": lambda x: _fib(x),
    "prime_factors": lambda x: _factors(x),
    "bit_not": lambda x: ~_int(x),
}
BINARY: dict[str, Callable[[float, float], Any]] = {
    "add": lambda a, b: a + b,
    "sum": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "divide": _div,
    "mod": _mod,
    "modulo": _mod,
    "remainder": lambda a, b: math.remainder(a, b) if b else _domain("remainder"),
    "pow": lambda a, b: a**b,
    "power": lambda a, b: a**b,
    "hypot": math.hypot,
    "atan2": math.atan2,
    "max": max,
    "min": min,
    "gcd": lambda a, b: math.gcd(int(a), int(b)),
    "bit_and": lambda a, b: _int(a) & _int(b),
    "bit_or": lambda a, b: _int(a) | _int(b),
    "bit_xor": lambda a, b: _int(a) ^ _int(b),
    "bit_left_shift": lambda a, b: _int(a) << _shift(b),
    "bit_right_shift": lambda a, b: _int(a) >> _shift(b),
    "nextafter": math.nextafter,
    "dim": lambda a, b: max(a - b, 0.0),
    "lcm": lambda a, b: math.lcm(int(a), int(b)),
}
TEXT: dict[str, Callable[[str], Any]] = {
    "hash_md5": lambda s: hashlib.md5(s.encode()).hexdigest(),
    "hash_sha1": lambda s: hashlib.sha1(s.encode()).hexdigest(),
    "hash_sha256": lambda s: hashlib.sha256(s.encode()).hexdigest(),
    "hash_sha512": lambda s: hashlib.sha512(s.encode()).hexdigest(),
    "base64_encode": lambda s: base64.b64encode(s.encode()).decode(),
    "base64_decode": _b64decode,
    "url_encode": lambda s: urllib.parse.quote(s, safe=""),
    "url_decode": urllib.parse.unquote,
    "html_encode": html.escape,
    "html_decode": html.unescape,
    "hex_encode": lambda s: s.encode().hex(),
    "hex_decode": _hexdecode,
    "json_validate": _json_validate,
    "json_format": _json_format,
    "ip_validate": _ip,
    "validate_ip": _ip,
    "email_validate": _email,
    "validate_email": _email,
    "url_validate": _url,
    "validate_url": _url,
    "text_stats": _stats,
    "word_count": _stats,
    "count_words": _stats,
    "slugify": _slug,
    "uppercase": str.upper,
    "to_uppercase": str.upper,
    "lowercase": str.lower,
    "to_lowercase": str.lower,
    "reverse_text": lambda s: s[::-1],
    "reverse_string": lambda s: s[::-1],
}


def _int(x: float) -> int:
    if x != int(x):
        raise _rule(f"{x} is not an integer")
    return int(x)


def _shift(x: float) -> int:
    n = _int(x)
    if not 0 <= n <= 64:
        raise _rule(f"a shift of {n} bits is outside 0..64")
    return n


def _is_prime(x: float) -> bool:
    n = _int(x)
    if n > 10**12:
        raise _rule("is_prime is limited to 10^12")
    return n > 1 and all(n % k for k in range(2, math.isqrt(n) + 1))


def _fib(x: float) -> int:
    n = _int(x)
    if not 0 <= n <= 1000:
        raise _rule("fibonacci is defined here for 0..1000")
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def _factors(x: float) -> list[int]:
    n = _int(x)
    if not 2 <= n <= 10**12:
        raise _rule("prime_factors needs an integer in 2..10^12")
    out, k = [], 2
    while k * k <= n:
        while n % k == 0:
            out.append(k)
            n //= k
        k += 1
    return out + ([n] if n > 1 else [])


def _mode(xs: list[float]) -> float:
    counts: dict[float, int] = {}
    for x in xs:
        counts[x] = counts.get(x, 0) + 1
    return max(sorted(counts), key=lambda v: counts[v])


LIST: dict[str, Callable[[list[float]], Any]] = {
    "sum": math.fsum,
    "product": math.prod,
    "mean": lambda xs: math.fsum(xs) / len(xs),
    "average": lambda xs: math.fsum(xs) / len(xs),
    "median": statistics.median,
    "mode": _mode,
    "variance": lambda xs: statistics.pvariance(xs),
    "std_dev": lambda xs: statistics.pstdev(xs),
    "stdev": lambda xs: statistics.pstdev(xs),
    "range_stat": lambda xs: max(xs) - min(xs),
    "max": max,
    "min": min,
}
RANDOM = {"generate_uuid", "uuid", "random_uuid", "random_number", "generate_random_number", "random_int"}


def _domain(fn: str) -> Any:
    raise _rule(f"{fn} is not defined for these arguments")


def _params(schema: dict[str, Any], types: tuple[str, ...]) -> list[str]:
    props = schema.get("properties", {})
    return [p for p, s in props.items() if isinstance(s, dict) and s.get("type") in types]


def _erfinv(y: float) -> float:
    """The inverse of erf, by Newton's method from a good first guess (|error| < 1e-12)."""
    if not -1 < y < 1:
        raise _rule("erfinv is defined on (-1, 1)")
    a = 0.147
    ln = math.log(1 - y * y)
    t = 2 / (math.pi * a) + ln / 2
    x = math.copysign(math.sqrt(math.sqrt(t * t - ln / a) - t), y)
    for _ in range(60):
        err = math.erf(x) - y
        x -= err / (2 / math.sqrt(math.pi) * math.exp(-x * x))
        if abs(err) < 1e-15:
            break
    return x


def _logb(x: float) -> int:
    if x == 0 or not math.isfinite(x):
        raise _rule("logb is undefined for 0 and non-finite x")
    return math.frexp(x)[1] - 1


UNARY.update(
    {
        "logb": _logb,
        "ilogb": _logb,
        "erfinv": _erfinv,
        "erfcinv": lambda y: _erfinv(1 - y),
    }
)
# functions of one number with more than one result
MULTI: dict[str, Callable[[float], dict[str, Any]]] = {
    "sincos": lambda x: {"sin": math.sin(x), "cos": math.cos(x)},
    "frexp": lambda x: dict(zip(("mantissa", "exponent"), math.frexp(x), strict=True)),
    "modf": lambda x: dict(zip(("fractional", "integer"), math.modf(x), strict=True)),
}
TERNARY: dict[str, Callable[[float, float, float], Any]] = {"fma": lambda x, y, z: x * y + z}
BINARY["ldexp"] = lambda m, e: math.ldexp(m, _int(e)) if abs(e) <= 2000 else _domain("ldexp")


def _c(z: complex) -> dict[str, float]:
    if not (math.isfinite(z.real) and math.isfinite(z.imag)):
        raise _rule("the result is not a finite complex number")
    return {"real": z.real, "imag": z.imag}


def _cpow(a: complex, b: complex) -> dict[str, float]:
    if a == 0 and (b.real < 0 or b.imag != 0):
        raise _rule("0 to a negative or complex power is undefined")
    return _c(a**b)


def _clog(z: complex) -> dict[str, float]:
    if z == 0:
        raise _rule("the logarithm of 0 is undefined")
    return _c(cmath.log(z))


# complex numbers as (real, imag) pairs: one or two of them
COMPLEX: dict[str, Callable[..., Any]] = {
    "complex_abs": lambda z: {"result": abs(z)},
    "complex_phase": lambda z: {"result": cmath.phase(z)},
    "complex_conj": lambda z: _c(z.conjugate()),
    "complex_exp": lambda z: _c(cmath.exp(z)) if z.real < 700 else _domain("complex_exp"),
    "complex_log": _clog,
    "complex_sqrt": lambda z: _c(cmath.sqrt(z)),
    "complex_sin": lambda z: _c(cmath.sin(z)) if abs(z.imag) < 700 else _domain("complex_sin"),
    "complex_cos": lambda z: _c(cmath.cos(z)) if abs(z.imag) < 700 else _domain("complex_cos"),
    "complex_tan": lambda z: _c(cmath.tan(z)),
    "complex_polar": lambda z: dict(zip(("r", "theta"), cmath.polar(z), strict=True)),
    "complex_rect": lambda r, theta: _c(cmath.rect(r, theta)),
    "complex_pow": _cpow,
    "complex_add": lambda a, b: _c(a + b),
    "complex_subtract": lambda a, b: _c(a - b),
    "complex_multiply": lambda a, b: _c(a * b),
    "complex_divide": lambda a, b: _c(a / b) if b != 0 else _domain("complex_divide"),
}


def _jwt(token: str) -> dict[str, Any]:
    parts = token.strip().split(".")
    if len(parts) != 3:
        raise _rule(f"a JWT has 3 dot-separated parts, this one has {len(parts)}")
    out: dict[str, Any] = {}
    for name, part in zip(("header", "payload"), parts[:2], strict=True):
        try:
            raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
            out[name] = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise _rule(f"the JWT {name} is not Base64URL-encoded JSON: {e}") from None
    out["signature"] = parts[2]
    return out


def _jwt_valid(token: str) -> dict[str, Any]:
    try:
        d = _jwt(token)
    except DomainError as e:
        return {"valid": False, "error": e.message}
    ok = isinstance(d["header"], dict) and "alg" in d["header"]
    return {"valid": ok, **({} if ok else {"error": "the header names no 'alg'"}), "header": d["header"]}


def _words(s: str) -> list[str]:
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", s)
    return [w for w in re.split(r"[^A-Za-z0-9]+", s) if w]


CASES: dict[str, Callable[[list[str]], str]] = {
    "camel": lambda w: (w[0].lower() + "".join(x.capitalize() for x in w[1:])) if w else "",
    "pascal": lambda w: "".join(x.capitalize() for x in w),
    "snake": lambda w: "_".join(x.lower() for x in w),
    "kebab": lambda w: "-".join(x.lower() for x in w),
    "constant": lambda w: "_".join(x.upper() for x in w),
    "upper": lambda w: " ".join(x.upper() for x in w),
    "lower": lambda w: " ".join(x.lower() for x in w),
    "title": lambda w: " ".join(x.capitalize() for x in w),
    "dot": lambda w: ".".join(x.lower() for x in w),
}


def _case(s: str, to: str) -> dict[str, str]:
    key = re.sub(r"[^a-z]", "", str(to).lower()).removesuffix("case")
    key = {"screaming": "constant", "screamingsnake": "constant", "uppercase": "upper"}.get(key, key)
    if key not in CASES:
        raise _rule(f"unknown case {to!r}; one of {', '.join(CASES)}")
    return {"result": CASES[key](_words(s)), "case": key}


def _base(value: str, frm: int, to: int) -> dict[str, Any]:
    if not (2 <= frm <= 36 and 2 <= to <= 36):
        raise _rule("bases must be between 2 and 36")
    v = str(value).strip().lower()
    neg = v.startswith("-")
    v = v.lstrip("-").removeprefix({16: "0x", 8: "0o", 2: "0b"}.get(frm, "\0"))
    if len(v) > 256:
        raise _rule("the value is limited to 256 digits")
    try:
        n = int(v, frm)
    except ValueError:
        raise _rule(f"{value!r} is not a base-{frm} number") from None
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, to)
        out = digits[r] + out
        if n == 0:
            break
    return {"result": ("-" if neg else "") + out, "from_base": frm, "to_base": to}


def _timestamp(ts: float, tz: str | None = None) -> dict[str, Any]:
    import datetime as dt
    import zoneinfo

    secs = ts / 1000 if abs(ts) > 1e11 else ts  # milliseconds where seconds would be past year 5000
    if not -62135596800 + 86400 <= secs <= 253402300799 - 86400:
        raise _rule("the timestamp is outside years 1..9999")
    zone: Any = dt.UTC
    if tz not in (None, "", "UTC"):
        try:
            zone = zoneinfo.ZoneInfo(str(tz))
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise _rule(f"unknown IANA timezone {tz!r}") from None
    d = dt.datetime.fromtimestamp(secs, zone)
    return {"iso": d.isoformat().replace("+00:00", "Z"), "seconds": secs, "timezone": str(tz or "UTC")}


def _to_timestamp(s: str) -> dict[str, Any]:
    import datetime as dt

    try:
        d = dt.datetime.fromisoformat(s.strip().replace("Z", "+00:00"))
    except ValueError:
        raise _rule(f"{s!r} is not an ISO 8601 date") from None
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.UTC)
    t = d.timestamp()
    return {"seconds": int(t) if t == int(t) else t, "milliseconds": int(t * 1000)}


def _cidr(s: str) -> dict[str, Any]:
    try:
        net = ipaddress.ip_network(s.strip(), strict=False)
    except ValueError as e:
        raise _rule(f"not a CIDR block: {e}") from None
    hosts = net.num_addresses - (2 if net.version == 4 and net.prefixlen < 31 else 0)
    return {
        "network": str(net.network_address),
        "broadcast": str(net.broadcast_address),
        "netmask": str(net.netmask),
        "prefix_length": net.prefixlen,
        "addresses": net.num_addresses,
        "usable_hosts": hosts,
        "version": net.version,
    }


def _diff(a: str, b: str) -> dict[str, Any]:
    import difflib

    if len(a) + len(b) > 200_000:
        raise _rule("texts are limited to 200,000 characters")
    lines = list(difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0))[2:]
    added = sum(1 for x in lines if x.startswith("+"))
    removed = sum(1 for x in lines if x.startswith("-"))
    return {"identical": a == b, "added": added, "removed": removed, "diff": "\n".join(lines)}


def _expression(s: str) -> dict[str, Any]:
    """Arithmetic on numbers only (+ - * / // % **, unary signs, parentheses, a few functions)."""
    import ast

    fns = {"sqrt": math.sqrt, "abs": abs, "round": round, "sin": math.sin, "cos": math.cos}
    fns.update({"tan": math.tan, "log": math.log, "log10": math.log10, "exp": math.exp, "floor": math.floor})
    fns.update({"ceil": math.ceil, "min": min, "max": max})
    names = {"pi": math.pi, "e": math.e}
    if len(s) > 1000:
        raise _rule("expressions are limited to 1000 characters")
    try:
        tree = ast.parse(s.replace("^", "**"), mode="eval")
    except SyntaxError:
        raise _rule(f"{s!r} is not an arithmetic expression") from None

    def ev(n: Any) -> Any:
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, int | float) and not isinstance(n.value, bool):
            return n.value
        if isinstance(n, ast.Name) and n.id in names:
            return names[n.id]
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.UAdd | ast.USub):
            v = ev(n.operand)
            return -v if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.Add):
                return a + b
            if isinstance(n.op, ast.Sub):
                return a - b
            if isinstance(n.op, ast.Mult):
                return a * b
            if isinstance(n.op, ast.Div):
                return _div(a, b)
            if isinstance(n.op, ast.FloorDiv):
                return math.floor(_div(a, b))
            if isinstance(n.op, ast.Mod):
                return _mod(a, b)
            if isinstance(n.op, ast.Pow):
                if abs(b) > 1000 or (abs(a) > 1e6 and abs(b) > 10):
                    raise _rule("the power is too large")
                return a**b
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in fns and not n.keywords:
            return fns[n.func.id](*[ev(x) for x in n.args])
        raise _rule(f"{s!r} uses something that is not arithmetic")

    try:
        v = ev(tree)
    except (ValueError, ArithmeticError, TypeError) as e:
        raise _rule(f"{s!r} is undefined: {e}") from None
    if isinstance(v, complex):
        raise _rule(f"{s!r} has no real value")
    return {"expression": s, "result": _finite(v) if isinstance(v, float) else v}


TEXT.update(
    {
        "jwt_decode": _jwt,
        "decode_jwt": _jwt,
        "jwt_validate": _jwt_valid,
        "validate_jwt": _jwt_valid,
        "date_to_timestamp": _to_timestamp,
        "cidr_calculate": _cidr,
        "calculate_cidr": _cidr,
        "calculate_math_expression": _expression,
        "evaluate_expression": _expression,
        "calculate_expression": _expression,
        "calculate": _expression,
        "evaluate": _expression,
    }
)
# functions of several named arguments: (fn, the parameter names it takes, which are required)
NAMED: dict[str, tuple[Callable[..., Any], tuple[tuple[str, ...], ...]]] = {
    "case_convert": (_case, (("input", "text", "string", "value"), ("to", "case", "format", "target"))),
    "convert_case": (_case, (("input", "text", "string", "value"), ("to", "case", "format", "target"))),
    "number_base_convert": (_base, (("value", "number", "input"), ("frombase", "from"), ("tobase", "to"))),
    "convert_base": (_base, (("value", "number", "input"), ("frombase", "from"), ("tobase", "to"))),
    "text_diff": (_diff, (("text1", "a", "original", "old"), ("text2", "b", "modified", "new"))),
    "diff_text": (_diff, (("text1", "a", "original", "old"), ("text2", "b", "modified", "new"))),
    "timestamp_to_date": (_timestamp, (("timestamp", "unix", "seconds", "time"), ("timezone", "tz", "?"))),
}
TEXT_EXTRAS = {"encoding", "charset"}  # text-encoding options: UTF-8 is what every one of them means


def _named(key: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    fn = NAMED.get(key)
    if fn is None:
        return None
    props = schema.get("properties", {})
    by = {re.sub(r"[^a-z0-9]", "", p.lower()): p for p in props}
    params: list[str] = []
    for aliases in fn[1]:
        p = next((by[a] for a in aliases if a in by), None)
        if p is None and "?" not in aliases:  # `?`: an optional argument the function can go without
            return None
        params.append(p or "")
    if set(props) - set(params) or set(schema.get("required", [])) - set(params):
        return None  # a parameter the code would ignore: not this function
    defaults = {
        p: d
        for p in params
        if p and p not in schema.get("required", []) and (d := described_default(props[p])) is not None
    }
    op = {"kind": "compute", "fn": key, "params": params, "resource": None, "named": True}
    return {**op, "defaults": defaults} if defaults else op


# only a phrase that states a default: "default: 10", "defaults to 'primary'", "the default is json",
# "(default 20)", "default 20"; never "the default language" or "defaults to the user's locale"
_VALUE = r"[`'\"]?(-?[\w.+/-]+)[`'\"]?"
DEFAULT_IN_TEXT = re.compile(
    r"\bdefaults?(?:\s+value)?\s*[:=]\s*"
    + _VALUE
    + r"|\bdefaults?(?:\s+value)?\s+(?:is|to|of|will be)\s+"
    + _VALUE
    + r"|\(default\s+"
    + _VALUE
    + r"\)"
    + r"|\bdefault\s+(-?\d+(?:\.\d+)?)\b"
    + r"|\bdefault\s+[`'\"](-?[\w.+/-]+)[`'\"]",
    re.I,
)
NOT_DEFAULTS = {"the", "a", "an", "not", "none", "null", "empty", "unset", "current", "your", "this", "that"}
NOT_DEFAULTS |= {"its", "their", "whatever", "same", "each", "any", "no", "be", "is", "if", "when", "set"}


def described_default(schema: dict[str, Any]) -> Any:
    """The schema's `default`, or the one its description states ("Source base (default: 10)",
    "defaults to 'primary'"), typed as the schema says; None when neither gives a value it accepts."""
    if not isinstance(schema, dict):
        return None
    if schema.get("default") is not None:
        return schema["default"]
    m = DEFAULT_IN_TEXT.search(str(schema.get("description", "")))
    if not m:
        return None
    raw, t = next(g for g in m.groups() if g is not None).rstrip("."), schema.get("type")
    if raw.lower() in NOT_DEFAULTS:
        return None
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    if not raw or not raw.strip(".-+/"):
        return None
    try:
        value: Any = {"integer": int, "number": float}.get(t, str)(raw) if t != "boolean" else None
    except ValueError:
        return None
    if t == "boolean":
        value = {"true": True, "false": False}.get(raw.lower())
    if value is None or (t == "string" and raw.lower() in ("none", "null", "the", "a", "an")):
        return None
    if "enum" in schema and value not in schema["enum"]:
        return None
    return value


def match_compute(name_tokens: list[str], schema: dict[str, Any]) -> dict[str, Any] | None:
    """The compute op of a tool, from its name (prefix removed) and parameters, or None."""
    key = "_".join(name_tokens)
    shaped = match_calculator(name_tokens, schema) or match_convert(name_tokens, schema)
    if shaped:
        return shaped
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    nums = _params(schema, NUM)
    strs = _params(schema, ("string",))
    if (
        required
        - set(nums)
        - set(strs)
        - {p for p, s in props.items() if isinstance(s, dict) and s.get("type") == "array"}
    ):
        return None
    arrays = [
        p
        for p, s in props.items()
        if isinstance(s, dict) and s.get("type") == "array" and (s.get("items") or {}).get("type") in NUM
    ]
    untyped_arrays = [
        p
        for p, s in props.items()
        if isinstance(s, dict) and s.get("type") == "array" and not (s.get("items") or {}).get("type")
    ]
    arrays = arrays or untyped_arrays  # `numbers: {type: array}`: the numbers are checked on the call
    # `decode_base64` is `base64_decode`; never across `to`/`from` (`date_to_timestamp` is an inverse)
    alias = None if {"to", "from"} & set(name_tokens) else _TEXT_BY_WORDS.get(" ".join(sorted(name_tokens)))
    if key not in TEXT and alias:
        key = alias
    named = _named(key, schema)
    if named:
        return named
    if key in COMPLEX:
        n_args = (
            4
            if key in ("complex_pow", "complex_add", "complex_subtract", "complex_multiply", "complex_divide")
            else 2
        )
        if len(nums) == n_args and len(props) == n_args:
            return {"kind": "compute", "fn": key, "params": nums, "resource": None, "complex": True}
    if key in MULTI and len(nums) == 1 and len(props) == 1:
        return {"kind": "compute", "fn": key, "params": nums, "resource": None}
    if key in TERNARY and len(nums) == 3 and len(props) == 3:
        return {"kind": "compute", "fn": key, "params": nums, "resource": None}
    if key == "is_inf" and len(nums) == 2 and len(props) == 2:  # is_inf(x, sign): C's isinf with a sign
        return {"kind": "compute", "fn": "is_inf_signed", "params": nums, "resource": None}
    if key in LIST and len(arrays) == 1 and len(props) == 1:
        return {"kind": "compute", "fn": key, "params": arrays, "resource": None, "list": True}
    if key in BINARY and len(nums) >= 2 and len(props) == len(nums):
        return {"kind": "compute", "fn": key, "params": nums[:2], "resource": None}
    if key in UNARY and len(nums) == 1 and len(props) == 1:
        return {"kind": "compute", "fn": key, "params": nums, "resource": None}
    extras = set(props) - set(strs[:1])
    if key in TEXT and len(strs) >= 1 and required <= {strs[0]} and extras <= TEXT_EXTRAS:
        return {"kind": "compute", "fn": key, "params": strs[:1], "resource": None}
    if key in RANDOM and not (required - set(nums)):
        return {"kind": "compute", "fn": key, "params": nums[:2], "resource": None, "random": True}
    return None


_TEXT_BY_WORDS = {" ".join(sorted(k.split("_"))): k for k in TEXT}  # `decode_base64` is `base64_decode`


def run_compute(op: dict[str, Any], args: dict[str, Any], rng: Callable[[], Any]) -> Any:
    fn, params = op["fn"], op["params"]
    vals = [args.get(p) for p in params]
    if op.get("random"):
        r = rng()
        if "uuid" in fn:
            n = int(vals[0]) if vals and isinstance(vals[0], int | float) and 1 <= vals[0] <= 100 else 1
            out = [str(uuid.UUID(int=r.getrandbits(128), version=4)) for _ in range(n)]
            return {"uuids": out} if n > 1 else {"uuid": out[0]}
        lo = vals[0] if len(vals) > 0 and vals[0] is not None else 0
        hi = vals[1] if len(vals) > 1 and vals[1] is not None else 100
        if lo > hi:
            raise _rule(f"the minimum {lo} is above the maximum {hi}")
        value = (
            r.randint(int(lo), int(hi))
            if float(lo).is_integer() and float(hi).is_integer()
            else r.uniform(lo, hi)
        )
        return {"value": value, "min": lo, "max": hi}
    if fn == "calculator":
        return _calculator(*vals)
    if fn == "convert_units":
        return _convert(vals[0], vals[1], args.get(params[2]) if params[2] else None)
    if op.get("named"):
        vals = [args.get(p, (op.get("defaults") or {}).get(p)) if p else None for p in params]
        optional = ["?" in aliases for aliases in NAMED[fn][1]]
        missing = [p for p, v, opt in zip(params, vals, optional, strict=True) if v is None and not opt]
        if missing:
            raise InvalidArguments(f"{fn} needs {', '.join(missing)} (no default is stated)")
        return NAMED[fn][0](*vals)
    if op.get("complex"):
        if any(v is None for v in vals):
            raise InvalidArguments(f"{fn} needs {', '.join(params)}")
        if fn == "complex_rect":
            return COMPLEX[fn](*vals)
        zs = [complex(vals[i], vals[i + 1]) for i in range(0, len(vals), 2)]
        try:
            return COMPLEX[fn](*zs)
        except (ValueError, ArithmeticError, OverflowError) as e:
            raise _rule(f"{fn} is undefined here: {e}") from None
    if fn in MULTI or fn in TERNARY or fn == "is_inf_signed":
        if any(v is None for v in vals):
            raise InvalidArguments(f"{fn} needs {', '.join(params)}")
        try:
            if fn == "is_inf_signed":
                x, sign = vals
                return {
                    "result": math.isinf(x) and (sign == 0 or math.copysign(1, x) == math.copysign(1, sign))
                }
            if fn in MULTI:
                return MULTI[fn](vals[0])
            return {"result": _finite(TERNARY[fn](*vals))}
        except (ValueError, ArithmeticError) as e:
            raise _rule(f"{fn} is undefined here: {e}") from None
    if op.get("list"):
        xs = vals[0]
        if (
            not isinstance(xs, list)
            or not xs
            or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in xs)
        ):
            raise InvalidArguments(f"{params[0]} must be a non-empty list of numbers")
        try:
            result = LIST[fn](xs)
        except (ValueError, ArithmeticError, statistics.StatisticsError) as e:
            raise _rule(f"{fn} is undefined here: {e}") from None
        return {"result": _finite(result) if isinstance(result, float) else result}
    if fn in TEXT:
        if len(vals[0] if isinstance(vals[0], str) else "") > 1_000_000:
            raise _rule("text is limited to 1,000,000 characters")
        out = TEXT[fn](vals[0] if vals[0] is not None else "")
        return out if isinstance(out, dict) else {"result": out}
    if any(v is None for v in vals):
        raise InvalidArguments(f"{fn} needs {', '.join(params)}")
    try:
        result = UNARY[fn](vals[0]) if fn in UNARY else BINARY[fn](vals[0], vals[1])
    except (ValueError, ArithmeticError) as e:
        raise _rule(f"{fn}({', '.join(map(str, vals))}) is undefined: {e}") from None
    return {"result": _finite(result) if isinstance(result, float) else result}


# ---- info tools: a deterministic, seeded data provider -----------------------------------------
# Weather, prices and exchange rates answer from a hash of (the world's seed, what is asked), so the
# same city has the same weather in every call and every tool of a world, a forecast starts from the
# current reading, and exchange rates are consistent (A->B times B->A is 1).
LOCATION_PARAMS = (
    "location",
    "city",
    "place",
    "zip",
    "zipcode",
    "postalcode",
    "query",
    "q",
    "address",
    "area",
)
SYMBOL_PARAMS = ("symbol", "ticker", "coin", "symbols", "tradingsymbol", "asset", "token", "stock")
FROM_PARAMS = ("from", "fromcurrency", "source", "sourcecurrency", "base", "basecurrency", "sell")
TO_PARAMS = ("to", "tocurrency", "target", "targetcurrency", "quote", "quotecurrency", "buy")
USD_VALUE = {"USD": 1.0, "EUR": 1.08, "GBP": 1.27, "JPY": 0.0067, "CHF": 1.13, "CAD": 0.73, "AUD": 0.66}
USD_VALUE.update({"CNY": 0.138, "INR": 0.012, "KRW": 0.00073, "SEK": 0.095, "BTC": 64000.0, "ETH": 3100.0})
CONDITIONS = ("clear", "partly cloudy", "cloudy", "light rain", "rain", "windy", "fog", "snow")
WRITE_VERBS = {"create", "add", "update", "delete", "remove", "set", "put", "patch", "cancel"}


def _find(schema: dict[str, Any], names: tuple[str, ...]) -> str | None:
    for p in schema.get("properties", {}):
        if re.sub(r"[^a-z0-9]", "", p.lower()) in names:
            return p
    return None


def match_info(name_tokens: list[str], schema: dict[str, Any]) -> dict[str, Any] | None:
    """The info op of a weather, price or exchange-rate tool, or None."""
    toks = set(name_tokens)
    if toks & WRITE_VERBS:
        return None
    props = schema.get("properties", {})
    base = {"kind": "compute", "resource": None, "info": True}
    if toks & {"weather", "forecast"} and not toks & {"list", "stations", "alerts"}:
        loc = _find(schema, LOCATION_PARAMS)
        if set(schema.get("required", [])) - {loc}:
            return None
        return {**base, "fn": "forecast" if "forecast" in toks else "weather", "params": [loc] if loc else []}
    frm, to = _find(schema, FROM_PARAMS), _find(schema, TO_PARAMS)
    if (toks & {"exchange", "currency", "currencies", "fx"}) and frm and to:
        amount = next((p for p in props if p.lower() in ("amount", "value", "quantity")), None)
        return {**base, "fn": "fx", "params": [frm, to] + ([amount] if amount else [])}
    sym = _find(schema, SYMBOL_PARAMS)
    if (toks & {"price", "prices", "quote"}) and sym:
        if set(schema.get("required", [])) - {sym}:
            return None
        return {
            **base,
            "fn": "price_history" if "history" in toks or "historical" in toks else "price",
            "params": [sym],
        }
    return None


def _h(seed: Any, *parts: Any) -> float:
    """A number in [0, 1) from the world's seed and the parts: the same question, the same answer."""
    d = hashlib.sha256("|".join(map(str, (seed, *parts))).encode()).digest()
    return int.from_bytes(d[:8], "big") / 2**64


WRAPPED_INPUTS = {"q", "query", "text", "address", "location", "city", "place", "symbol", "ticker", "ip"}


def _inner(v: Any) -> Any:
    """An input wrapped in a query object (`{"query": {"q": "Berlin"}}`) is the text inside it."""
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(x, str) and re.sub(r"[^a-z0-9]", "", k.lower()) in WRAPPED_INPUTS:
                return x
    return v


def _key(v: Any) -> str:
    v = _inner(v)
    if isinstance(v, list):
        v = v[0] if v else ""
    return " ".join(str(v if v is not None else "here").split()).casefold()


def run_info(op: dict[str, Any], args: dict[str, Any], seed: Any, now: str) -> dict[str, Any]:
    fn, params = op["fn"], op["params"]
    day = now[:10]
    if fn in ("weather", "forecast"):
        place = _key(args.get(params[0])) if params else "here"
        base_c = round(-5 + 35 * _h(seed, "climate", place), 1)
        now_c = round(base_c + 6 * (_h(seed, "wx", place, day) - 0.5), 1)
        current = {
            "location": place,
            "temperature_c": now_c,
            "temperature_f": round(now_c * 9 / 5 + 32, 1),
            "condition": CONDITIONS[int(_h(seed, "cond", place, day) * len(CONDITIONS))],
            "humidity": int(30 + 60 * _h(seed, "hum", place, day)),
            "wind_kph": round(25 * _h(seed, "wind", place, day), 1),
            "observed_at": now,
        }
        if fn == "weather":
            return current
        days = []
        for i in range(5):
            hi = round(now_c + 3 + 4 * (_h(seed, "hi", place, day, i) - 0.5) if i else now_c + 3, 1)
            days.append(
                {
                    "day": i,
                    "high_c": hi,
                    "low_c": round(hi - 4 - 6 * _h(seed, "lo", place, day, i), 1),
                    "condition": CONDITIONS[int(_h(seed, "cond", place, day, i) * len(CONDITIONS))]
                    if i
                    else current["condition"],
                }
            )
        return {"location": place, "current": current, "days": days}
    if fn == "fx":
        a, b = (_key(args.get(p)).upper() for p in params[:2])
        va = USD_VALUE.get(a) or 0.01 + 2 * _h(seed, "fx", a)
        vb = USD_VALUE.get(b) or 0.01 + 2 * _h(seed, "fx", b)
        rate = va / vb
        out = {"from": a, "to": b, "rate": round(rate, 6), "as_of": now}
        if len(params) > 2 and isinstance(args.get(params[2]), int | float):
            out.update(amount=args[params[2]], converted=round(args[params[2]] * rate, 4))
        return out
    sym = _key(args.get(params[0])).upper()
    level = 5 + 495 * _h(seed, "px", sym)
    price = round(level * (1 + 0.04 * (_h(seed, "px", sym, day) - 0.5)), 2)
    prev = round(level * (1 + 0.04 * (_h(seed, "px", sym, "prev", day) - 0.5)), 2)
    quote = {
        "symbol": sym,
        "price": price,
        "currency": "USD",
        "previous_close": prev,
        "change_percent": round(100 * (price - prev) / prev, 2),
        "as_of": now,
    }
    if fn == "price":
        return quote
    closes = [round(level * (1 + 0.04 * (_h(seed, "px", sym, day, -i) - 0.5)), 2) for i in range(29, 0, -1)]
    return {"symbol": sym, "currency": "USD", "closes": [*closes, price], "latest": quote}


# ---- service info: health, identity, balance, usage ---------------------------------------------
# A compiled server is a healthy simulated one: its health and status tools say so, and its account
# (who the key belongs to, its balance, its usage) is drawn from the world's seed, the same in every call.
HEALTH_WORDS = {"health", "healthcheck", "ping", "alive", "liveness", "heartbeat"}
IDENTITY_WORDS = (("who", "am", "i"), ("whoami",), ("current", "user"), ("check", "scopes"))
NOT_STATUS_WORDS = {"log", "logs", "mental", "history", "checkin", "report", "pod", "resource", "stamp"}
USAGE_OF = {"usage", "space", "api", "account", "credit", "credits", "quota", "plan", "fetch"}
STATUS_TEXT = re.compile(
    r"\b(health\w*|alive|liveness|connectivity|reachable|uptime|ping|authenticat\w*|api access|"
    r"login state|operational status|server status)\b",
    re.I,
)
FIRST = ("Avery", "Jordan", "Riley", "Morgan", "Casey", "Quinn", "Harper", "Rowan", "Sasha", "Emery")
LAST = ("Okafor", "Lindqvist", "Moreau", "Tanaka", "Haddad", "Novak", "Silva", "Brennan", "Iyer", "Kowal")


def _no_required(schema: dict[str, Any]) -> bool:
    return not schema.get("required")


def match_service_info(
    name_tokens: list[str], schema: dict[str, Any], description: str
) -> dict[str, Any] | None:
    """The op of a health, status, identity, balance or usage tool that names no record, or None."""
    toks = [t for t in name_tokens if t not in ("get", "check", "show", "mcp", "my", "account", "api")]
    raw = list(name_tokens)
    base = {"kind": "compute", "resource": None, "info": True, "params": []}
    if set(raw) & WRITE_VERBS:
        return None
    props = schema.get("properties", {})
    if set(raw) & NOT_STATUS_WORDS:
        return None
    me = raw[-1:] == ["me"] and len(toks) <= 1  # `get_me`, `notion_get_me`
    if me or any(tuple(raw[i : i + len(w)]) == w for w in IDENTITY_WORDS for i in range(len(raw))):
        return {**base, "fn": "identity"} if not props else None
    if "balance" in raw and not set(raw) & {"adjust", "time", "off", "leave", "transfer"}:
        required = schema.get("required", [])
        if len(required) > 1 or any(_type_of(props.get(p, {})) != "string" for p in required):
            return None
        unit = "sats" if re.search(r"satoshi|sats|lightning", description, re.I) else None
        unit = unit or next((c.upper() for c in ("eth", "btc", "sol", "usdc") if c in raw), None)
        unit = unit or next((c for c in ("USDC", "EUR", "USD", "GBP") if c in description), "USD")
        return {**base, "fn": "balance", "params": list(required), "unit": unit}
    if raw[-1:] == ["usage"] and set(toks) <= USAGE_OF and _no_required(schema):
        return {**base, "fn": "usage"}
    if not _no_required(schema):
        return None
    if set(raw) & HEALTH_WORDS or (
        raw[-1:] == ["status"] and len(toks) <= 2 and STATUS_TEXT.search(description)
    ):
        return {**base, "fn": "health"}
    return None


def _type_of(schema: dict[str, Any]) -> str:
    t = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    return t if isinstance(t, str) else "any"


def _identity(seed: Any, service: str) -> dict[str, Any]:
    first = FIRST[int(_h(seed, "me", service, "first") * len(FIRST))]
    last = LAST[int(_h(seed, "me", service, "last") * len(LAST))]
    uid = hashlib.sha256(f"{seed}|me|{service}".encode()).hexdigest()[:12]
    return {
        "id": f"usr_{uid}",
        "name": f"{first} {last}",
        "email": f"{first.lower()}.{last.lower()}@example.com",
        "scopes": ["read", "write"],
        "authenticated": True,
    }


def run_service_info(op: dict[str, Any], args: dict[str, Any], seed: Any, now: str, service: str) -> Any:
    fn = op["fn"]
    if fn == "health":
        return {"status": "ok", "healthy": True, "service": service, "checked_at": now, "latency_ms": 12}
    if fn == "identity":
        return {**_identity(seed, service), "service": service}
    if fn == "balance":
        key = _key(args.get(op["params"][0])) if op["params"] else "default"
        unit = op.get("unit", "USD")
        amount = round(20 + 980 * _h(seed, "balance", service, key), 2)
        amount = int(amount * 1000) if unit == "sats" else amount  # a Lightning wallet counts in satoshis
        return {"account": key, "balance": amount, "currency": unit, "as_of": now}
    limit = 1000 * (1 + int(4 * _h(seed, "usage", service, "plan")))
    used = int(limit * _h(seed, "usage", service, "used"))
    plan = ("free", "starter", "pro", "team", "enterprise")[limit // 1000 - 1]
    return {"plan": plan, "limit": limit, "used": used, "remaining": limit - used, "as_of": now}


# ---- geography: a seeded gazetteer with real coordinates ------------------------------------------
# geocode(a city) gives its coordinates, and reverse_geocode of those gives the city back; another address
# sits at a fixed offset from the city it names (or, naming none, from one drawn by its hash). Distances
# are great-circle (haversine) between the geocoded points, times a road factor; durations follow the mode.
GAZETTEER: tuple[tuple[str, str, float, float, str], ...] = (
    ("New York", "United States", 40.7128, -74.006, "America/New_York"),
    ("Los Angeles", "United States", 34.0522, -118.2437, "America/Los_Angeles"),
    ("Chicago", "United States", 41.8781, -87.6298, "America/Chicago"),
    ("San Francisco", "United States", 37.7749, -122.4194, "America/Los_Angeles"),
    ("Seattle", "United States", 47.6062, -122.3321, "America/Los_Angeles"),
    ("Boston", "United States", 42.3601, -71.0589, "America/New_York"),
    ("Toronto", "Canada", 43.6532, -79.3832, "America/Toronto"),
    ("Mexico City", "Mexico", 19.4326, -99.1332, "America/Mexico_City"),
    ("Sao Paulo", "Brazil", -23.5505, -46.6333, "America/Sao_Paulo"),
    ("London", "United Kingdom", 51.5074, -0.1278, "Europe/London"),
    ("Paris", "France", 48.8566, 2.3522, "Europe/Paris"),
    ("Berlin", "Germany", 52.52, 13.405, "Europe/Berlin"),
    ("Madrid", "Spain", 40.4168, -3.7038, "Europe/Madrid"),
    ("Rome", "Italy", 41.9028, 12.4964, "Europe/Rome"),
    ("Amsterdam", "Netherlands", 52.3676, 4.9041, "Europe/Amsterdam"),
    ("Stockholm", "Sweden", 59.3293, 18.0686, "Europe/Stockholm"),
    ("Zurich", "Switzerland", 47.3769, 8.5417, "Europe/Zurich"),
    ("Istanbul", "Turkey", 41.0082, 28.9784, "Europe/Istanbul"),
    ("Cairo", "Egypt", 30.0444, 31.2357, "Africa/Cairo"),
    ("Lagos", "Nigeria", 6.5244, 3.3792, "Africa/Lagos"),
    ("Nairobi", "Kenya", -1.2921, 36.8219, "Africa/Nairobi"),
    ("Dubai", "United Arab Emirates", 25.2048, 55.2708, "Asia/Dubai"),
    ("Mumbai", "India", 19.076, 72.8777, "Asia/Kolkata"),
    ("Singapore", "Singapore", 1.3521, 103.8198, "Asia/Singapore"),
    ("Hong Kong", "China", 22.3193, 114.1694, "Asia/Hong_Kong"),
    ("Shanghai", "China", 31.2304, 121.4737, "Asia/Shanghai"),
    ("Seoul", "South Korea", 37.5665, 126.978, "Asia/Seoul"),
    ("Tokyo", "Japan", 35.6762, 139.6503, "Asia/Tokyo"),
    ("Sydney", "Australia", -33.8688, 151.2093, "Australia/Sydney"),
    ("Auckland", "New Zealand", -36.8485, 174.7633, "Pacific/Auckland"),
)
SPEED_KPH = {"driving": 50.0, "walking": 5.0, "bicycling": 16.0, "transit": 30.0}
ROAD_FACTOR = 1.25  # roads are longer than the great circle
ADDRESS_PARAMS = ("address", "location", "query", "q", "place", "city", "origin", "destination")
LAT_PARAMS = ("latitude", "lat")
LNG_PARAMS = ("longitude", "lng", "lon", "long")


def _city_of(text: str, seed: Any) -> tuple[tuple[str, str, float, float, str], bool]:
    """The gazetteer city an address names (and whether it is just that city), else one by its hash."""
    key = _key(text)
    for c in GAZETTEER:
        if c[0].casefold() in key:
            bare = key.replace(c[1].casefold(), "").replace(c[0].casefold(), "").strip(" ,.")
            return c, not bare
    return GAZETTEER[int(_h(seed, "geo", key) * len(GAZETTEER))], False


def geocode(text: Any, seed: Any) -> dict[str, Any]:
    if isinstance(text, dict):  # `{lat, lng}` given as a point
        lat = next((text[k] for k in text if k.lower() in LAT_PARAMS), None)
        lng = next((text[k] for k in text if k.lower() in LNG_PARAMS), None)
        if isinstance(lat, int | float) and isinstance(lng, int | float):
            return {**_nearest(float(lat), float(lng)), "lat": float(lat), "lng": float(lng)}
        text = json.dumps(text, sort_keys=True)
    m = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*", str(text))
    if m and abs(float(m.group(1))) <= 90 and abs(float(m.group(2))) <= 180:  # "lat,lng" is a point
        lat, lng = float(m.group(1)), float(m.group(2))
        return {**_nearest(lat, lng), "lat": lat, "lng": lng}
    city, bare = _city_of(str(text), seed)
    lat, lng = city[2], city[3]
    if not bare:  # a street in (or near) the city: a fixed offset of up to ~5 km
        lat = round(lat + 0.09 * (_h(seed, "dlat", _key(text)) - 0.5), 6)
        lng = round(lng + 0.09 * (_h(seed, "dlng", _key(text)) - 0.5), 6)
    label = f"{city[0]}, {city[1]}" if bare else f"{' '.join(str(text).split())}, {city[0]}, {city[1]}"
    if not bare and city[0].casefold() in _key(text):
        label = " ".join(str(text).split())
    return {"formatted_address": label, "city": city[0], "country": city[1], "lat": lat, "lng": lng}


def _nearest(lat: float, lng: float) -> dict[str, Any]:
    c = min(GAZETTEER, key=lambda g: haversine_km(lat, lng, g[2], g[3]))
    exact = abs(c[2] - lat) < 1e-6 and abs(c[3] - lng) < 1e-6
    return {
        "formatted_address": f"{c[0]}, {c[1]}",
        "city": c[0],
        "country": c[1],
        "timezone": c[4],
        "distance_from_city_km": 0.0 if exact else round(haversine_km(lat, lng, c[2], c[3]), 3),
    }


def haversine_km(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lng2 - lng1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371.0088 * math.asin(min(1.0, math.sqrt(a)))


def _leg(a: dict[str, Any], b: dict[str, Any], mode: str) -> dict[str, Any]:
    km = round(haversine_km(a["lat"], a["lng"], b["lat"], b["lng"]) * ROAD_FACTOR, 3)
    minutes = round(60 * km / SPEED_KPH[mode], 1)
    return {"distance_km": km, "distance_m": int(km * 1000), "duration_minutes": minutes, "mode": mode}


def match_geo(name_tokens: list[str], schema: dict[str, Any]) -> dict[str, Any] | None:
    """The op of a geocoding, reverse-geocoding, distance, directions, elevation, IP-location or timezone
    tool, from its name and parameters, or None."""
    toks = set(name_tokens)
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    by = {re.sub(r"[^a-z0-9]", "", p.lower()): p for p in props}
    base = {"kind": "compute", "resource": None, "info": True, "geo": True}
    mode = by.get("mode") or by.get("travelmode")
    lat = next((by[n] for n in LAT_PARAMS if n in by), None)
    lng = next((by[n] for n in LNG_PARAMS if n in by), None)

    def only(*ps: str | None) -> bool:
        keep = {p for p in ps if p}
        return required <= keep and set(props) <= keep

    if "reverse" in toks and "geocode" in toks and lat and lng and only(lat, lng):
        return {**base, "fn": "reverse_geocode", "params": [lat, lng]}
    if "geocode" in toks and "reverse" not in toks:
        p = next((by[n] for n in ADDRESS_PARAMS if n in by), None)
        if p and only(p):
            return {**base, "fn": "geocode", "params": [p]}
    if (
        "distance" in toks
        and "matrix" in toks
        and {"origins", "destinations"} <= set(by)
        and only(by["origins"], by["destinations"], mode)
    ):
        return {**base, "fn": "distance_matrix", "params": [by["origins"], by["destinations"], mode or ""]}
    if (
        ("directions" in toks or "route" in toks)
        and {"origin", "destination"} <= set(by)
        and only(by["origin"], by["destination"], mode)
    ):
        return {**base, "fn": "directions", "params": [by["origin"], by["destination"], mode or ""]}
    if "elevation" in toks and "locations" in by and only(by["locations"]):
        return {**base, "fn": "elevation", "params": [by["locations"]]}
    if "ip" in toks and toks & {"geolocation", "geolocate", "location", "geo"}:
        p = by.get("ip") or by.get("ipaddress") or by.get("address")
        if p and only(p):
            return {**base, "fn": "ip_geolocation", "params": [p]}
    if toks & {"timezone", "tz"} and lat and lng and only(lat, lng, by.get("timestamp")):
        return {**base, "fn": "timezone", "params": [lat, lng]}
    return None


def _points(v: Any) -> list[Any]:
    if isinstance(v, list):
        return v
    if isinstance(v, str) and "|" in v:
        return [x for x in v.split("|") if x.strip()]
    return [v]


def run_geo(op: dict[str, Any], args: dict[str, Any], seed: Any) -> dict[str, Any]:
    fn, params = op["fn"], op["params"]
    vals = [_inner(args.get(p)) if p else None for p in params]
    if fn == "geocode":
        return {"results": [geocode(vals[0], seed)]}
    if fn in ("reverse_geocode", "timezone"):
        lat, lng = float(vals[0]), float(vals[1])
        if not (-90 <= lat <= 90 and -180 <= lng <= 180):
            raise _rule(f"({lat}, {lng}) is not a point on the earth")
        out = _nearest(lat, lng)
        return {**out, "lat": lat, "lng": lng} if fn == "reverse_geocode" else {"timezone": out["timezone"]}
    if fn in ("distance_matrix", "directions"):
        mode = str(vals[2] or "driving").lower()
        if mode not in SPEED_KPH:
            raise _rule(f"unknown travel mode {mode!r}; one of {', '.join(SPEED_KPH)}")
        if fn == "directions":
            a, b = geocode(vals[0], seed), geocode(vals[1], seed)
            return {"origin": a, "destination": b, "legs": [_leg(a, b, mode)]}
        origins, dests = _points(vals[0]), _points(vals[1])
        if len(origins) * len(dests) > 625:
            raise _rule("a distance matrix is limited to 625 elements")
        pts_o = [geocode(o, seed) for o in origins]
        pts_d = [geocode(d, seed) for d in dests]
        return {
            "origin_addresses": [p["formatted_address"] for p in pts_o],
            "destination_addresses": [p["formatted_address"] for p in pts_d],
            "rows": [{"elements": [_leg(o, d, mode) for d in pts_d]} for o in pts_o],
        }
    if fn == "elevation":
        out = []
        for loc in _points(vals[0]):
            p = geocode(loc, seed)
            m = round(2500 * _h(seed, "elev", round(p["lat"], 4), round(p["lng"], 4)) ** 2, 1)
            out.append({"location": {"lat": p["lat"], "lng": p["lng"]}, "elevation_m": m})
        return {"results": out}
    ip = str(vals[0]).strip()
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        raise _rule(f"{ip!r} is not an IP address") from None
    if addr.is_private or addr.is_loopback or addr.is_reserved:
        return {"ip": ip, "private": True, "location": None}
    c = GAZETTEER[int(_h(seed, "ip", ip) * len(GAZETTEER))]
    return {"ip": ip, "city": c[0], "country": c[1], "lat": c[2], "lng": c[3], "timezone": c[4]}


def run_expand(op: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """open-mcp's `expandSchema`: the parts of a tool's input schema its listing left out."""
    tool_p, ptr_p = op["params"]
    name = str(args.get(tool_p))
    schemas = op["schemas"].get(op.get("aliases", {}).get(name, name))
    if schemas is None:
        raise NotFound(f"no tool '{name}' has a truncated schema to expand", type="tool_not_found")
    pointers = args.get(ptr_p) or []
    missing = [p for p in pointers if p not in schemas]
    if missing:
        where = ", ".join(map(str, missing[:5]))
        raise NotFound(f"{name} has no truncated part at {where}", type="pointer_not_found")
    return {"toolName": name, "schemas": {p: schemas[p] for p in pointers}}


# ---- calculators of an operation and two operands; unit conversion; echo; the simulated clock ----------
# `calculate(operation: enum[add, subtract, ...], a, b)`: the operation a parameter names, over two numbers
OPERATION_PARAMS = {"operation", "op", "operator", "action", "function", "method", "type"}
OPERATION_ALIASES = {
    "+": "add",
    "plus": "add",
    "addition": "add",
    "-": "subtract",
    "minus": "subtract",
    "sub": "subtract",
    "subtraction": "subtract",
    "*": "multiply",
    "x": "multiply",
    "times": "multiply",
    "mul": "multiply",
    "multiplication": "multiply",
    "/": "divide",
    "div": "divide",
    "division": "divide",
    "%": "mod",
    "^": "power",
    "**": "power",
    "exponent": "power",
}


def _operation(v: Any) -> str | None:
    w = str(v).strip().lower()
    w = OPERATION_ALIASES.get(w, w)
    return w if w in BINARY else None


CALC_WORDS = {"calculate", "calculator", "calc", "arithmetic", "math", "compute", "evaluate", "operate"}


def match_calculator(name_tokens: list[str], schema: dict[str, Any]) -> dict[str, Any] | None:
    """An operation parameter whose values are arithmetic (its enum; else its name, in a calculator's
    name) and two numbers."""
    named = bool(CALC_WORDS & set(name_tokens))
    props = schema.get("properties", {})
    nums = _params(schema, NUM)
    ops = [
        p
        for p, s in props.items()
        if isinstance(s, dict)
        and s.get("type") in ("string", None)
        and (
            (isinstance(s.get("enum"), list) and s["enum"] and all(_operation(v) for v in s["enum"]))
            or (named and not s.get("enum") and re.sub(r"[^a-z]", "", p.lower()) in OPERATION_PARAMS)
        )
    ]
    if len(ops) != 1 or len(nums) != 2 or set(props) != {ops[0], *nums}:
        return None
    enum = props[ops[0]].get("enum") or ["add"]
    samples = {ops[0]: enum[0], nums[0]: 6, nums[1]: 3}  # what a valid call gives, required or not
    return {
        "kind": "compute",
        "fn": "calculator",
        "params": [ops[0], *nums],
        "resource": None,
        "samples": samples,
    }


def _calculator(op: Any, a: Any, b: Any) -> dict[str, Any]:
    fn = _operation(op)
    if fn is None:
        raise InvalidArguments(f"unknown operation {op!r}: use one of add, subtract, multiply, divide")
    if a is None or b is None:
        raise InvalidArguments(f"{fn} needs two numbers")
    try:
        result = BINARY[fn](a, b)
    except (ValueError, ArithmeticError) as e:
        raise _rule(f"{fn}({a}, {b}) is undefined: {e}") from None
    return {
        "operation": fn,
        "a": a,
        "b": b,
        "result": _finite(result) if isinstance(result, float) else result,
    }


# unit -> (dimension, factor to the base unit); temperature is affine and converted apart
UNITS: dict[str, tuple[str, float]] = {}
for _dim, _table in {
    "length": {
        ("m", "meter", "meters", "metre", "metres"): 1.0,
        ("km", "kilometer", "kilometers", "kilometre", "kilometres"): 1000.0,
        ("cm", "centimeter", "centimeters"): 0.01,
        ("mm", "millimeter", "millimeters"): 0.001,
        ("mi", "mile", "miles"): 1609.344,
        ("ft", "foot", "feet"): 0.3048,
        ("in", "inch", "inches"): 0.0254,
        ("yd", "yard", "yards"): 0.9144,
        ("nmi", "nautical_mile", "nautical_miles"): 1852.0,
    },
    "mass": {
        ("kg", "kilogram", "kilograms"): 1.0,
        ("g", "gram", "grams"): 0.001,
        ("mg", "milligram", "milligrams"): 1e-6,
        ("lb", "lbs", "pound", "pounds"): 0.45359237,
        ("oz", "ounce", "ounces"): 0.028349523125,
        ("t", "tonne", "tonnes", "metric_ton"): 1000.0,
        ("st", "stone", "stones"): 6.35029318,
    },
    "volume": {
        ("l", "liter", "liters", "litre", "litres"): 1.0,
        ("ml", "milliliter", "milliliters", "millilitre"): 0.001,
        ("gal", "gallon", "gallons"): 3.785411784,
        ("qt", "quart", "quarts"): 0.946352946,
        ("pt", "pint", "pints"): 0.473176473,
        ("cup", "cups"): 0.2365882365,
        ("floz", "fl_oz", "fluid_ounce", "fluid_ounces"): 0.0295735295625,
        ("m3", "cubic_meter", "cubic_meters"): 1000.0,
    },
    "speed": {
        ("m/s", "mps", "meters_per_second"): 1.0,
        ("km/h", "kmh", "kph", "kilometers_per_hour"): 1 / 3.6,
        ("mph", "miles_per_hour"): 0.44704,
        ("kn", "knot", "knots", "kt"): 0.514444444,
        ("ft/s", "fps", "feet_per_second"): 0.3048,
    },
    "time": {
        ("s", "sec", "secs", "second", "seconds"): 1.0,
        ("ms", "millisecond", "milliseconds"): 0.001,
        ("min", "mins", "minute", "minutes"): 60.0,
        ("h", "hr", "hrs", "hour", "hours"): 3600.0,
        ("d", "day", "days"): 86400.0,
        ("wk", "week", "weeks"): 604800.0,
    },
}.items():
    for _names, _f in _table.items():
        for _n in _names:
            UNITS[_n] = (_dim, _f)
TEMPERATURE = {"c": "C", "celsius": "C", "f": "F", "fahrenheit": "F", "k": "K", "kelvin": "K"}
UNIT_WORDS = {
    "temperature",
    "length",
    "distance",
    "weight",
    "mass",
    "volume",
    "speed",
    "time",
    "unit",
    "units",
}
VALUE_PARAMS = ("value", "amount", "quantity", "number", "val", "input", "temperature", "temp")
FROM_UNIT = ("fromunit", "from", "unitfrom", "sourceunit", "fromscale", "unit", "inputunit", "source")
TO_UNIT = ("tounit", "to", "unitto", "targetunit", "toscale", "outputunit", "target")


def _unit_key(u: Any) -> str:
    return re.sub(r"\s+", "_", str(u).strip().lower().replace("°", "").replace("degrees_", ""))


def match_convert(name_tokens: list[str], schema: dict[str, Any]) -> dict[str, Any] | None:
    """`convert_temperature(value, from_unit, to_unit?)`, `convert_units(value, from, to)`: a number, the
    unit it is in, and (optionally) the unit wanted."""
    toks = set(name_tokens)
    if not ({"convert", "conversion", "converter"} & toks and (UNIT_WORDS & toks or len(toks) == 1)):
        return None
    props = schema.get("properties", {})
    by = {re.sub(r"[^a-z0-9]", "", p.lower()): p for p in props}
    value = next((by[a] for a in VALUE_PARAMS if a in by and props[by[a]].get("type") in NUM), None)
    frm = next((by[a] for a in FROM_UNIT if a in by and props[by[a]].get("type") in ("string", None)), None)
    to = next((by[a] for a in TO_UNIT if a in by and props[by[a]].get("type") in ("string", None)), None)
    if value is None or frm is None or set(props) - {value, frm, to}:
        return None
    if set(schema.get("required", [])) - {value, frm, to}:
        return None
    temp = "temperature" in toks or "temp" in toks
    units = [props[p].get("enum") or (["C", "F"] if temp else ["km", "mi"]) for p in (frm, to) if p]
    samples = {value: 10, frm: units[0][0], **({to: units[-1][-1]} if to else {})}
    op = {"kind": "compute", "fn": "convert_units", "params": [value, frm, to or ""], "resource": None}
    return {**op, "samples": samples}


def _temp(v: float, frm: str, to: str) -> float:
    c = v if frm == "C" else (v - 32) * 5 / 9 if frm == "F" else v - 273.15
    if c < -273.15 - 1e-9:
        raise _rule(f"{v} {frm} is below absolute zero")
    return c if to == "C" else c * 9 / 5 + 32 if to == "F" else c + 273.15


def _convert(value: Any, frm: Any, to: Any) -> dict[str, Any]:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise InvalidArguments("the value to convert must be a number")
    f, t = _unit_key(frm), _unit_key(to) if to not in (None, "") else None
    if f in TEMPERATURE:
        src = TEMPERATURE[f]
        if t is not None and t not in TEMPERATURE:
            raise InvalidArguments(f"cannot convert a temperature to {to!r}")
        targets = [TEMPERATURE[t]] if t is not None else [u for u in ("C", "F", "K") if u != src]
        out = {u: round(_temp(float(value), src, u), 6) for u in targets}
        return {
            "value": value,
            "from": src,
            **({"to": targets[0], "result": out[targets[0]]} if t else {}),
            "results": out,
        }
    if f not in UNITS:
        raise InvalidArguments(f"unknown unit {frm!r}")
    dim, fk = UNITS[f]
    if t is not None:
        if t not in UNITS or UNITS[t][0] != dim:
            raise InvalidArguments(f"cannot convert {dim} in {frm!r} to {to!r}")
        result = round(value * fk / UNITS[t][1], 9)
        return {"value": value, "from": frm, "to": to, "dimension": dim, "result": _finite(float(result))}
    out = {u: round(value * fk / k, 9) for u, (d, k) in CANONICAL.items() if d == dim and u != f}
    return {"value": value, "from": frm, "dimension": dim, "results": out}


CANONICAL = {
    u: UNITS[u] for u in ("m", "km", "cm", "mm", "mi", "ft", "in", "yd", "kg", "g", "mg", "lb", "oz", "t")
}
CANONICAL |= {
    u: UNITS[u] for u in ("l", "ml", "gal", "qt", "pt", "cup", "m/s", "km/h", "mph", "kn", "s", "min")
}
CANONICAL |= {u: UNITS[u] for u in ("h", "d", "wk")}

TEXT["echo"] = lambda s: s

# ---- the current time, from the simulated clock (never the wall clock) -------------------------------
TZ_PARAMS = ("timezone", "tz", "timezonename", "zone", "tzname", "iana")
CLOCK_NAMES = (("current", "time"), ("current", "date"), ("current", "datetime"), ("time", "now"))
CLOCK_NAMES += (("get", "time"), ("get", "date"), ("get", "datetime"), ("now",), ("current", "timestamp"))
CLOCK_NAMES += (("today",), ("get", "today"), ("what", "time"), ("local", "time"), ("get", "now"))


def match_clock(name_tokens: list[str], schema: dict[str, Any]) -> dict[str, Any] | None:
    """`get_current_time()`, `now(timezone?)`: the simulated clock's time, in a zone where one is asked."""
    toks = [t for t in name_tokens if t not in ("the", "and", "in", "for")]
    if not any(tuple(toks[i : i + len(w)]) == w for w in CLOCK_NAMES for i in range(len(toks))):
        return None
    if set(toks) & (WRITE_VERBS | {"convert", "list", "zone", "zones", "entries", "entry", "sheet", "off"}):
        return None
    props = schema.get("properties", {})
    by = {re.sub(r"[^a-z0-9]", "", p.lower()): p for p in props}
    tz = next((by[a] for a in TZ_PARAMS if a in by), None)
    fmt = by.get("format")
    if set(props) - {tz, fmt} or set(schema.get("required", [])) - {tz}:
        return None
    return {"kind": "compute", "fn": "now", "params": [tz or "", fmt or ""], "resource": None, "info": True}


def run_now(op: dict[str, Any], args: dict[str, Any], now: str) -> dict[str, Any]:
    import datetime as dt
    import zoneinfo

    tz_p, _fmt = op["params"]
    tz = args.get(tz_p) if tz_p else None
    d = dt.datetime.fromisoformat(now.replace("Z", "+00:00"))
    name = "UTC"
    if tz not in (None, "", "UTC", "utc", "Z"):
        m = re.fullmatch(r"(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?", str(tz).strip(), re.I)
        try:
            if m:
                sign = 1 if m.group(1) == "+" else -1
                zone: Any = dt.timezone(
                    sign * dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0))
                )
            else:
                zone = zoneinfo.ZoneInfo(str(tz).strip())
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OverflowError):
            raise InvalidArguments(f"unknown timezone {tz!r} (use an IANA name or a UTC offset)") from None
        d, name = d.astimezone(zone), str(tz).strip()
    iso = d.isoformat().replace("+00:00", "Z")
    return {
        "datetime": iso,
        "date": d.date().isoformat(),
        "time": d.time().replace(microsecond=0).isoformat(),
        "timezone": name,
        "unix": int(d.timestamp()),
        "weekday": d.strftime("%A"),
    }
