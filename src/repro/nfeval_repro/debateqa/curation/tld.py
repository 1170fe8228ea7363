"""Trusted top-level domains (DebateQA Table 10) and a URL filter on them.

DebateQA (Section 3.2 and Appendix A.2) keeps only documents whose URL lies
under a trustworthy top-level domain. Table 10 itself is not printed in the paper's text of
the paper; its text names the TLDs: ".gov and .edu domains are not open for
personal registration ... Although .org, .pro, and .info domains can now be
registered by individuals, their content generally remains professional".
:data:`TRUSTED_TLDS` holds exactly those five; if the printed table lists
more, they are not known to us.

The paper does not say how it matched country-level forms such as
``gov.uk`` or ``ac.uk``. We decide (and test):

* the *suffix* of a host is its public suffix under the ICANN section of the
  Public Suffix List, as ``tldextract`` reads it from the snapshot bundled
  with the package (no network, no cache; private suffixes such as
  ``blogspot.com`` are not suffixes here); a host under no listed suffix
  (``x.gov.zz``) has none and is never trusted;
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
from functools import lru_cache
from urllib.parse import urlsplit

__all__ = [
    "COUNTRY_EQUIVALENTS",
    "TRUSTED_TLDS",
    "is_trusted",
    "normalize_tlds",
    "url_host",
    "url_suffix",
]

#: DebateQA Table 10, as the paper's text names the TLDs (Appendix A.2).
TRUSTED_TLDS: tuple[str, ...] = ("gov", "edu", "org", "pro", "info")

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


@lru_cache(maxsize=1)
def _public_suffixes():
    import tldextract

    # suffix_list_urls=() and cache_dir=None: the bundled snapshot, never a download
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None,
                                 include_psl_private_domains=False)


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

    None for a bad URL, an IP address, a host that is only a suffix
    (``http://gov.uk``: nothing is registered under it) or one under no listed suffix.
    """
    host = url_host(url)
    if host is None:
        return None
    parts = _public_suffixes()(host)
    if not parts.suffix or not parts.domain:
        return None
    return parts.suffix


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
