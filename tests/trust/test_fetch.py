"""The evidence fetchers: URLs over (fake) HTTP, local files inside the workspace only, and
the evidence cache that an offline run reads."""

from __future__ import annotations

import os

import httpx
import pytest

from mindgraph.trust.fetch.base import Fetched, FetchError
from mindgraph.trust.fetch.cache import OFFLINE, CachedUrls, EvidenceCache
from mindgraph.trust.fetch.files import FileFetcher
from mindgraph.trust.fetch.html_text import html_to_text
from mindgraph.trust.fetch.url import UrlFetcher

PAGE = ("<html><head><title>Sync</title><style>p {color: red}</style>"
        "<script>var claim = 'Sync keeps 99 months';</script></head><body>"
        "<nav>Home</nav><p>Sync keeps <b>12 months</b> of version history.</p>"
        "<ul><li>Each vault holds up to 10&nbsp;GB.</li></ul></body></html>")


def public_dns(host, port):
    """The fake network's resolver: every name is one public address (RFC 5737 has none)."""
    return ["93.184.215.14"]


def _fetcher(handler, **kw) -> UrlFetcher:
    options = {"timeout_s": 5.0, "max_bytes": 10_000, "max_redirects": 2,
               "resolve": public_dns} | kw
    return UrlFetcher(transport=httpx.MockTransport(handler), **options)


def _html(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, text=PAGE, headers={"content-type": "text/html; charset=utf-8"})


def test_html_gives_its_text_block_by_block_without_scripts_or_styles():
    got = _fetcher(_html).fetch("https://example.org/sync")
    assert got.text == ("Sync\n\nHome\n\nSync keeps 12 months of version history.\n\n"
                        "Each vault holds up to 10 GB.\n")    # &nbsp; is a space
    assert "99" not in got.text and "color" not in got.text
    assert got == Fetched.of(got.text)                 # the hash is of the checked text
    assert html_to_text("") == ""


def test_redirects_are_followed_up_to_the_bound_then_refused():
    def handler(request: httpx.Request) -> httpx.Response:
        hop = int(request.url.path.strip("/") or 0)
        if hop < 2:
            return httpx.Response(302, headers={"location": f"/{hop + 1}"})
        return _html(request)

    assert "12 months" in _fetcher(handler).fetch("https://example.org/0").text
    with pytest.raises(FetchError, match="more redirects than trust.fetch_max_redirects") as bad:
        _fetcher(handler, max_redirects=1).fetch("https://example.org/0")
    assert not bad.value.transient


def test_an_answer_over_the_size_cap_is_refused_declared_or_not():
    big = "x" * 20_000
    declared = _fetcher(lambda r: httpx.Response(200, text=big,
                                                 headers={"content-type": "text/plain"}))
    with pytest.raises(FetchError, match="20,000 bytes declared, over 10,000"):
        declared.fetch("https://example.org/big")

    def streamed(request):      # no content-length: the cap holds while reading
        chunks = (b"y" * 4096 for _ in range(10))
        return httpx.Response(200, content=chunks, headers={"content-type": "text/plain"})

    with pytest.raises(FetchError, match="over 10,000 bytes"):
        _fetcher(streamed).fetch("https://example.org/stream")


def test_an_answer_that_is_not_text_is_refused():
    pdf = _fetcher(lambda r: httpx.Response(200, content=b"%PDF-1.7",
                                            headers={"content-type": "application/pdf"}))
    with pytest.raises(FetchError, match="application/pdf is not text") as bad:
        pdf.fetch("https://example.org/paper.pdf")
    assert not bad.value.transient


def test_http_errors_say_the_status_and_only_server_faults_are_transient():
    for status, transient in ((404, False), (410, False), (429, True), (503, True)):
        with pytest.raises(FetchError, match=f"HTTP {status}") as bad:
            _fetcher(lambda r, s=status: httpx.Response(s)).fetch("https://example.org/x")
        assert bad.value.transient is transient


