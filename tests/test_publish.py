from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from hub_server import HubServer
from typer.testing import CliRunner

from microcoder.pipeline.io import write_json
from microcoder.pipeline.publish import (
    PublishConfig,
    PublishError,
    format_plan,
    preview,
    publish,
    publish_plan,
    stale_files,
)


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


def test_plan_lists_exactly_what_would_be_uploaded(curated):
    plan = publish_plan(PublishConfig(repo_id="me/microcoder"), curated)
    assert plan["tag"] == "v0.3.0" and plan["repo_type"] == "dataset" and plan["private"] is True
    assert [f["path"] for f in plan["files"]] == ["README.md", "data/train-00000-of-00001.parquet", "settings.json",
                                                  "stats.json", "version.json"]
    assert plan["files"][1]["bytes"] == 123
    record = json.loads(plan["generated"]["version.json"])  # made from stats.json, not a file of the build
    assert record == {"version": "0.3.0", "rows": 1, "sources": {}, "thresholds": {}}
    assert plan["total_bytes"] == sum((curated / f["path"]).stat().st_size for f in plan["files"][:4]) + \
        len(plan["generated"]["version.json"].encode())
    text = format_plan(plan)
    assert "me/microcoder (dataset, private)" in text and "tag v0.3.0" in text and "123  data/train" in text


def test_plan_errors(curated, tmp_path):
    with pytest.raises(PublishError, match="owner/name"):
        publish_plan(PublishConfig(repo_id="nope"), curated)
    with pytest.raises(PublishError, match="run `microcoder build` first"):
        publish_plan(PublishConfig(repo_id="me/x"), tmp_path / "missing")


CARD_BODY = ("# card\n\n## Usage\n\nload it by tag\n\n## Versions\n\nNo earlier version's record was available when "
             "this one was built.\n\n## Citation\n\n```bibtex\n@misc{x}\n```\n")


def release(folder, version: str, shards: list[list[int]], sources: dict[str, int] | None = None,
            band: tuple[float, float] = (0.0, 0.75)):
    """A built release as `microcoder build` lays it out: shards, a card whose dataset_info states
    the split size (what `datasets` verifies) with the build's Versions section, settings, stats
    (rows per source) and provenance (the filter's pass-rate band)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if folder.exists():
        shutil.rmtree(folder)
    (folder / "data").mkdir(parents=True)
    for i, ids in enumerate(shards):
        table = pa.table({"id": [f"p{n}" for n in ids], "version": [version] * len(ids)})
        pq.write_table(table, folder / "data" / f"train-{i:05d}-of-{len(shards):05d}.parquet")
    rows = sum(len(ids) for ids in shards)
    front = {"license": "mit", "dataset_info": {"features": [{"name": "id", "dtype": "string"},
                                                             {"name": "version", "dtype": "string"}],
                                                "splits": [{"name": "train", "num_bytes": 16 * rows, "num_examples": rows}]},
             "configs": [{"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*"}]}]}
    (folder / "README.md").write_text("---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n" + CARD_BODY)
    (folder / "rejects.jsonl").write_text("{}\n")
    write_json(folder / "stats.json", {"unit": "problems", "read": rows, "kept": rows, "rejected": 0,
                                       "by_source": sources or {"seed": rows}})
    write_json(folder / "settings.json", {"name": "MicroCoder-Dataset", "version": version})
    write_json(folder / "provenance.json", {"settings": {"filter": {"min_pass_rate": band[0], "max_pass_rate": band[1]}}})
    return folder


@pytest.fixture
def hub(monkeypatch):
    with HubServer(token="hf_test_token") as server:
        monkeypatch.setenv("HF_TOKEN", "hf_test_token")
        yield server


def published_files(folder) -> dict[str, bytes]:
    """The release's files as the plan lists them (the card as built: publish re-renders its Versions section)."""
    plan = publish_plan(PublishConfig(repo_id="me/x"), folder)
    return {f["path"]: plan["generated"][f["path"]].encode() if f["path"] in plan["generated"] else
            (folder / f["path"]).read_bytes() for f in plan["files"]}


def without_card(files: dict[str, bytes]) -> dict[str, bytes]:
    return {p: c for p, c in files.items() if p != "README.md"}


