"""A re-banded release is a new version (issue 38 item 4): the next patch version by default or the
one given, and publish takes it next to the release it came from."""

from __future__ import annotations

import json

import pytest
from hub_server import HubServer
from test_reband import filter_and_build, project  # noqa: F401 - the fixture, used by name
from typer.testing import CliRunner

from microcoder.pipeline.cli import app
from microcoder.pipeline.difficulty.band import Band
from microcoder.pipeline.inputs import InputError
from microcoder.pipeline.publish import PublishConfig, build_version, publish
from microcoder.pipeline.reband import next_version, reband


def test_next_version():
    assert next_version("1.0.0") == "1.0.1" and next_version("0.9.19") == "0.9.20"
    with pytest.raises(InputError, match="--version"):
        next_version("2024-06")


def test_a_rebanded_release_is_the_next_patch_version_or_the_given_one(project):  # noqa: F811
    tmp, params = project
    filter_and_build(tmp, params, (0.0, 0.75), "a")
    source = tmp / "a" / "curated"
    assert reband(source, tmp / "next", Band(0.1, 0.9))["version"] == "1.0.1"
    assert build_version(tmp / "next") == "1.0.1"
    assert "# MicroCoder-Dataset v1.0.1" in (tmp / "next" / "README.md").read_text()
    provenance = json.loads((tmp / "next" / "provenance.json").read_text())
    assert provenance["settings"]["filter"]["rebanded_from"]["version"] == "1.0.0"
    assert reband(source, tmp / "given", Band(0.1, 0.9), version="1.1.0")["version"] == "1.1.0"
    with pytest.raises(InputError, match="own version"):
        reband(source, tmp / "same", Band(0.1, 0.9), version="1.0.0")
    with pytest.raises(InputError, match="not a version"):
        reband(source, tmp / "bad", Band(0.1, 0.9), version="1 0")


def test_publish_takes_the_rebanded_release_after_its_source(project, monkeypatch):  # noqa: F811
    tmp, params = project
    filter_and_build(tmp, params, (0.0, 0.75), "a")
    runner = CliRunner()
    r = runner.invoke(app, ["filter", "--band", "0.1,0.9", "--release", str(tmp / "a" / "curated"),
                            "--out", str(tmp / "cli"), "--version", "1.2.0", "--params", str(params)])
    assert r.exit_code == 0 and "(version 1.2.0)" in r.output, r.output
    r = runner.invoke(app, ["filter", "--band", "0.1,0.9", "--version", "1.2.0", "--params", str(params)])
    assert r.exit_code == 2 and "--release" in r.output
    reband(tmp / "a" / "curated", tmp / "patch", Band(0.1, 0.9))
    with HubServer(token="hf_test_token") as hub:
        monkeypatch.setenv("HF_TOKEN", "hf_test_token")
        cfg = PublishConfig(repo_id="me/microcoder", endpoint=hub.url)
        tags = [publish(cfg, folder)["tag"] for folder in (tmp / "a" / "curated", tmp / "patch", tmp / "cli")]
        assert tags == ["v1.0.0", "v1.0.1", "v1.2.0"]
        assert set(hub.repos["me/microcoder"].tags) == set(tags)
