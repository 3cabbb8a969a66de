"""Kubernetes resource quantities (`3880m`, `14145946Ki`, `16Gi`, `1e3`) as whole numbers.

A node's `status.allocatable` writes CPU and memory as quantities: a decimal number with an optional
binary (Ki..Ei) or decimal (n, u, m, k, M..E) suffix, or an exponent. The collector stores CPU in
millicores and memory in bytes, rounded up the way Kubernetes' `MilliValue()` and `Value()` do, and
parses with Decimal so `0.1` is exactly a tenth. Bad input raises ValueError naming the text.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal, InvalidOperation

_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$")
_SUFFIX = {
    "Ki": Decimal(2) ** 10,
    "Mi": Decimal(2) ** 20,
    "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40,
    "Pi": Decimal(2) ** 50,
    "Ei": Decimal(2) ** 60,
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}
# Kubernetes caps exponents far below this; the cap keeps a hostile value from costing time.
_MAX_EXPONENT = 30


def parse_quantity(text: str | int | float) -> Decimal:
    """The value of a quantity in base units (cores, bytes, pods). Raises ValueError."""
    if isinstance(text, bool):
        raise ValueError(f"{text!r} is not a quantity")
    if isinstance(text, int | float):
        return Decimal(str(text))
    match = _QUANTITY.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"{text!r} is not a quantity")
    number, suffix, exponent = match.groups()
    try:
        value = Decimal(number)
    except InvalidOperation:
        raise ValueError(f"{text!r} is not a quantity") from None
    if suffix:
        value *= _SUFFIX[suffix]
    elif exponent:
        if abs(int(exponent)) > _MAX_EXPONENT:
            raise ValueError(f"{text!r}: exponent out of range")
        value = value.scaleb(int(exponent))
    return value


def millis(text: str | int | float) -> int:
    """A quantity in thousandths, rounded up (CPU in millicores). Raises ValueError."""
    return int((parse_quantity(text) * 1000).to_integral_value(rounding=ROUND_CEILING))


def whole(text: str | int | float) -> int:
    """A quantity in base units, rounded up (memory in bytes, pods). Raises ValueError."""
    return int(parse_quantity(text).to_integral_value(rounding=ROUND_CEILING))
