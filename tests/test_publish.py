from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from pipeline.io import write_json
from pipeline.publish import PublishConfig, PublishError, format_plan, publish, publish_plan


@pytest.fixture
def curated(tmp_path):
    folder = tmp_path / "curated"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "train-00000-of-00001.parquet").write_bytes(b"x" * 123)
    (folder / "README.md").write_text("---\nlicense: other\n---\n# card\n")
    (folder / ".hidden.tmp").write_text("not uploaded")
    (folder / ".data-retired").mkdir()  # left by an interrupted build
    (folder / ".data-retired" / "train-00000-of-00002.parquet").write_bytes(b"old")
    (folder / "rejects.jsonl").write_text("{}\n")  # the build's bookkeeping, not the dataset
    write_json(folder / "stats.json", {"unit": "problems", "read": 1, "kept": 1, "rejected": 0})
    write_json(folder / "settings.json", {"name": "MicroCoder-Dataset", "version": "0.3.0"})
    return folder


@dataclass
class FakeApi:
    tags: list[str] = field(default_factory=list)
    calls: list[tuple] = field(default_factory=list)

    def create_repo(self, repo_id, **kw):
        self.calls.append(("create_repo", repo_id, kw))

    def list_repo_refs(self, repo_id, **kw):
        return SimpleNamespace(tags=[SimpleNamespace(name=t) for t in self.tags])

    def upload_folder(self, **kw):
        self.calls.append(("upload_folder", kw))
        return SimpleNamespace(oid="abc123", commit_url="https://hub/commit/abc123")

    def create_tag(self, repo_id, **kw):
        self.calls.append(("create_tag", repo_id, kw))


def test_plan_lists_exactly_what_would_be_uploaded(curated):
    plan = publish_plan(PublishConfig(repo_id="me/microcoder"), curated)
    assert plan["tag"] == "v0.3.0" and plan["repo_type"] == "dataset" and plan["private"] is True
    assert [f["path"] for f in plan["files"]] == ["README.md", "data/train-00000-of-00001.parquet", "settings.json", "stats.json"]
    assert plan["files"][1]["bytes"] == 123
    assert plan["total_bytes"] == sum((curated / f["path"]).stat().st_size for f in plan["files"])
    text = format_plan(plan)
    assert "me/microcoder (dataset, private)" in text and "tag v0.3.0" in text and "123  data/train" in text


def test_plan_errors(curated, tmp_path):
    with pytest.raises(PublishError, match="owner/name"):
        publish_plan(PublishConfig(repo_id="nope"), curated)
    with pytest.raises(PublishError, match="run `microcoder build` first"):
        publish_plan(PublishConfig(repo_id="me/x"), tmp_path / "missing")


def test_publish_creates_uploads_and_tags(curated):
    api = FakeApi()
    result = publish(PublishConfig(repo_id="me/microcoder", private=False), curated, api=api)
    assert [c[0] for c in api.calls] == ["create_repo", "upload_folder", "create_tag"]
    assert api.calls[0][2] == {"repo_type": "dataset", "private": False, "exist_ok": True}
    assert api.calls[1][1]["folder_path"] == str(curated) and api.calls[1][1]["repo_type"] == "dataset"
    assert api.calls[2][2]["tag"] == "v0.3.0" and api.calls[2][2]["revision"] == "abc123"
    assert result["commit"] == "abc123"
    # What upload_folder sends is exactly the plan: the Hub client's own filter over every file.
    from huggingface_hub.utils import filter_repo_objects

    every = [p.relative_to(curated).as_posix() for p in curated.rglob("*") if p.is_file()]
    sent = sorted(filter_repo_objects(every, allow_patterns=api.calls[1][1]["allow_patterns"]))
    assert sent == [f["path"] for f in result["files"]] == ["README.md", "data/train-00000-of-00001.parquet",
                                                           "settings.json", "stats.json"]


def test_publish_refuses_an_existing_version(curated):
    api = FakeApi(tags=["v0.3.0"])
    with pytest.raises(PublishError, match="bump build.version"):
        publish(PublishConfig(repo_id="me/microcoder"), curated, api=api)
    assert [c[0] for c in api.calls] == ["create_repo"]  # nothing uploaded


def test_missing_token_and_unreachable_hub(curated, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(PublishError, match="HF_TOKEN is not set"):
        publish(PublishConfig(repo_id="me/microcoder"), curated)
    monkeypatch.setenv("HF_TOKEN", "hf_secret_value")
    with pytest.raises(PublishError, match="cannot reach the Hub at http://127.0.0.1:9") as err:
        publish(PublishConfig(repo_id="me/microcoder", endpoint="http://127.0.0.1:9"), curated)
    assert "hf_secret_value" not in str(err.value)


def test_only_hub_and_network_errors_become_publish_errors(curated):
    import httpx

    class Failing(FakeApi):
        def __init__(self, error):
            super().__init__()
            self.error = error

        def upload_folder(self, **kw):
            raise self.error

    request = httpx.Request("POST", "https://hub/api")
    denied = httpx.HTTPStatusError("forbidden", request=request, response=httpx.Response(403, request=request))
    with pytest.raises(PublishError, match="rejected the token in HF_TOKEN"):
        publish(PublishConfig(repo_id="me/x"), curated, api=Failing(denied))
    with pytest.raises(PublishError, match="cannot reach the Hub"):
        publish(PublishConfig(repo_id="me/x"), curated, api=Failing(httpx.ConnectError("refused", request=request)))
    # A local problem is not disguised as a network one.
    with pytest.raises(PermissionError):
        publish(PublishConfig(repo_id="me/x"), curated, api=Failing(PermissionError("data/train-0.parquet")))


def test_publish_command(curated, tmp_path, monkeypatch):
    from pipeline.cli import app

    monkeypatch.delenv("HF_TOKEN", raising=False)
    params = tmp_path / "params.yaml"
    params.write_text("publish:\n  repo_id: me/microcoder\n")
    runner = CliRunner()
    r = runner.invoke(app, ["publish", "--dataset-dir", str(curated), "--params", str(params), "--dry-run"])
    assert r.exit_code == 0, r.output
    assert "dry run: nothing is uploaded" in r.output and "data/train-00000-of-00001.parquet" in r.output
    r = runner.invoke(app, ["publish", "--dataset-dir", str(curated), "--params", str(params)])
    assert r.exit_code == 0 and "disabled" in r.output
    r = runner.invoke(app, ["publish", "--dataset-dir", str(curated), "--params", str(params), "--set", "enabled=true"])
    assert r.exit_code == 2 and "publish: error: HF_TOKEN is not set" in r.output and "Traceback" not in r.output
    # The contract's error path: a bad --set, a missing build, one line and exit status 2.
    r = runner.invoke(app, ["publish", "--dataset-dir", str(curated), "--params", str(params), "--set", "nope=1"])
    assert r.exit_code == 2 and "unknown publish params ['nope']; valid: [" in r.output
    r = runner.invoke(app, ["publish", "--dataset-dir", str(tmp_path / "absent"), "--params", str(params), "--dry-run"])
    assert r.exit_code == 2 and "built dataset folder" in r.output and "does not exist" in r.output and len(r.output.strip().splitlines()) == 1
    (tmp_path / "not-built").mkdir()
    r = runner.invoke(app, ["publish", "--dataset-dir", str(tmp_path / "not-built"), "--params", str(params), "--dry-run"])
    assert r.exit_code == 2 and "run `microcoder build` first" in r.output
    r = runner.invoke(app, ["publish", "--help"])
    assert all(f in r.output for f in ("repo_id", "tag_prefix", "token_env", "endpoint"))