def test_a_second_version_replaces_the_first_on_main_and_each_tag_keeps_its_own(hub, tmp_path):
    cfg = PublishConfig(repo_id="me/microcoder", endpoint=hub.url, private=False)
    folder = tmp_path / "curated"
    first = published_files(release(folder, "0.1.0", [[0, 1, 2, 3], [4, 5]]))
    r1 = publish(cfg, folder)
    assert r1["tag"] == "v0.1.0" and r1["deleted"] == [] and r1["parent"] is None
    second = published_files(release(folder, "0.2.0", [[6, 7, 8]]))
    r2 = publish(cfg, folder)
    # One commit: the new shard in, the old version's two shards out (not left next to the new one).
    assert r2["deleted"] == ["data/train-00000-of-00002.parquet", "data/train-00001-of-00002.parquet"]
    assert r2["parent"] == r1["commit"] and len(hub.repos["me/microcoder"].commits) == 2
    assert r2["tag"] == "v0.2.0" and hub.repos["me/microcoder"].tags == {"v0.1.0": r1["commit"], "v0.2.0": r2["commit"]}
    assert without_card(hub.files("me/microcoder", "main")) == without_card(second)
    assert without_card(hub.files("me/microcoder", "v0.2.0")) == without_card(second)
    assert without_card(hub.files("me/microcoder", "v0.1.0")) == without_card(first)
    assert "rejects.jsonl" not in second and "data/train-00000-of-00002.parquet" not in second
    assert hub.repos["me/microcoder"].messages[r2["commit"]] == "v0.2.0: dataset version 0.2.0"


@pytest.fixture
def datasets_on_hub(hub, tmp_path, monkeypatch):
    """`datasets.load_dataset("owner/name", revision=...)` reading from the local Hub (HF_ENDPOINT as
    huggingface_hub and datasets read it at import), with every cache under tmp_path."""
    import datasets.config
    import huggingface_hub.constants as hub_constants
    from huggingface_hub import HfFileSystem

    monkeypatch.setattr(hub_constants, "ENDPOINT", hub.url)
    monkeypatch.setattr(hub_constants, "HUGGINGFACE_CO_URL_TEMPLATE", hub.url + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setattr(datasets.config, "HF_ENDPOINT", hub.url)
    monkeypatch.setattr(datasets.config, "HUB_DATASETS_URL", hub.url + "/datasets/{repo_id}/resolve/{revision}/{path}")
    monkeypatch.setattr(datasets.config, "HF_HUB_CACHE", str(tmp_path / "hf-cache"), raising=False)
    HfFileSystem.clear_instance_cache()  # an instance made for another endpoint would be reused
    yield lambda revision: datasets.load_dataset("me/microcoder", revision=revision, split="train",
                                                 cache_dir=str(tmp_path / "ds-cache"))
    HfFileSystem.clear_instance_cache()


def test_each_version_loads_by_revision_with_datasets(hub, datasets_on_hub, tmp_path):
    cfg = PublishConfig(repo_id="me/microcoder", endpoint=hub.url)
    folder = tmp_path / "curated"
    release(folder, "0.1.0", [[0, 1, 2, 3], [4, 5]])
    publish(cfg, folder)
    release(folder, "0.2.0", [[6, 7, 8]])
    publish(cfg, folder)
    for revision, ids in (("v0.1.0", [f"p{n}" for n in range(6)]), ("v0.2.0", ["p6", "p7", "p8"]),
                          ("main", ["p6", "p7", "p8"])):
        assert sorted(datasets_on_hub(revision)["id"]) == ids, revision


def test_without_the_deletions_main_would_not_load(hub, datasets_on_hub, tmp_path):
    """The failure the same-commit deletions prevent: v0.2.0's files added over v0.1.0's shards."""
    from datasets.exceptions import NonMatchingSplitsSizesError
    from huggingface_hub import CommitOperationAdd, HfApi

    folder = tmp_path / "curated"
    release(folder, "0.1.0", [[0, 1, 2, 3], [4, 5]])
    publish(PublishConfig(repo_id="me/microcoder", endpoint=hub.url), folder)
    release(folder, "0.2.0", [[6, 7, 8]])
    adds = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=content) for p, content in published_files(folder).items()]
    HfApi(endpoint=hub.url, token="hf_test_token").create_commit(
        "me/microcoder", repo_type="dataset", operations=adds, commit_message="adds only")
    assert len([p for p in hub.files("me/microcoder") if p.startswith("data/")]) == 3
    with pytest.raises(NonMatchingSplitsSizesError):
        datasets_on_hub("main")


