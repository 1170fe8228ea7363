"""Trusted top-level domains (DebateQA Table 10) and a URL filter on them.

DebateQA (Section 3.2 and Appendix A.2) keeps only documents whose URL lies
under a trustworthy top-level domain. Table 10 itself is not in our copy of
the paper; its text names the TLDs: ".gov and .edu domains are not open for
personal registration ... Although .org, .pro, and .info domains can now be
registered by individuals, their content generally remains professional".
:data:`TRUSTED_TLDS` holds exactly those five; if the printed table lists
more, they are not known to us.

The paper does not say how it matched country-level forms such as
``gov.uk`` or ``ac.uk``. We decide (and test):

* the *suffix* of a host is its public suffix: the last label, or the last two
  labels when they form one of the second-level registries in
  :data:`SECOND_LEVEL` (a compact, hand-kept subset of the Public Suffix
  List covering the large country-code registries; an unknown second level
  falls back to the last label, so ``x.gov.zz`` gives ``zz``);
* a URL is trusted for a TLD ``t`` when its suffix is ``t``, or is ``t.<cc>``
  (``www.gov.uk`` is trusted for ``gov``, ``bbc.org.uk`` for ``org``), or
  is a country form that only institutions of that kind can register, listed
  in :data:`COUNTRY_EQUIVALENTS` (``ac.uk`` counts as ``edu``, ``go.jp`` and
  ``gouv.fr`` as ``gov``);
* bad URLs are never trusted: unparsable strings, schemes other than
  http/https, IP addresses, hosts that are only a suffix (``http://gov``),
  single-label hosts (``localhost``), empty labels and bad ports. A URL
  without a scheme (``cdc.gov/flu``) is read as ``http://`` when its first
  segment looks like a host name; ``user@host`` userinfo is ignored, so
  ``http://cdc.gov@evil.com`` is ``evil.com`` (``com``), as a browser reads it.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from urllib.parse import urlsplit

__all__ = [
    "COUNTRY_EQUIVALENTS",
    "SECOND_LEVEL",
    "TRUSTED_TLDS",
    "is_trusted",
    "normalize_tlds",
    "url_host",
    "url_suffix",
]

#: DebateQA Table 10, as the paper's text names the TLDs (Appendix A.2).
TRUSTED_TLDS: tuple[str, ...] = ("gov", "edu", "org", "pro", "info")

_COMMON = frozenset({"ac", "co", "com", "edu", "gov", "net", "org"})

#: Country-code TLD -> second-level labels that are public suffixes under it
#: (a subset of the Public Suffix List, written for this project).
SECOND_LEVEL: dict[str, frozenset[str]] = {
    "uk": frozenset({"ac", "co", "gov", "ltd", "me", "net", "nhs", "org", "plc", "police",
                     "sch", "mod"}),
    "au": frozenset({"asn", "com", "csiro", "edu", "gov", "id", "net", "org"}),
    "nz": frozenset({"ac", "co", "cri", "geek", "gen", "govt", "health", "iwi", "maori",
                     "mil", "net", "org", "parliament", "school"}),
    "jp": frozenset({"ac", "ad", "co", "ed", "go", "gr", "lg", "ne", "or"}),
    "kr": frozenset({"ac", "co", "go", "ne", "or", "re", "pe", "mil"}),
    "in": _COMMON | frozenset({"ernet", "firm", "gen", "ind", "mil", "nic", "res"}),
    "cn": _COMMON | frozenset({"ah", "bj", "mil", "sh"}),
    "br": _COMMON | frozenset({"art", "blog", "jus", "leg", "mil", "mp"}),
    "za": _COMMON | frozenset({"law", "mil", "nom", "school"}),
    "fr": frozenset({"asso", "com", "gouv", "nom", "prd", "tm"}),
    "mx": frozenset({"com", "edu", "gob", "net", "org"}),
    "ar": frozenset({"com", "edu", "gob", "gov", "int", "mil", "net", "org", "tur"}),
    "es": frozenset({"com", "edu", "gob", "nom", "org"}),
    "il": frozenset({"ac", "co", "gov", "idf", "k12", "muni", "net", "org"}),
    "sg": frozenset({"com", "edu", "gov", "net", "org", "per"}),
    "hk": frozenset({"com", "edu", "gov", "idv", "net", "org"}),
    "tw": frozenset({"club", "com", "ebiz", "edu", "game", "gov", "idv", "mil", "net", "org"}),
    "ca": frozenset({"ab", "bc", "mb", "nb", "nf", "nl", "ns", "nt", "nu", "on", "pe",
                     "qc", "sk", "yk"}),
    "us": frozenset({"ak", "al", "ca", "co", "fl", "ma", "ny", "tx", "wa", "k12"}),
    "ru": frozenset({"ac", "com", "edu", "gov", "int", "mil", "net", "org", "pp"}),
    "ua": frozenset({"com", "edu", "gov", "in", "net", "org"}),
    "tr": frozenset({"av", "bel", "biz", "com", "edu", "gen", "gov", "info", "k12", "mil",
                     "net", "org", "pol", "tsk", "web"}),
    "eg": frozenset({"com", "edu", "eun", "gov", "mil", "name", "net", "org", "sci"}),
    "ng": _COMMON | frozenset({"mil", "mobi", "name", "sch"}),
    "ke": frozenset({"ac", "co", "go", "info", "me", "mobi", "ne", "or", "sc"}),
    "pk": _COMMON | frozenset({"biz", "fam", "gob", "gok", "gon", "gop", "gos", "info", "web"}),
    "my": frozenset({"com", "edu", "gov", "mil", "name", "net", "org"}),
    "ph": frozenset({"com", "edu", "gov", "i", "mil", "net", "ngo", "org"}),
    "th": frozenset({"ac", "co", "go", "in", "mi", "net", "or"}),
    "id": frozenset({"ac", "biz", "co", "desa", "go", "mil", "my", "net", "or", "sch", "web"}),
    "vn": frozenset({"ac", "biz", "com", "edu", "gov", "health", "info", "int", "name",
                     "net", "org", "pro"}),
    "pl": frozenset({"com", "edu", "gov", "info", "net", "org"}),
    "it": frozenset({"gov", "edu"}),
    "be": frozenset({"ac"}),
    "at": frozenset({"ac", "co", "gv", "or"}),
}

#: Second-level labels that only institutions of a TLD's kind can register.
COUNTRY_EQUIVALENTS: dict[str, str] = {
    "ac": "edu",  # ac.uk, ac.jp, ac.nz, ac.il, ...: academic institutions
    "go": "gov",  # go.jp, go.kr, go.th, go.id, go.ke
    "gob": "gov",  # gob.mx, gob.es, gob.ar
    "gouv": "gov",  # gouv.fr
    "govt": "gov",  # govt.nz
    "gv": "gov",  # gv.at
}

_SCHEMES = ("http", "https")
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_OTHER_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:(?!\d)", re.IGNORECASE)  # not host:port


def url_host(url: str) -> str | None:
    """The lower-cased host name of an http(s) URL; None for a bad URL or an IP address.

    International names are converted to their ASCII (punycode) form.
    """
    if not isinstance(url, str):
        return None
    url = url.strip()
    if not url or any(c.isspace() for c in url):
        return None
    if "://" not in url:
        if url.startswith("//"):  # network-path reference
            url = "http:" + url
        elif _OTHER_SCHEME.match(url):  # mailto:, javascript:, urn:, ...
            return None
        else:
            url = "http://" + url
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError on a bad port
    except ValueError:
        return None
    if parts.scheme.lower() not in _SCHEMES:
        return None
    host = parts.hostname  # lower-cased, userinfo and port stripped
    if not host:
        return None
    host = host.rstrip(".") if host.endswith(".") and not host.endswith("..") else host
    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        pass
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        return None
    labels = host.split(".")
    if len(labels) < 2 or not all(_LABEL.match(label) for label in labels):
        return None
    if labels[-1].isdigit():  # 999.1.1.1 and the like: not a name
        return None
    return host


def url_suffix(url: str) -> str | None:
    """The public suffix of the URL's host, lower-case (``"gov"``, ``"gov.uk"``, ``"com"``).

    None for a bad URL, an IP address, or a host that is only a suffix
    (``http://gov.uk``: nothing is registered under it).
    """
    host = url_host(url)
    if host is None:
        return None
    labels = host.split(".")
    n = 2 if len(labels) >= 2 and labels[-2] in SECOND_LEVEL.get(labels[-1], ()) else 1
    if len(labels) <= n:
        return None
    return ".".join(labels[-n:])


def normalize_tlds(tlds: Sequence[str]) -> frozenset[str]:
    """Lower-case TLDs without leading dots (``".GOV"`` -> ``"gov"``)."""
    if isinstance(tlds, str):
        tlds = (tlds,)
    return frozenset(t.strip().lstrip(".").lower() for t in tlds if t and t.strip())


def is_trusted(url: str, tlds: Sequence[str] = TRUSTED_TLDS) -> bool:
    """Whether the URL's host lies under one of ``tlds`` (Table 10); False for bad URLs.

    ``x.gov.uk`` counts for ``gov``, ``x.ac.uk`` for ``edu`` (see the module
    docstring); a multi-label entry such as ``"gov.uk"`` matches that suffix.
    """
    suffix = url_suffix(url)
    if suffix is None:
        return False
    wanted = normalize_tlds(tlds)
    if suffix in wanted:
        return True
    labels = suffix.split(".")
    if len(labels) == 2:
        second = labels[0]
        return second in wanted or COUNTRY_EQUIVALENTS.get(second) in wanted
    return False
