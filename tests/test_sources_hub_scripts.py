"""Hub repos that still hold a loading script (codeparrot/apps' apps.py, BAAI/TACO's TACO.py): the
installed `datasets` refuses them even with data_files. The refusal is taken from the real library
on a local folder with a script; the Hub itself is not reachable here, so what load_rows then asks
`datasets` for is checked with a stand-in that refuses the same way."""

from __future__ import annotations

import datasets
import pytest

from microcoder.pipeline.sources import build_options
from microcoder.pipeline.sources.base import SourceError
from microcoder.pipeline.sources.hub import PARQUET_REVISION, hf_paths, load_rows, refused_script


@pytest.fixture(scope="module")
def script_refusal(tmp_path_factory) -> Exception:
    """What the installed datasets raises for a repo with a loading script, data_files or not."""
    repo = tmp_path_factory.mktemp("hub") / "apps"
    repo.mkdir()
    (repo / "apps.py").write_text("import datasets\n")
    (repo / "train.jsonl").write_text('{"problem_id": 0}\n')
    errors = []
    for kwargs in ({}, {"data_files": str(repo / "train.jsonl")}):
        try:
            datasets.load_dataset(str(repo), split="train", **kwargs)
        except Exception as e:  # noqa: BLE001 - the refusal is what this fixture is for
            errors.append(e)
    if len(errors) != 2:
        pytest.skip(f"datasets {datasets.__version__} still runs loading scripts: nothing to work around")
    assert all(refused_script(e) for e in errors), errors
    return errors[1]


class FakeHub:
    """`datasets.load_dataset` for a repo with a script: refused unless the parquet branch or hf:// files."""

    def __init__(self, refusal: Exception, parquet_ok: bool = True):
        self.refusal, self.parquet_ok, self.calls = refusal, parquet_ok, []

    def __call__(self, path, **kwargs):
        self.calls.append((path, kwargs))
        if path in ("parquet", "json"):
            return [{"rows from": kwargs["data_files"]}]
        if kwargs.get("revision") == PARQUET_REVISION and self.parquet_ok:
            return [{"rows from": PARQUET_REVISION}]
        raise self.refusal


def opts(**kw):
    return build_options("hub", {"adapter": "apps", **kw})


def test_a_script_repo_is_read_from_the_parquet_conversion(monkeypatch, script_refusal):
    hub = FakeHub(script_refusal)
    monkeypatch.setattr(datasets, "load_dataset", hub)
    assert list(load_rows(opts(split="test"))) == [{"rows from": PARQUET_REVISION}]
    (first, kw1), (second, kw2) = hub.calls
    assert first == second == "codeparrot/apps" and "revision" not in kw1
    assert kw2 == {**kw1, "revision": PARQUET_REVISION} and kw2["split"] == "test"


def test_the_revision_param_goes_straight_to_the_parquet_branch(monkeypatch, script_refusal):
    hub = FakeHub(script_refusal)
    monkeypatch.setattr(datasets, "load_dataset", hub)
    load_rows(opts(revision=PARQUET_REVISION, config="all"))
    assert hub.calls == [("codeparrot/apps", {"split": "train", "streaming": True, "name": "all",
                                              "revision": PARQUET_REVISION})]


def test_hf_paths_load_with_their_builder(monkeypatch, script_refusal):
    hub = FakeHub(script_refusal)
    monkeypatch.setattr(datasets, "load_dataset", hub)
    files = "hf://datasets/codeparrot/apps@refs%2Fconvert%2Fparquet/all/test/*.parquet"
    assert list(load_rows(opts(data_files=files))) == [{"rows from": files}]
    assert hub.calls[0][0] == "parquet"
    assert hf_paths({"test": [files]}) == [files] and hf_paths(["a.parquet", files]) == []


@pytest.mark.parametrize("options", [
    {"data_files": "train/*.jsonl"},  # data_files do not get past the script
    {"parquet_fallback": False},
    {"revision": PARQUET_REVISION},  # the branch itself failed
])
def test_otherwise_the_error_names_the_fix(monkeypatch, script_refusal, options):
    monkeypatch.setattr(datasets, "load_dataset", FakeHub(script_refusal, parquet_ok=False))
    with pytest.raises(SourceError) as info:
        load_rows(opts(**options))
    text = str(info.value)
    assert "loading script" in text and f"revision: {PARQUET_REVISION}" in text
    assert "hf://datasets/codeparrot/apps@refs%2Fconvert%2Fparquet/" in text


def test_a_failed_fallback_says_both(monkeypatch, script_refusal):
    monkeypatch.setattr(datasets, "load_dataset", FakeHub(script_refusal, parquet_ok=False))
    with pytest.raises(SourceError, match="automatic refs/convert/parquet load failed too"):
        load_rows(opts())


def test_other_errors_are_not_mistaken_for_a_script(monkeypatch):
    def offline(path, **kwargs):
        raise ConnectionError("Couldn't reach 'codeparrot/apps' on the Hub (LocalEntryNotFoundError)")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(SourceError) as info:
        load_rows(opts())
    assert "loading script" not in str(info.value) and "Couldn't reach" in str(info.value)