def test_each_version_downloads_by_revision_through_the_hub_client(hub, tmp_path):
    """The same read-back with huggingface_hub's own download (snapshot_download per tag)."""
    import datasets
    from huggingface_hub import snapshot_download

    folder = tmp_path / "curated"
    release(folder, "0.1.0", [[0, 1], [2]])
    publish(PublishConfig(repo_id="me/microcoder", endpoint=hub.url), folder)
    release(folder, "0.2.0", [[3]])
    publish(PublishConfig(repo_id="me/microcoder", endpoint=hub.url), folder)
    for revision, ids in (("v0.1.0", ["p0", "p1", "p2"]), ("v0.2.0", ["p3"])):
        local = snapshot_download("me/microcoder", repo_type="dataset", revision=revision, endpoint=hub.url,
                                  token="hf_test_token", cache_dir=tmp_path / "hf-cache",
                                  local_dir=tmp_path / "download" / revision)
        downloaded = {p.relative_to(local).as_posix() for p in Path(local).rglob("*")
                      if p.is_file() and ".cache" not in p.parts}
        assert downloaded == set(hub.files("me/microcoder", revision)), revision
        ds = datasets.load_dataset(local, split="train", cache_dir=str(tmp_path / "ds-cache"))
        assert sorted(ds["id"]) == ids, revision


def versions_rows(readme: bytes) -> list[str]:
    """The rows of the card's Versions table (after the header and its rule)."""
    section = readme.decode().split("\n## Versions\n\n")[1].split("\n\n")[0]
    return section.splitlines()[2:]


def outside_versions(readme: bytes | str) -> str:
    text = readme.decode() if isinstance(readme, bytes) else readme
    head, rest = text.split("\n## Versions\n", 1)
    return head + rest[rest.index("\n## "):]


def load_cell(tag: str) -> str:
    return f'`load_dataset("me/microcoder", "default", split="train", revision="{tag}")`'


THREE_VERSIONS = [  # version, shards, rows per source, pass-rate band
    ("0.1.0", [[0, 1, 2, 3], [4, 5]], {"seed": 6}, (0.0, 0.75)),
    ("0.2.0", [[6, 7, 8]], {"seed": 2, "humaneval": 1}, (0.1, 0.9)),
    ("0.3.0", [[9, 10, 11, 12]], {"humaneval": 4}, (0.1, 0.9)),
]
THREE_ROWS = [
    f"| v0.1.0 | 6 | seed | first version | {load_cell('v0.1.0')} |",
    "| v0.2.0 | 3 | humaneval, seed | rows 6 -> 3; source humaneval added; seed 6 -> 2; min_pass_rate 0.0 -> 0.1; "
    f"max_pass_rate 0.75 -> 0.9 | {load_cell('v0.2.0')} |",
    f"| v0.3.0 | 4 | humaneval | rows 3 -> 4; source seed dropped; humaneval 1 -> 4 | {load_cell('v0.3.0')} |",
]


def test_the_card_lists_every_version_what_changed_and_how_to_load_each(hub, tmp_path):
    cfg = PublishConfig(repo_id="me/microcoder", endpoint=hub.url, private=False)
    folder = tmp_path / "curated"
    for version, shards, sources, band in THREE_VERSIONS:
        release(folder, version, shards, sources, band)
        result = publish(cfg, folder)
        assert [v["version"] for v in result["versions"]] == [v for v, *_ in THREE_VERSIONS if v <= version]
        assert "version.json" in {f["path"] for f in result["files"]}
    main = hub.files("me/microcoder", "main")
    assert versions_rows(main["README.md"]) == THREE_ROWS
    assert "No earlier version's record" not in main["README.md"].decode()
    assert outside_versions(main["README.md"]) == outside_versions((folder / "README.md").read_text())  # rest as built
    for n, (version, _, sources, band) in enumerate(THREE_VERSIONS):  # each tag: the versions up to it
        at_tag = hub.files("me/microcoder", f"v{version}")
        assert versions_rows(at_tag["README.md"]) == THREE_ROWS[:n + 1], version
        assert json.loads(at_tag["version.json"]) == {
            "version": version, "rows": sum(sources.values()), "sources": sources,
            "thresholds": {"min_pass_rate": band[0], "max_pass_rate": band[1]}}


