"""The publish stage: push a built dataset version (`microcoder build`'s folder) to the Hugging
Face Hub as a dataset repo, tagged with the build's version. Off unless `publish.enabled`.

One push is one commit on `main` that makes the repo exactly the release: every planned file
added, and every file a previous version left that this one does not have (old shards above all)
deleted in the same commit, so `main` never holds two versions' shards at once (three shards from
v0.1.0's two and v0.2.0's one make `load_dataset` fail with NonMatchingSplitsSizesError). The
commit names its parent, so a push racing another is refused rather than merged; the tag
(`tag_prefix` + version) then points at that commit, so `load_dataset(repo, revision=tag)` reads
that version for good.

Each push also uploads `version.json` (this version's rows, sources and pass-rate thresholds,
`card.release_record`) and re-renders the card's Versions section from every earlier tag's
version.json on the Hub (the only place the earlier versions are known: `data/curated` is rebuilt
from scratch each run), so the card on `main` and at each tag lists the versions up to it, what
changed between them and how to load each. A tag without version.json is listed as "no record".
The card also names the repository and its address wherever it shows them (usage, configs,
citation), which a build without `publish.repo_id` could only leave as placeholders. `preview` (the
dry run) reads the same versions without writing anything. See docs/publish.md.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from microcoder.pipeline.card import (
    dataset_address,
    release_record,
    replace_versions_section,
    versions_section,
    with_repository,
)
from microcoder.pipeline.inputs import InputError
from microcoder.pipeline.stage import Command

NOT_PUBLISHED = ("rejects.jsonl", "headline.json")  # build bookkeeping (DVC metrics), not part of the dataset
VERSION_FILE = "version.json"  # this version's record, read back from its tag by later publishes
CARD = "README.md"


@dataclass
class PublishConfig:
    enabled: bool = field(default=False, metadata={"help": "Upload when the stage runs (off: a no-op, --dry-run still works)."})
    repo_id: str = field(default="", metadata={"help": "Dataset repo on the Hub, owner/name."})
    private: bool = field(default=True, metadata={"help": "Create the repo private."})
    tag_prefix: str = field(default="v", metadata={"help": "The tag is tag_prefix + the build version (e.g. v0.1.0)."})
    token_env: str = field(default="HF_TOKEN", metadata={"help": "Environment variable holding the write token."})
    endpoint: str | None = field(default=None, metadata={"help": "Hub endpoint (null = huggingface.co or HF_ENDPOINT)."})
    keep_remote: list[str] = field(default_factory=lambda: [".gitattributes"], metadata={
        "help": "Files on the Hub a push never deletes (glob patterns); every other file not in the release is removed."})


class Publish(Command):
    name = "publish"
    config = PublishConfig


class PublishError(InputError):
    """A publish the user has to fix: no build, a bad repo id, a missing or rejected token, the Hub
    unreachable or refusing (one line, exit status 2)."""


def build_version(folder: Path) -> str:
    """The version the build recorded in its settings.json."""
    settings_path = folder / "settings.json"
    if not settings_path.is_file():
        raise PublishError(f"{folder} has no settings.json: run `microcoder build` first")
    try:
        version = json.loads(settings_path.read_text()).get("version")
    except (ValueError, AttributeError) as e:
        raise PublishError(f"{settings_path}: not a build's settings ({e})") from e
    if not version:
        raise PublishError(f"{settings_path} has no version")
    return str(version)


def release_version_record(folder: Path, version: str) -> dict[str, Any]:
    """The release's version record: rows and sources from its stats.json, pass-rate thresholds from
    the filter settings its provenance.json records."""
    stats_path, provenance_path = folder / "stats.json", folder / "provenance.json"
    try:
        stats = json.loads(stats_path.read_text())
        settings = json.loads(provenance_path.read_text()).get("settings") or {} if provenance_path.is_file() else {}
    except FileNotFoundError as e:
        raise PublishError(f"{folder} has no stats.json: run `microcoder build` first") from e
    except (ValueError, AttributeError) as e:
        raise PublishError(f"{folder}: stats.json or provenance.json is not a build's ({e})") from e
    if not isinstance(stats, dict) or "kept" not in stats:
        raise PublishError(f"{stats_path} has no 'kept' count: not a build's stats")
    return release_record(version, stats, settings)


def publish_plan(cfg: PublishConfig, curated_dir: str | Path) -> dict[str, Any]:
    """Exactly what an upload would send: repo, tag, and every file with its size (version.json
    generated from the release's figures; the card's Versions section is re-rendered once the Hub's
    tags are read, see `with_versions`)."""
    folder = Path(curated_dir)
    version = build_version(folder)
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", cfg.repo_id or ""):
        raise PublishError(f"publish.repo_id must be 'owner/name', got {cfg.repo_id!r}")
    record = release_version_record(folder, version)
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name not in NOT_PUBLISHED
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    listed = [{"path": p.relative_to(folder).as_posix(), "bytes": p.stat().st_size} for p in files]
    plan = {"repo_id": cfg.repo_id, "repo_type": "dataset", "private": cfg.private, "revision": "main",
            "tag": f"{cfg.tag_prefix}{version}", "version": version, "folder": str(folder),
            "files": listed, "total_bytes": 0, "keep_remote": list(cfg.keep_remote), "record": record,
            "generated": {}}
    return _with_generated(plan, {VERSION_FILE: json.dumps(record, indent=2, sort_keys=True) + "\n"})


def _with_generated(plan: dict[str, Any], generated: dict[str, str]) -> dict[str, Any]:
    """The plan with these files' contents made here (replacing any local file of that name)."""
    contents = {**plan["generated"], **generated}
    files = [f for f in plan["files"] if f["path"] not in generated]
    files += [{"path": path, "bytes": len(text.encode())} for path, text in generated.items()]
    files.sort(key=lambda f: f["path"])
    return {**plan, "files": files, "total_bytes": sum(f["bytes"] for f in files), "generated": contents}


