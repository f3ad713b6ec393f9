"""Validators for values that must mean the same everywhere (docs/api.md, "Input rules").

- Time zones: IANA names from the tz database, without the entries that depend on the host
  (`localtime` is a link to the machine's own zone) or are not zones (`Factory`, `posixrules`).
- Currencies: ISO 4217 codes, lower case on the wire.
- Text that is used as an identifier (a URL): no whitespace and no control characters, which
  parsers elsewhere strip or split on, so that what is stored is exactly what is used.
"""

import functools
import unicodedata
import zoneinfo

from django.core.exceptions import ValidationError

# Entries of the tz database directory that are not a zone with the same meaning on every host.
HOST_DEPENDENT_ZONES = frozenset({"localtime", "Factory", "posixrules"})


@functools.cache
def iana_time_zones() -> frozenset[str]:
    """Walking the tz database on disk is slow (docs/benchmarks.md); the set does not change while the
    process runs."""
    return frozenset(
        name
        for name in zoneinfo.available_timezones()
        if name not in HOST_DEPENDENT_ZONES and not name.startswith(("posix/", "right/"))
    )


def validate_time_zone(value: str) -> None:
    if value not in iana_time_zones():
        shown = value if len(value) <= 64 else value[:64] + "…"
        raise ValidationError(f"'{shown}' is not a valid IANA time zone.", code="invalid_time_zone")


# ISO 4217 list one (current currencies), without the fund codes, precious metals, bond-market
# units, SDR and the testing / "no currency" codes: what a price can be paid in.
ISO_4217_CURRENCIES = frozenset(
    """
    AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP
    BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP
    GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR
    KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK
    MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR
    SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS
    UAH UGX USD UYU UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG
    """.lower().split()
)


def validate_currency(value: str) -> None:
    """A lower-case ISO 4217 code (`usd`)."""
    if value not in ISO_4217_CURRENCIES:
        raise ValidationError(f"'{value[:16]}' is not an ISO 4217 currency code, such as 'usd'.", code="invalid")


def is_space_or_control(char: str) -> bool:
    return char.isspace() or unicodedata.category(char) in ("Cc", "Cf", "Zs", "Zl", "Zp")


def validate_no_space_or_control(value: str) -> None:
    """Refuse whitespace and control characters anywhere (CR/LF, tab, NUL, zero-width, ...):
    `urllib` quietly strips or drops some of them, so the stored text would not be what is used."""
    for index, char in enumerate(value):
        if is_space_or_control(char):
            raise ValidationError(
                f"Must not contain whitespace or control characters (U+{ord(char):04X} at position {index}).",
                code="invalid",
            )