def hand_push(hub, folder, tag: str, version_json: bytes | None) -> None:
    """A version pushed without our publish (or by an older one): its files and tag, and version.json
    only as given."""
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi(endpoint=hub.url, token="hf_test_token")
    api.create_repo("me/microcoder", repo_type="dataset", exist_ok=True)
    files = {p: c for p, c in published_files(folder).items() if p != "version.json"}
    if version_json is not None:
        files["version.json"] = version_json
    commit = api.create_commit("me/microcoder", repo_type="dataset", commit_message=tag,
                               operations=[CommitOperationAdd(path_in_repo=p, path_or_fileobj=c) for p, c in files.items()])
    api.create_tag("me/microcoder", repo_type="dataset", tag=tag, revision=commit.oid)


def test_tags_without_a_version_record_are_listed_and_do_not_stop_a_publish(hub, tmp_path):
    cfg = PublishConfig(repo_id="me/microcoder", endpoint=hub.url)
    folder = tmp_path / "curated"
    hand_push(hub, release(folder, "0.1.0", [[0, 1]]), "v0.1.0", None)
    hand_push(hub, release(folder, "0.1.5", [[2]]), "v0.1.5", b"not json")
    hand_push(hub, release(folder, "0.0.1", [[3]]), "other-tag", None)  # not a version (no tag_prefix)
    release(folder, "0.2.0", [[4, 5, 6]], {"seed": 3}, (0.1, 0.9))
    result = publish(cfg, folder)
    assert result["tag"] == "v0.2.0" and hub.repos["me/microcoder"].tags["v0.2.0"] == result["commit"]
    assert versions_rows(hub.files("me/microcoder")["README.md"]) == [
        f"| v0.1.0 | no record |  | no record: v0.1.0 has no version.json | {load_cell('v0.1.0')} |",
        f"| v0.1.5 | no record |  | no record: v0.1.5's version.json is not a version record | {load_cell('v0.1.5')} |",
        f"| v0.2.0 | 3 | seed | first version with a record | {load_cell('v0.2.0')} |"]
    assert "no record (v0.1.0 has no version.json)" in format_plan(result)
    release(folder, "0.10.0", [[7, 8]], {"seed": 2}, (0.1, 0.9))  # 0.10.0 sorts after 0.2.0, not before
    publish(cfg, folder)
    rows = versions_rows(hub.files("me/microcoder")["README.md"])
    assert [r.split(" | ")[0] for r in rows] == ["| v0.1.0", "| v0.1.5", "| v0.2.0", "| v0.10.0"]
    assert rows[-1].startswith("| v0.10.0 | 2 | seed | rows 3 -> 2; seed 3 -> 2 |")


def test_a_version_after_one_without_record_is_compared_with_the_last_recorded():
    from microcoder.pipeline.card import versions_section

    old = {"version": "0.1.0", "rows": 5, "sources": {"seed": 5}, "thresholds": {}}
    new = {"version": "0.3.0", "rows": 4, "sources": {"seed": 4}, "thresholds": {}}
    section = versions_section(new, [old, {"version": "0.2.0", "no_record": "v0.2.0 has no version.json"}],
                               repo_id="me/microcoder")
    assert f"| v0.3.0 | 4 | seed | since v0.1.0: rows 5 -> 4; seed 5 -> 4 | {load_cell('v0.3.0')} |" in section