def _version_key(version: str) -> tuple:
    return tuple(int(n) for n in re.findall(r"\d+", version)), version


def hub_versions(api, cfg: PublishConfig, tags: list[str], current_tag: str) -> list[dict[str, Any]]:
    """The records of the versions already on the Hub, oldest first: every tag with the prefix (but
    this one), its version.json read at that tag, or `no_record` saying why there is none."""
    earlier = sorted((t for t in tags if t.startswith(cfg.tag_prefix) and t != current_tag),
                     key=lambda t: _version_key(t[len(cfg.tag_prefix):]))
    with tempfile.TemporaryDirectory(prefix="microcoder-versions-") as cache:  # read once, not kept
        return [_tag_record(api, cfg, tag, cache) for tag in earlier]


def _tag_record(api, cfg: PublishConfig, tag: str, cache: str) -> dict[str, Any]:
    from huggingface_hub.errors import EntryNotFoundError

    version = tag[len(cfg.tag_prefix):]
    try:
        path = api.hf_hub_download(cfg.repo_id, VERSION_FILE, repo_type="dataset", revision=tag, cache_dir=cache)
    except EntryNotFoundError:
        return {"version": version, "no_record": f"{tag} has no {VERSION_FILE}"}
    try:
        record = json.loads(Path(path).read_text())
        valid = (isinstance(record, dict) and isinstance(record.get("sources"), dict)
                 and isinstance(record.get("thresholds"), dict) and "rows" in record)
    except ValueError:
        valid = False
    if not valid:
        return {"version": version, "no_record": f"{tag}'s {VERSION_FILE} is not a version record"}
    return {**record, "version": version}  # the tag names the version, whatever the file says


def hub_address(cfg: PublishConfig) -> str:
    """The dataset's address on the Hub it is pushed to."""
    return dataset_address(cfg.repo_id, cfg.endpoint or os.environ.get("HF_ENDPOINT"))


def with_versions(plan: dict[str, Any], history: list[dict[str, Any]], cfg: PublishConfig) -> dict[str, Any]:
    """The plan with the versions found (`history`, oldest first) and the card's Versions section
    re-rendered from them; the card names the repository pushed to and its address (usage, configs,
    citation: the build may not have known them); the rest of it is uploaded as built."""
    plan = {**plan, "versions": [*history, plan["record"]]}
    card = Path(plan["folder"], CARD)
    if not card.is_file():
        return plan
    section = versions_section(plan["record"], history, cfg.tag_prefix, cfg.repo_id)
    text = with_repository(replace_versions_section(card.read_text(), section), cfg.repo_id, hub_address(cfg))
    return _with_generated(plan, {CARD: text})


def format_plan(plan: dict[str, Any]) -> str:
    lines = [f"repo:     {plan['repo_id']} (dataset, {'private' if plan['private'] else 'public'})",
             f"revision: {plan['revision']}, tag {plan['tag']}",
             f"files:    {len(plan['files'])} from {plan['folder']}, {plan['total_bytes']} bytes"]
    lines += [f"  {f['bytes']:>12}  {f['path']}" for f in plan["files"]]
    if "deleted" in plan:  # known once the Hub was asked (a dry run does not ask)
        lines += [f"  {'deleted':>12}  {p}" for p in plan["deleted"]] or ["  nothing deleted"]
    else:
        lines.append(f"files on the Hub not in this release (except {', '.join(plan['keep_remote'])}) are deleted "
                     "in the same commit")
    if "versions" in plan:  # known once the Hub's tags were read
        lines.append(f"versions: {len(plan['versions'])}, oldest first (the card's Versions section)")
        lines += [f"  {_version_line(v, plan)}" for v in plan["versions"]]
    if plan.get("versions_note"):
        lines.append(f"versions: {plan['versions_note']}")
    return "\n".join(lines)


def _version_line(record: dict[str, Any], plan: dict[str, Any]) -> str:
    tag = plan["tag"][:len(plan["tag"]) - len(plan["version"])] + record["version"]
    if record.get("no_record"):
        return f"{tag:<12}  no record ({record['no_record']})"
    this = "  (this version)" if record is plan["record"] else ""
    return f"{tag:<12}  {record['rows']} rows, sources {', '.join(record['sources']) or '-'}{this}"