def test_a_timeout_or_a_refused_connection_is_transient():
    def slow(request):
        raise httpx.ReadTimeout("read timed out", request=request)

    with pytest.raises(FetchError, match="timed out after 5 s") as bad:
        _fetcher(slow).fetch("https://example.org/slow")
    assert bad.value.transient
    # a real port with nothing listening
    with pytest.raises(FetchError, match="network error") as bad:
        UrlFetcher(timeout_s=2, max_bytes=1000, max_redirects=0,
                   allow_private=True).fetch("http://127.0.0.1:9/")
    assert bad.value.transient


def test_the_cache_serves_an_offline_run_what_was_fetched_before(tmp_path):
    cache = EvidenceCache(tmp_path / "state")
    url = "https://example.org/sync"
    with pytest.raises(FetchError) as bad:
        CachedUrls(cache).fetch(url)
    assert bad.value.reason == OFFLINE
    live = CachedUrls(cache, _fetcher(_html)).fetch(url)
    assert live.note == ""
    offline = CachedUrls(cache).fetch(url)
    assert (offline.text, offline.sha256) == (live.text, live.sha256)
    assert offline.note.startswith("the copy cached on ")
    # stored by content hash: the text file is named by the hash of what it holds
    assert (cache.root / "texts" / f"{live.sha256}.txt").read_text() == live.text


def test_a_transient_failure_falls_back_to_the_cache_and_a_refusal_does_not(tmp_path):
    cache = EvidenceCache(tmp_path / "state")
    url = "https://example.org/sync"
    CachedUrls(cache, _fetcher(_html)).fetch(url)
    down = CachedUrls(cache, _fetcher(lambda r: httpx.Response(502)))
    assert "fetching it failed (HTTP 502 Bad Gateway)" in down.fetch(url).note
    gone = CachedUrls(cache, _fetcher(lambda r: httpx.Response(404)))
    with pytest.raises(FetchError, match="HTTP 404"):
        gone.fetch(url)


def test_each_url_is_fetched_once_per_run_and_a_tampered_cache_is_no_copy(tmp_path):
    calls = []

    def counted(request):
        calls.append(request.url)
        return _html(request)

    cache = EvidenceCache(tmp_path / "state")
    run = CachedUrls(cache, _fetcher(counted))
    run.fetch("https://example.org/a")
    run.fetch("https://example.org/a")
    assert len(calls) == 1
    digest = run.fetch("https://example.org/a").sha256
    (cache.root / "texts" / f"{digest}.txt").write_text("Sync keeps 99 months.")
    with pytest.raises(FetchError, match="no copy is cached"):
        CachedUrls(cache).fetch("https://example.org/a")


def test_local_files_are_read_inside_the_workspace_only(tmp_path):
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / "raw" / "docs").mkdir(parents=True)
    outside.mkdir()
    (work / "raw" / "docs" / "spec.txt").write_text("The spec says 12 months.")
    (work / "raw" / "docs" / "page.html").write_text("<p>Held for <i>30 days</i>.</p>")
    (outside / "secret.txt").write_text("a secret")
    os.symlink(outside / "secret.txt", work / "raw" / "docs" / "link.txt")
    files = FileFetcher([work], max_bytes=1000)
    assert files.fetch(str(work / "raw/docs/spec.txt")).text == "The spec says 12 months."
    assert files.fetch(str(work / "raw/docs/page.html")).text == "Held for 30 days.\n"
    with pytest.raises(FetchError, match="lies outside the workspace"):
        files.fetch(str(work / "raw/docs/../../../outside/secret.txt"))
    with pytest.raises(FetchError, match="leads outside the workspace"):
        files.fetch(str(work / "raw/docs/link.txt"))
    with pytest.raises(FetchError, match="does not exist"):
        files.fetch(str(work / "raw/docs/none.txt"))
    (work / "raw" / "docs" / "big.txt").write_text("z" * 2000)
    with pytest.raises(FetchError, match="over the 1,000-byte"):
        files.fetch(str(work / "raw/docs/big.txt"))