def test_the_dry_run_shows_the_versions_on_the_hub_and_writes_nothing(hub, tmp_path, monkeypatch):
    cfg = PublishConfig(repo_id="me/microcoder", endpoint=hub.url, private=False)
    folder = tmp_path / "curated"
    first = preview(cfg, release(folder, "0.1.0", *THREE_VERSIONS[0][1:]))
    assert [v["version"] for v in first["versions"]] == ["0.1.0"] and "not on the Hub yet" in first["versions_note"]
    for version, shards, sources, band in THREE_VERSIONS[:2]:
        publish(cfg, release(folder, version, shards, sources, band))
    commits = dict(hub.repos["me/microcoder"].commits)
    monkeypatch.delenv("HF_TOKEN")  # a public repo's versions read without a token
    plan = preview(cfg, release(folder, *THREE_VERSIONS[2]))
    assert hub.repos["me/microcoder"].commits == commits and "v0.3.0" not in hub.repos["me/microcoder"].tags
    assert versions_rows(plan["generated"]["README.md"].encode()) == THREE_ROWS and "versions_note" not in plan
    text = format_plan(plan)
    assert "versions: 3, oldest first" in text and "v0.1.0        6 rows, sources seed" in text
    assert "v0.3.0        4 rows, sources humaneval  (this version)" in text
    release(folder, *THREE_VERSIONS[1])
    assert "v0.2.0 is already on the Hub: publish would refuse" in preview(cfg, folder)["versions_note"]
    away = preview(PublishConfig(repo_id="me/microcoder", endpoint="http://127.0.0.1:9"), folder)
    assert "versions" not in away and "not read: cannot reach the Hub" in format_plan(away)


def test_the_dry_run_command_lists_the_versions_found(hub, tmp_path):
    from microcoder.pipeline.cli import app

    folder = tmp_path / "curated"
    publish(PublishConfig(repo_id="me/microcoder", endpoint=hub.url), release(folder, *THREE_VERSIONS[0]))
    release(folder, *THREE_VERSIONS[1])
    params = tmp_path / "params.yaml"
    params.write_text(f"publish:\n  repo_id: me/microcoder\n  endpoint: {hub.url}\n")
    r = CliRunner().invoke(app, ["publish", "--dataset-dir", str(folder), "--params", str(params), "--dry-run"])
    assert r.exit_code == 0, r.output
    assert "versions: 2, oldest first" in r.output and "v0.1.0        6 rows" in r.output
    assert "v0.2.0" not in hub.repos["me/microcoder"].tags


def test_keep_remote_protects_files_a_push_would_delete(hub, tmp_path):
    folder = tmp_path / "curated"
    release(folder, "0.1.0", [[0], [1]])
    publish(PublishConfig(repo_id="me/x", endpoint=hub.url), folder)
    release(folder, "0.2.0", [[2]])
    r = publish(PublishConfig(repo_id="me/x", endpoint=hub.url, keep_remote=[".gitattributes", "data/*-of-00002.parquet"]),
                folder)
    assert r["deleted"] == [] and {"data/train-00000-of-00002.parquet", "data/train-00001-of-00002.parquet",
                                   "data/train-00000-of-00001.parquet"} <= set(hub.files("me/x"))
    assert "  nothing deleted" in format_plan(r)


def test_stale_files_spares_the_release_and_the_kept_patterns():
    plan = {"files": [{"path": "README.md"}, {"path": "data/train-00000-of-00001.parquet"}]}
    remote = [".gitattributes", "README.md", "data/train-00000-of-00002.parquet", "data/train-00001-of-00002.parquet",
              "plots/old.csv"]
    assert stale_files(remote, plan, [".gitattributes"]) == ["data/train-00000-of-00002.parquet",
                                                               "data/train-00001-of-00002.parquet", "plots/old.csv"]


def test_publish_refuses_an_existing_version(hub, curated):
    cfg = PublishConfig(repo_id="me/microcoder", endpoint=hub.url)
    publish(cfg, curated)
    commits = dict(hub.repos["me/microcoder"].commits)
    with pytest.raises(PublishError, match="bump build.version"):
        publish(cfg, curated)
    assert hub.repos["me/microcoder"].commits == commits  # nothing uploaded