def stale_files(remote: list[str], plan: dict[str, Any], keep: list[str]) -> list[str]:
    """Files on the Hub that the release does not have and that `keep` does not protect."""
    planned = {f["path"] for f in plan["files"]}
    return sorted(p for p in remote if p not in planned and not any(fnmatch(p, k) for k in keep))


def _hub_api(cfg: PublishConfig, *, write: bool):
    from huggingface_hub import HfApi

    token = os.environ.get(cfg.token_env)
    if write and not token:
        raise PublishError(f"{cfg.token_env} is not set: create a write token at "
                           "https://huggingface.co/settings/tokens and export it (it is never logged)")
    return HfApi(endpoint=cfg.endpoint, token=token or None)


def preview(cfg: PublishConfig, curated_dir: str | Path, *, api=None) -> dict[str, Any]:
    """The dry run: the plan with the versions already on the Hub (read only, no token needed for a
    public repo); a Hub that cannot be read is said in `versions_note`, not an error."""
    import httpx
    from huggingface_hub.errors import RepositoryNotFoundError

    plan = publish_plan(cfg, curated_dir)
    api = api or _hub_api(cfg, write=False)
    try:
        tags = [t.name for t in api.list_repo_refs(cfg.repo_id, repo_type="dataset").tags]
        plan = with_versions(plan, hub_versions(api, cfg, tags, plan["tag"]), cfg)
    except RepositoryNotFoundError:
        return {**with_versions(plan, [], cfg),
                "versions_note": f"{cfg.repo_id} is not on the Hub yet (or private and unreadable without a token)"}
    except (httpx.HTTPError, ConnectionError, TimeoutError) as e:
        return {**plan, "versions_note": f"not read: {_explain(e, cfg)}"}
    if plan["tag"] in tags:
        plan["versions_note"] = f"{plan['tag']} is already on the Hub: publish would refuse (bump build.version)"
    return plan


def publish(cfg: PublishConfig, curated_dir: str | Path, *, api=None) -> dict[str, Any]:
    """Create the repo (if needed), commit the release (stale files deleted in the same commit, the
    card's Versions section listing the tags already there), tag the commit with the version."""
    import httpx
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    plan = publish_plan(cfg, curated_dir)
    api = api or _hub_api(cfg, write=True)
    repo = {"repo_id": cfg.repo_id, "repo_type": "dataset"}
    try:
        api.create_repo(cfg.repo_id, repo_type="dataset", private=cfg.private, exist_ok=True)
        refs = api.list_repo_refs(**repo)
        tags = [t.name for t in refs.tags]
        if plan["tag"] in tags:
            raise PublishError(f"{cfg.repo_id} already has tag {plan['tag']}: bump build.version to publish a new version")
        plan = with_versions(plan, hub_versions(api, cfg, tags, plan["tag"]), cfg)
        head = next((b.target_commit for b in refs.branches if b.name == plan["revision"]), None)
        remote = api.list_repo_files(**repo, revision=head) if head else []
        deleted = stale_files(remote, plan, cfg.keep_remote)
        operations = [CommitOperationAdd(path_in_repo=f["path"], path_or_fileobj=_content(plan, f["path"]))
                      for f in plan["files"]]
        operations += [CommitOperationDelete(path_in_repo=p) for p in deleted]
        commit = api.create_commit(**repo, operations=operations, revision=plan["revision"], parent_commit=head,
                                   commit_message=f"{plan['tag']}: dataset version {plan['version']}",
                                   commit_description=_change_note(plan, deleted))
        api.create_tag(**repo, tag=plan["tag"], revision=commit.oid, tag_message=f"dataset version {plan['version']}")
    except (httpx.HTTPError, ConnectionError, TimeoutError) as e:  # the Hub's answer, or no answer: one clear
        raise PublishError(_explain(e, cfg)) from e                 # message; anything else keeps its traceback
    return {**plan, "deleted": deleted, "parent": head, "commit": commit.oid,
            "commit_url": getattr(commit, "commit_url", None)}


def _content(plan: dict[str, Any], path: str) -> bytes | str:
    """A generated file's bytes, or the release file's local path."""
    text = plan["generated"].get(path)
    return text.encode() if text is not None else str(Path(plan["folder"], path))


def _change_note(plan: dict[str, Any], deleted: list[str]) -> str:
    note = f"{len(plan['files'])} file(s), {plan['total_bytes']} bytes"
    return note + (f"; removed from the previous version: {', '.join(deleted)}" if deleted else "")


def _explain(e: Exception, cfg: PublishConfig) -> str:
    status = getattr(getattr(e, "response", None), "status_code", None)
    where = cfg.endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    if status == 412:
        return f"{cfg.repo_id} changed on the Hub while publishing (HTTP 412): run publish again"
    if status in (401, 403):
        return f"the Hub rejected the token in {cfg.token_env} (HTTP {status}): it needs write access to {cfg.repo_id}"
    if status is not None:
        return f"the Hub answered HTTP {status} for {cfg.repo_id}: {str(e).splitlines()[0][:300]}"
    return f"cannot reach the Hub at {where} ({type(e).__name__}: {str(e)[:200]}): check the network or HF_ENDPOINT"
