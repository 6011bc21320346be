"""What code can do is code: calculators, encoders, hashes, validators, text utilities and seeded random
numbers, recognised from a tool's name and the shape of its parameters.

A match gives the op `{"kind": "compute", "fn": ..., "params": [...]}`: `params` are the tool's own
parameter names, in the order the function takes them. Pure functions are read-only; random ones draw
from the service's seeded rng (so they advance a counter in state, and replay the same values).
A domain error (a square root of -1, a division by zero, bad Base64) is a 422 with the reason.
"""

from __future__ import annotations

import base64
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

from compoworld.core.envelope import InvalidArguments, ToolError

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


def match_compute(name_tokens: list[str], schema: dict[str, Any]) -> dict[str, Any] | None:
    """The compute op of a tool, from its name (prefix removed) and parameters, or None."""
    key = "_".join(name_tokens)
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
    if key in LIST and len(arrays) == 1 and len(props) == 1:
        return {"kind": "compute", "fn": key, "params": arrays, "resource": None, "list": True}
    if key in BINARY and len(nums) >= 2 and len(props) == len(nums):
        return {"kind": "compute", "fn": key, "params": nums[:2], "resource": None}
    if key in UNARY and len(nums) == 1 and len(props) == 1:
        return {"kind": "compute", "fn": key, "params": nums, "resource": None}
    if key in TEXT and len(strs) >= 1 and required <= {strs[0]}:
        return {"kind": "compute", "fn": key, "params": strs[:1], "resource": None}
    if key in RANDOM and not (required - set(nums)):
        return {"kind": "compute", "fn": key, "params": nums[:2], "resource": None, "random": True}
    return None


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


def _key(v: Any) -> str:
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
