"""The publish stage: push a built dataset version (`microcoder build`'s folder) to the Hugging
Face Hub as a dataset repo, tagged with the build's version. Off unless `publish.enabled`.

One push is one commit on `main` that makes the repo exactly the release: every planned file
added, and every file a previous version left that this one does not have (old shards above all)
deleted in the same commit, so `main` never holds two versions' shards at once (three shards from
v0.1.0's two and v0.2.0's one make `load_dataset` fail with NonMatchingSplitsSizesError). The
commit names its parent, so a push racing another is refused rather than merged; the tag
(`tag_prefix` + version) then points at that commit, so `load_dataset(repo, revision=tag)` reads
that version for good. See docs/publish.md.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from pipeline.inputs import InputError

NOT_PUBLISHED = ("rejects.jsonl", "headline.json")  # build bookkeeping (DVC metrics), not part of the dataset


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


def publish_plan(cfg: PublishConfig, curated_dir: str | Path) -> dict[str, Any]:
    """Exactly what an upload would send: repo, tag, and every file with its size."""
    folder = Path(curated_dir)
    version = build_version(folder)
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", cfg.repo_id or ""):
        raise PublishError(f"publish.repo_id must be 'owner/name', got {cfg.repo_id!r}")
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name not in NOT_PUBLISHED
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    listed = [{"path": p.relative_to(folder).as_posix(), "bytes": p.stat().st_size} for p in files]
    return {"repo_id": cfg.repo_id, "repo_type": "dataset", "private": cfg.private, "revision": "main",
            "tag": f"{cfg.tag_prefix}{version}", "version": version, "folder": str(folder),
            "files": listed, "total_bytes": sum(f["bytes"] for f in listed), "keep_remote": list(cfg.keep_remote)}


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
    return "\n".join(lines)


def stale_files(remote: list[str], plan: dict[str, Any], keep: list[str]) -> list[str]:
    """Files on the Hub that the release does not have and that `keep` does not protect."""
    planned = {f["path"] for f in plan["files"]}
    return sorted(p for p in remote if p not in planned and not any(fnmatch(p, k) for k in keep))


def publish(cfg: PublishConfig, curated_dir: str | Path, *, api=None) -> dict[str, Any]:
    """Create the repo (if needed), commit the release (stale files deleted in the same commit), tag
    the commit with the version."""
    import httpx
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    plan = publish_plan(cfg, curated_dir)
    if api is None:
        token = os.environ.get(cfg.token_env)
        if not token:
            raise PublishError(f"{cfg.token_env} is not set: create a write token at "
                               "https://huggingface.co/settings/tokens and export it (it is never logged)")
        from huggingface_hub import HfApi

        api = HfApi(endpoint=cfg.endpoint, token=token)
    repo = {"repo_id": cfg.repo_id, "repo_type": "dataset"}
    try:
        api.create_repo(cfg.repo_id, repo_type="dataset", private=cfg.private, exist_ok=True)
        refs = api.list_repo_refs(**repo)
        if plan["tag"] in {t.name for t in refs.tags}:
            raise PublishError(f"{cfg.repo_id} already has tag {plan['tag']}: bump build.version to publish a new version")
        head = next((b.target_commit for b in refs.branches if b.name == plan["revision"]), None)
        remote = api.list_repo_files(**repo, revision=head) if head else []
        deleted = stale_files(remote, plan, cfg.keep_remote)
        operations = [CommitOperationAdd(path_in_repo=f["path"], path_or_fileobj=str(Path(plan["folder"], f["path"])))
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