def _seen(handler_log):
    def handler(request):
        handler_log.append((str(request.url), request.headers["host"],
                            request.extensions.get("sni_hostname")))
        return _html(request)
    return handler


@pytest.mark.parametrize("url, kind", [
    ("http://127.0.0.1/", "loopback"), ("http://2130706433/", "loopback"),
    ("http://0x7f.1/", "loopback"), ("http://0x7f000001/", "loopback"),
    ("http://[::1]/", "loopback"), ("http://[::ffff:127.0.0.1]/", "loopback"),
    ("http://[::ffff:7f00:1]/", "loopback"), ("http://10.0.0.8/", "private"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://[fe80::1]/", "link-local"), ("http://224.0.0.1/", "multicast"),
    ("http://[ff02::1]/", "multicast"), ("http://0.0.0.0/", "unspecified"),
    ("http://[fc00::1]/", "private"), ("http://100.64.0.1/", "reserved"),
    ("http://[2002:7f00:1::]/", "loopback"),
])
def test_private_loopback_and_reserved_addresses_are_refused_in_any_form(url, kind):
    log = []
    with pytest.raises(FetchError, match=f"a {kind} address: verify fetches public addresses "
                                         f"only \\(set trust.fetch_private_hosts: true") as bad:
        UrlFetcher(timeout_s=2, max_bytes=1000, max_redirects=0,
                   transport=httpx.MockTransport(_seen(log))).fetch(url)
    assert not bad.value.transient and log == []


def test_an_octal_address_is_no_url_at_all():
    with pytest.raises(FetchError, match="not a URL that can be fetched"):   # httpx says so
        UrlFetcher(timeout_s=2, max_bytes=1000, max_redirects=0).fetch("http://0177.0.0.1/")


def test_a_name_is_resolved_once_and_the_checked_address_is_the_one_connected_to():
    answers = iter([["93.184.215.14"], ["127.0.0.1"]])     # a rebinding DNS server
    log = []
    fetcher = UrlFetcher(timeout_s=2, max_bytes=10_000, max_redirects=0,
                         transport=httpx.MockTransport(_seen(log)),
                         resolve=lambda host, port: next(answers))
    assert "12 months" in fetcher.fetch("https://docs.example.org:8443/sync").text
    assert log == [("https://93.184.215.14:8443/sync", "docs.example.org:8443",
                    "docs.example.org")]


def test_a_name_or_a_redirect_hop_into_the_private_network_is_refused():
    dns = {"docs.example.org": ["93.184.215.14"], "intranet.example.org": ["10.1.2.3"],
           "both.example.org": ["93.184.215.14", "192.168.1.1"]}
    log = []

    def handler(request):
        log.append(request.headers["host"])
        if request.url.path == "/away":
            return httpx.Response(302, headers={"location": "http://intranet.example.org/x"})
        return _html(request)

    fetcher = UrlFetcher(timeout_s=2, max_bytes=10_000, max_redirects=3,
                         transport=httpx.MockTransport(handler),
                         resolve=lambda host, port: dns[host])
    with pytest.raises(FetchError, match="intranet.example.org resolves to 10.1.2.3, a "
                                         "private address"):
        fetcher.fetch("http://docs.example.org/away")
    assert log == ["docs.example.org"]                      # the hop was never made
    with pytest.raises(FetchError, match="resolves to 192.168.1.1, a private address"):
        fetcher.fetch("http://both.example.org/")
    allowed = UrlFetcher(timeout_s=2, max_bytes=10_000, max_redirects=3, allow_private=True,
                         transport=httpx.MockTransport(handler),
                         resolve=lambda host, port: dns[host])
    assert "12 months" in allowed.fetch("http://docs.example.org/away").text
