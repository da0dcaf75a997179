"""The publish stage: push a built dataset version (`microcoder build`'s folder) to the Hugging
Face Hub as a dataset repo, tagged with the build's version. Off unless `publish.enabled`."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
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
            "files": listed, "total_bytes": sum(f["bytes"] for f in listed)}


def format_plan(plan: dict[str, Any]) -> str:
    lines = [f"repo:     {plan['repo_id']} (dataset, {'private' if plan['private'] else 'public'})",
             f"revision: {plan['revision']}, tag {plan['tag']}",
             f"files:    {len(plan['files'])} from {plan['folder']}, {plan['total_bytes']} bytes"]
    lines += [f"  {f['bytes']:>12}  {f['path']}" for f in plan["files"]]
    return "\n".join(lines)


def publish(cfg: PublishConfig, curated_dir: str | Path, *, api=None) -> dict[str, Any]:
    """Create the repo (if needed), upload the folder, tag the commit with the version."""
    import httpx

    plan = publish_plan(cfg, curated_dir)
    token = os.environ.get(cfg.token_env)
    if api is None:
        if not token:
            raise PublishError(f"{cfg.token_env} is not set: create a write token at "
                               "https://huggingface.co/settings/tokens and export it (it is never logged)")
        from huggingface_hub import HfApi

        api = HfApi(endpoint=cfg.endpoint, token=token)
    try:
        api.create_repo(cfg.repo_id, repo_type="dataset", private=cfg.private, exist_ok=True)
        tags = {t.name for t in api.list_repo_refs(cfg.repo_id, repo_type="dataset").tags}
        if plan["tag"] in tags:
            raise PublishError(f"{cfg.repo_id} already has tag {plan['tag']}: bump build.version to publish a new version")
        # Exactly the planned files (upload_folder alone would also send hidden and bookkeeping files).
        allow = [re.sub(r"([*?\[])", r"[\1]", f["path"]) for f in plan["files"]]
        commit = api.upload_folder(repo_id=cfg.repo_id, repo_type="dataset", folder_path=plan["folder"],
                                   allow_patterns=allow,
                                   commit_message=f"{plan['tag']}: dataset version {plan['version']}")
        api.create_tag(cfg.repo_id, tag=plan["tag"], revision=commit.oid, repo_type="dataset",
                       tag_message=f"dataset version {plan['version']}")
    except (httpx.HTTPError, ConnectionError, TimeoutError) as e:  # the Hub's answer, or no answer: one clear
        raise PublishError(_explain(e, cfg)) from e                 # message; anything else keeps its traceback
    return {**plan, "commit": commit.oid, "commit_url": getattr(commit, "commit_url", None)}


def _explain(e: Exception, cfg: PublishConfig) -> str:
    status = getattr(getattr(e, "response", None), "status_code", None)
    where = cfg.endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    if status in (401, 403):
        return f"the Hub rejected the token in {cfg.token_env} (HTTP {status}): it needs write access to {cfg.repo_id}"
    if status is not None:
        return f"the Hub answered HTTP {status} for {cfg.repo_id}: {str(e).splitlines()[0][:300]}"
    return f"cannot reach the Hub at {where} ({type(e).__name__}: {str(e)[:200]}): check the network or HF_ENDPOINT"