def test_the_hub_refusing_the_token_or_a_race_is_one_clear_error(hub, curated, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_wrong_value")
    with pytest.raises(PublishError, match="rejected the token in HF_TOKEN .HTTP 401") as err:
        publish(PublishConfig(repo_id="me/microcoder", endpoint=hub.url), curated)
    assert "hf_wrong_value" not in str(err.value)
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    cfg = PublishConfig(repo_id="me/microcoder", endpoint=hub.url)
    publish(cfg, curated)
    # Another push lands between our look at main and our commit: the Hub refuses ours (parent moved on).
    write_json(curated / "settings.json", {"name": "MicroCoder-Dataset", "version": "0.4.0"})
    from huggingface_hub import HfApi

    real = HfApi(endpoint=hub.url, token="hf_test_token")

    class Racing:
        def __getattr__(self, name):
            return getattr(real, name)

        def create_commit(self, **kw):
            real.upload_file(path_or_fileobj=b"other", path_in_repo="other.txt", repo_id="me/microcoder",
                             repo_type="dataset")
            return real.create_commit(**kw)

    with pytest.raises(PublishError, match="changed on the Hub while publishing"):
        publish(cfg, curated, api=Racing())
    assert "v0.4.0" not in hub.repos["me/microcoder"].tags


def test_missing_token_and_unreachable_hub(curated, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(PublishError, match="HF_TOKEN is not set"):
        publish(PublishConfig(repo_id="me/microcoder"), curated)
    monkeypatch.setenv("HF_TOKEN", "hf_secret_value")
    with pytest.raises(PublishError, match="cannot reach the Hub at http://127.0.0.1:9") as err:
        publish(PublishConfig(repo_id="me/microcoder", endpoint="http://127.0.0.1:9"), curated)
    assert "hf_secret_value" not in str(err.value)


def test_a_local_problem_is_not_disguised_as_a_network_one(hub, curated):
    from huggingface_hub import HfApi

    real = HfApi(endpoint=hub.url, token="hf_test_token")

    class Unreadable:
        def __getattr__(self, name):
            return getattr(real, name)

        def create_commit(self, **kw):
            raise PermissionError("data/train-00000-of-00001.parquet")

    with pytest.raises(PermissionError):
        publish(PublishConfig(repo_id="me/x", endpoint=hub.url), curated, api=Unreadable())


def test_publish_command(curated, tmp_path, monkeypatch):
    from microcoder.pipeline.cli import app

    monkeypatch.delenv("HF_TOKEN", raising=False)
    params = tmp_path / "params.yaml"
    params.write_text("publish:\n  repo_id: me/microcoder\n  endpoint: http://127.0.0.1:9\n")  # never the real Hub
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


def test_the_card_at_the_published_tag_names_its_repository_and_address(hub, tmp_path):
    """A card built without publish.repo_id (placeholders in usage, configs and citation) reads, at
    its tag on the Hub, the repository it was pushed to and that repository's address."""
    from huggingface_hub import hf_hub_download

    from microcoder.pipeline.build import Build, BuildConfig
    from microcoder.pipeline.io import write_problems
    from microcoder.pipeline.schema import Problem, TestCase

    problem = Problem(id="sum", source="test", title="Sum", statement="Print a + b.", style="stdio",
                      tests=[TestCase("1 2\n", "3\n")], time_limit_s=2.0, license="MIT")
    write_problems(tmp_path / "filtered.parquet", [problem])
    Build().run(BuildConfig(version="0.4.0"), tmp_path / "filtered.parquet", tmp_path / "curated",
                data_dir=tmp_path / "data", params_path=tmp_path / "params.yaml")
    built = (tmp_path / "curated" / "README.md").read_text()
    assert '<owner>/<name>' in built and "<the dataset's address>" in built  # what the build could know
    publish(PublishConfig(repo_id="me/microcoder", endpoint=hub.url), tmp_path / "curated")
    card = Path(hf_hub_download("me/microcoder", "README.md", repo_type="dataset", revision="v0.4.0",
                                endpoint=hub.url, token="hf_test_token", cache_dir=tmp_path / "hf-cache")).read_text()
    assert "<owner>/<name>" not in card and "<the dataset's address>" not in card
    assert card.count('load_dataset("me/microcoder", ') == built.count('load_dataset("<owner>/<name>", ') == 3
    assert 'load_dataset("me/microcoder", "default", split="train", revision="v0.4.0")' in card  # usage
    assert 'load_dataset("me/microcoder", "unsolved", split="train", revision="v0.4.0")' in card  # configs
    assert f"\\url{{{hub.url}/datasets/me/microcoder}}" in card  # the citation
