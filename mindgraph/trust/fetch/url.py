"""URLs cited by a page, fetched over HTTP(S) with httpx.

Bounded on every side: a total deadline per URL (``trust.fetch_timeout_s``, not a gap
between bytes), a size cap (``trust.fetch_max_bytes``, checked on the declared length and
again while reading), redirects followed at most ``trust.fetch_max_redirects`` times, and
only text answers (HTML, XHTML, plain text, markdown); HTML gives its text (html_text).
Only public addresses, on every hop (addresses.py): the fetcher follows redirects itself and
connects to the address it checked, with the name in Host and in TLS (SNI, certificate).
"""

from __future__ import annotations

import codecs
import re
import time
from typing import Any

import httpx

from ...version import __version__
from .addresses import Resolver, resolve_public, system_resolver
from .base import Fetched, FetchError
from .html_text import html_to_text

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = HTML_TYPES | {"text/plain", "text/markdown", "text/x-markdown"}
_META_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([\w.:-]+)", re.I)
_PORTS = {"http": 80, "https": 443}


class UrlFetcher:
    """Fetches http(s) URLs as evidence text (``transport`` lets tests fake the network)."""

    def __init__(self, *, timeout_s: float, max_bytes: int, max_redirects: int,
                 transport: httpx.BaseTransport | None = None, allow_private: bool = False,
                 resolve: Resolver = system_resolver):
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.allow_private = allow_private
        self.resolve = resolve
        self.client = httpx.Client(
            timeout=httpx.Timeout(timeout_s), follow_redirects=False, transport=transport,
            headers={"User-Agent": f"mindgraph/{__version__} (verify; evidence fetch)",
                     "Accept": "text/html, text/plain;q=0.9, text/markdown;q=0.9"})

    def fetch(self, target: str) -> Fetched:
        """The text at URL ``target``; FetchError says why not (transient or not)."""
        deadline = time.monotonic() + self.timeout_s
        try:
            url = httpx.URL(target)
            for _ in range(self.max_redirects + 1):
                with self._open(url) as response:
                    location = response.headers.get("location")
                    if response.is_redirect and location:
                        url = url.join(location)
                        continue
                    data, charset, kind = self._read(response, deadline)
                    break
            else:
                raise FetchError("more redirects than trust.fetch_max_redirects allows")
        except httpx.TimeoutException:
            raise FetchError(f"timed out after {self.timeout_s:g} s (trust.fetch_timeout_s)",
                             transient=True) from None
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise FetchError(f"not a URL that can be fetched ({exc})") from None
        except httpx.HTTPError as exc:      # connection refused, reset, DNS, protocol errors
            raise FetchError(f"network error ({type(exc).__name__}: {exc})",
                             transient=True) from None
        text = data.decode(_codec(charset, data, kind), errors="replace")
        text = text.replace("\r\n", "\n")
        return Fetched.of(html_to_text(text) if kind in HTML_TYPES else text)

    def _open(self, url: httpx.URL) -> Any:
        """GET ``url`` from the public address its host resolves to, checked (addresses.py);
        the name goes in Host and in TLS, so virtual hosts and certificates still work."""
        if url.scheme not in _PORTS or not url.host:
            raise httpx.UnsupportedProtocol(f"only http(s) URLs with a host, not {url}")
        where = resolve_public(url.host, url.port or _PORTS[url.scheme], self.resolve,
                               self.allow_private)
        extensions = {"sni_hostname": url.host} if url.scheme == "https" else {}
        return self.client.stream("GET", url.copy_with(host=where.ip),
                                  headers={"Host": url.netloc.decode("ascii")},
                                  extensions=extensions)

    def _read(self, response: httpx.Response, deadline: float) -> tuple[bytes, str | None, str]:
        """The body of a final answer (checked: status, type, size, deadline), its charset
        and its content type."""
        kind = _content_type(response)
        _check(response, kind, self.max_bytes)
        data = bytearray()
        for chunk in response.iter_bytes():
            data += chunk
            if len(data) > self.max_bytes:
                raise FetchError(f"over {self.max_bytes:,} bytes "
                                 f"(trust.fetch_max_bytes); not read")
            if time.monotonic() > deadline:
                raise FetchError(f"no complete answer within {self.timeout_s:g} s "
                                 f"(trust.fetch_timeout_s)", transient=True)
        return bytes(data), response.charset_encoding, kind

    def close(self) -> None:
        """Release the connection pool."""
        self.client.close()


def _content_type(response: httpx.Response) -> str:
    return response.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def _check(response: httpx.Response, kind: str, max_bytes: int) -> None:
    status = response.status_code
    if status >= 400:
        raise FetchError(f"HTTP {status} {response.reason_phrase}".rstrip(),
                         transient=status in (408, 425, 429) or status >= 500)
    if kind not in TEXT_TYPES:
        raise FetchError(f"content type {kind or '(none)'} is not text; verify reads HTML, "
                         f"plain text and markdown")
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise FetchError(f"{int(declared):,} bytes declared, over {max_bytes:,} "
                         f"(trust.fetch_max_bytes); not read")


def _codec(charset: str | None, data: bytes, kind: str) -> str:
    """The charset the answer declares (header, then an HTML meta tag), else UTF-8."""
    names = [charset] if charset else []
    if kind in HTML_TYPES:
        found = _META_CHARSET.search(data[:2048])
        if found:
            names.append(found.group(1).decode("ascii", errors="ignore"))
    for name in names:
        try:
            return codecs.lookup(name).name
        except LookupError:
            continue
    return "utf-8"
