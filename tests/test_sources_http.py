"""The polite HTTP client: retries/backoff, Retry-After, cache, per-host spacing, User-Agent."""

from __future__ import annotations

import email.utils

import pytest
from werkzeug import Response

from microcoder.pipeline.sources.http import HttpClient, HttpConfig, HttpError, retry_after_seconds


def client(tmp_path, sleeps: list[float], **kw) -> HttpClient:
    cfg = HttpConfig(min_interval_s=0.0, cache_dir=str(tmp_path / "cache"), backoff_s=2.0, **kw)
    return HttpClient(cfg, sleep=sleeps.append)


def sequence(*responses):
    """A handler answering with the given responses in turn (the last one repeats)."""
    calls = []

    def handler(request):
        calls.append(request)
        return responses[min(len(calls), len(responses)) - 1]

    return handler, calls


def test_retries_5xx_with_exponential_backoff(httpserver, tmp_path):
    handler, calls = sequence(Response("busy", 503), Response("busy", 502), Response("ok", 200))
    httpserver.expect_request("/x").respond_with_handler(handler)
    sleeps: list[float] = []
    assert client(tmp_path, sleeps).get_text(httpserver.url_for("/x")) == "ok"
    assert len(calls) == 3 and sleeps == [2.0, 4.0]


def test_retry_after_is_honoured_and_capped(httpserver, tmp_path):
    handler, calls = sequence(Response("slow down", 429, headers={"Retry-After": "7"}),
                              Response("slow down", 429, headers={"Retry-After": "9999"}), Response("ok", 200))
    httpserver.expect_request("/x").respond_with_handler(handler)
    sleeps: list[float] = []
    assert client(tmp_path, sleeps, max_backoff_s=60.0).get_text(httpserver.url_for("/x")) == "ok"
    assert sleeps == [7.0, 60.0]


def test_gives_up_after_max_retries(httpserver, tmp_path):
    handler, calls = sequence(Response("down", 500))
    httpserver.expect_request("/x").respond_with_handler(handler)
    with pytest.raises(HttpError) as err:
        client(tmp_path, [], max_retries=2).get_text(httpserver.url_for("/x"))
    assert err.value.status == 500 and len(calls) == 3


def test_client_errors_are_not_retried(httpserver, tmp_path):
    handler, calls = sequence(Response("nope", 404))
    httpserver.expect_request("/x").respond_with_handler(handler)
    with pytest.raises(HttpError, match="HTTP 404"):
        client(tmp_path, []).get_text(httpserver.url_for("/x"))
    assert len(calls) == 1


def test_cache_avoids_refetching_and_ttl_refreshes(httpserver, tmp_path):
    handler, calls = sequence(Response("v1", 200), Response("v2", 200))
    httpserver.expect_request("/page").respond_with_handler(handler)
    url = httpserver.url_for("/page")
    first = client(tmp_path, [])
    assert first.get_text(url, {"b": 2, "a": 1}) == "v1"
    again = client(tmp_path, [])  # a rerun: new client, same cache folder
    assert again.get_text(url, {"a": 1, "b": 2}) == "v1" and again.stats["cache_hits"] == 1 and len(calls) == 1
    assert again.get_text(url, {"a": 1, "b": 2}, ttl_s=-1) == "v2"  # expired listing: refetched
    assert len(calls) == 2
    refresh = HttpClient(HttpConfig(min_interval_s=0, cache_dir=str(tmp_path / "cache"), refresh=True))
    assert refresh.get_text(url, {"a": 1, "b": 2}) == "v2" and len(calls) == 3


def test_errors_are_not_cached(httpserver, tmp_path):
    handler, calls = sequence(Response("gone", 404), Response("back", 200))
    httpserver.expect_request("/p").respond_with_handler(handler)
    c = client(tmp_path, [])
    with pytest.raises(HttpError):
        c.get_text(httpserver.url_for("/p"))
    assert c.get_text(httpserver.url_for("/p")) == "back"


def test_user_agent_and_json_post(httpserver, tmp_path):
    httpserver.expect_request("/graphql", method="POST", json={"query": "q", "variables": {"a": 1}},
                              headers={"User-Agent": "MicroCoder-test/1"}).respond_with_json({"data": {"ok": True}})
    c = client(tmp_path, [], user_agent="MicroCoder-test/1")
    assert c.post_json(httpserver.url_for("/graphql"), {"query": "q", "variables": {"a": 1}}) == {"data": {"ok": True}}


def test_non_json_answer_is_an_http_error(httpserver, tmp_path):
    httpserver.expect_request("/api").respond_with_data("<html>maintenance</html>")
    with pytest.raises(HttpError, match="not JSON"):
        client(tmp_path, []).get_json(httpserver.url_for("/api"))


def test_requests_to_one_host_are_spaced(httpserver, tmp_path):
    httpserver.expect_request("/a").respond_with_data("a")
    httpserver.expect_request("/b").respond_with_data("b")
    now = [100.0]
    sleeps: list[float] = []

    def sleep(s: float) -> None:
        sleeps.append(s)
        now[0] += s

    c = HttpClient(HttpConfig(min_interval_s=1.5, cache_dir=None), sleep=sleep, clock=lambda: now[0])
    c.get_text(httpserver.url_for("/a"))
    now[0] += 0.5
    c.get_text(httpserver.url_for("/b"))
    c.get_text(httpserver.url_for("/a"))
    assert sleeps == [1.0, 1.5]


def test_retry_after_parsing():
    assert retry_after_seconds("12", 0.0) == 12.0
    assert retry_after_seconds(None, 0.0) is None and retry_after_seconds("soon", 0.0) is None
    date = email.utils.formatdate(1_000_030.0, usegmt=True)
    assert retry_after_seconds(date, 1_000_000.0) == pytest.approx(30.0)


def test_origin_records_what_was_read_so_a_rerun_is_explicit(httpserver, tmp_path):
    """ETag where the server sends one, else a digest of the body; a rerun from the cache reads the
    same (same digest); a changed page changes it (issue 27 item 1)."""
    httpserver.expect_request("/a").respond_with_data("A", headers={"ETag": '"v1"'})
    httpserver.expect_request("/b").respond_with_data("B")
    first = client(tmp_path, [])
    first.get_text(httpserver.url_for("/a"))
    first.get_text(httpserver.url_for("/b"))
    origin = first.origin()
    assert origin["responses"] == 2 and origin["identified_by_server"] == 1
    again = client(tmp_path, [])  # the same cache: nothing fetched, the same input
    again.get_text(httpserver.url_for("/a"))
    again.get_text(httpserver.url_for("/b"))
    assert again.stats["requests"] == 0 and again.origin() == origin
    httpserver.clear()
    httpserver.expect_request("/a").respond_with_data("A", headers={"ETag": '"v1"'})
    httpserver.expect_request("/b").respond_with_data("B, edited")
    fresh = client(tmp_path / "other", [])
    fresh.get_text(httpserver.url_for("/a"))
    fresh.get_text(httpserver.url_for("/b"))
    assert fresh.origin()["content_digest"] != origin["content_digest"]
