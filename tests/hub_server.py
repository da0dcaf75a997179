"""A small in-memory Hugging Face Hub for tests: the HTTP API the way `huggingface_hub` (and
`datasets` through `HfFileSystem`) calls it, on an ephemeral local port.

Dataset repos only. What it speaks (paths as in huggingface_hub's hf_api.py / _commit_api.py /
file_download.py / hf_file_system.py):
    POST /api/repos/create                               create_repo (409 when it exists)
    GET  /api/datasets/{repo}[/revision/{rev}]           repo_info / dataset_info (sha, siblings)
    GET  /api/datasets/{repo}/refs                       list_repo_refs (branches, tags)
    GET  /api/datasets/{repo}/tree/{rev}[/{path}]        list_repo_tree / list_repo_files (recursive=...)
    POST /api/datasets/{repo}/paths-info/{rev}           get_paths_info (HfFileSystem.info)
    POST /api/validate-yaml                              README.md front matter check (always valid here)
    POST /api/datasets/{repo}/preupload/{rev}            upload modes: every file "regular" (no LFS/xet)
    POST /api/datasets/{repo}/commit/{rev}               NDJSON: header, file (base64), deletedFile, deletedFolder;
                                                         parentCommit checked (412 when main moved on)
    POST /api/datasets/{repo}/tag/{rev}                  create_tag (409 when the tag exists)
    HEAD/GET /datasets/{repo}/resolve/{rev}/{path}       hf_hub_download / HfFileSystem reads, {rev} a
                                                         branch, tag or commit
A wrong or missing token answers 401, as the Hub does for a write; a missing repo, revision or file
answers 404 with the Hub's X-Error-Code (RepoNotFound, RevisionNotFound, EntryNotFound).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from urllib.parse import unquote

from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response


def git_blob_oid(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


@dataclass
class Repo:
    private: bool
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)  # oid -> the whole tree {path: content}
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)

    def resolve(self, rev: str) -> str | None:
        return self.branches.get(rev) or self.tags.get(rev) or (rev if rev in self.commits else None)


def _json(data, status: int = 200) -> Response:
    return Response(json.dumps(data), status=status, mimetype="application/json")


def _error(status: int, message: str, code: str | None = None) -> Response:
    """An error as the Hub sends it: X-Error-Code (RepoNotFound, RevisionNotFound, EntryNotFound) is what
    huggingface_hub turns into its specific errors, the only clue a HEAD request carries."""
    headers = {"X-Error-Message": message, **({"X-Error-Code": code} if code else {})}
    return Response(json.dumps({"error": message}), status=status, mimetype="application/json", headers=headers)


class HubServer:
    """`with HubServer(token=...) as hub:` ... `hub.url` is the endpoint; `hub.repos` the state."""

    def __init__(self, token: str | None = "hf_test_token"):
        self.token = token
        self.repos: dict[str, Repo] = {}
        self.requests: list[tuple[str, str]] = []
        self._oids = (f"{n:040x}" for n in itertools.count(1))
        self._lock = threading.Lock()

    def __enter__(self) -> HubServer:
        self._server = make_server("127.0.0.1", 0, self._app, threaded=True)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._thread.join()

    def files(self, repo_id: str, rev: str = "main") -> dict[str, bytes]:
        repo = self.repos[repo_id]
        return repo.commits[repo.resolve(rev)]

    # --- WSGI ------------------------------------------------------------------------------
    def _app(self, environ, start_response):
        request = Request(environ)
        self.requests.append((request.method, request.path))
        with self._lock:
            response = self._route(request)
        return response(environ, start_response)

    def _authorised(self, request: Request) -> bool:
        return self.token is None or request.headers.get("Authorization") == f"Bearer {self.token}"

    def _route(self, request: Request) -> Response:
        path, method = request.path, request.method
        if method == "POST" and path == "/api/validate-yaml":
            return _json({"errors": [], "warnings": []})
        if method == "POST" and path == "/api/repos/create":
            return self._create_repo(request)
        m = re.fullmatch(r"/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
        if m and method in ("GET", "HEAD"):
            return self._resolve(m.group(1), unquote(m.group(2)), unquote(m.group(3)), method)
        m = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)(?:/(\w[\w-]*)(?:/([^/]+)(?:/(.*))?)?)?", path)
        if not m:
            return _error(404, f"no route for {method} {path}")
        repo_id, action, rev, rest = m.group(1), m.group(2), unquote(m.group(3) or "main"), unquote(m.group(4) or "")
        repo = self.repos.get(repo_id)
        if repo is None or (repo.private and not self._authorised(request)):
            return _error(404, f"Repository Not Found for url: {path}", "RepoNotFound")
        if method == "GET" and action in (None, "revision"):
            return self._info(repo_id, repo, rev)
        if method == "GET" and action == "refs":
            refs = [{"name": n, "ref": f"refs/heads/{n}", "targetCommit": o} for n, o in repo.branches.items()]
            tags = [{"name": n, "ref": f"refs/tags/{n}", "targetCommit": o} for n, o in repo.tags.items()]
            return _json({"branches": refs, "converts": [], "tags": tags})
        if method == "GET" and action == "tree":
            return self._tree(repo, rev, rest, request.args.get("recursive", "False").lower() in ("true", "1"))
        if method == "POST" and action == "paths-info":
            return self._paths_info(repo, rev, request.form.getlist("paths") or (request.get_json(silent=True) or {}).get("paths", []))
        if method != "POST" or action not in ("preupload", "commit", "tag"):
            return _error(404, f"no route for {method} {path}")
        if not self._authorised(request):
            return _error(401, "Invalid credentials in Authorization header")
        if action == "preupload":
            tree = repo.commits.get(repo.resolve(rev) or "", {})
            return _json({"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
                                     "oid": git_blob_oid(tree[f["path"]]) if f["path"] in tree else None}
                                    for f in request.get_json()["files"]]})
        if action == "commit":
            return self._commit(repo_id, repo, rev, request.get_data())
        return self._tag(repo, rev, request.get_json())

    def _create_repo(self, request: Request) -> Response:
        if not self._authorised(request):
            return _error(401, "Invalid credentials in Authorization header")
        body = request.get_json()
        repo_id = f"{body['organization']}/{body['name']}" if body.get("organization") else body["name"]
        if body.get("type") != "dataset":
            return _error(400, "this test hub holds dataset repos only")
        if repo_id in self.repos:
            return _json({"error": "You already created this dataset repo",  # the Hub names the repo here too
                          "url": f"{self.url}/datasets/{repo_id}"}, 409)
        self.repos[repo_id] = Repo(private=bool(body.get("private")))
        return _json({"url": f"{self.url}/datasets/{repo_id}", "name": repo_id})

    def _info(self, repo_id: str, repo: Repo, rev: str) -> Response:
        oid = repo.resolve(rev)
        if oid is None and repo.commits:
            return _error(404, f"Revision Not Found: {rev}", "RevisionNotFound")
        tree = repo.commits.get(oid or "", {})
        return _json({"id": repo_id, "_id": repo_id, "sha": oid, "private": repo.private, "disabled": False,
                      "gated": False, "downloads": 0, "likes": 0, "tags": [], "cardData": {},
                      "lastModified": "2025-01-01T00:00:00.000Z", "createdAt": "2025-01-01T00:00:00.000Z",
                      "siblings": [{"rfilename": p, "size": len(c)} for p, c in sorted(tree.items())]})

    def _entries(self, tree: dict[str, bytes]) -> list[dict]:
        folders = {"/".join(p.split("/")[:i]) for p in tree for i in range(1, p.count("/") + 1)}
        out = [{"type": "directory", "path": f, "oid": git_blob_oid(f.encode())} for f in folders]
        out += [{"type": "file", "path": p, "size": len(c), "oid": git_blob_oid(c)} for p, c in tree.items()]
        return sorted(out, key=lambda e: e["path"])

    def _tree(self, repo: Repo, rev: str, under: str, recursive: bool) -> Response:
        oid = repo.resolve(rev)
        if oid is None:
            return _error(404, f"Revision Not Found: {rev}", "RevisionNotFound") if repo.commits else _json([])
        prefix = f"{under.strip('/')}/" if under.strip("/") else ""
        entries = [e for e in self._entries(repo.commits[oid]) if e["path"].startswith(prefix)]
        if not recursive:
            entries = [e for e in entries if "/" not in e["path"][len(prefix):]]
        if prefix and not entries:
            return _error(404, f"Entry Not Found: {under}")
        return _json(entries)

    def _paths_info(self, repo: Repo, rev: str, paths: list[str]) -> Response:
        oid = repo.resolve(rev)
        if oid is None:
            return _error(404, f"Revision Not Found: {rev}", "RevisionNotFound")
        wanted = {p.strip("/") for p in paths}
        return _json([e for e in self._entries(repo.commits[oid]) if e["path"] in wanted])

    def _commit(self, repo_id: str, repo: Repo, branch: str, body: bytes) -> Response:
        lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
        if not lines or lines[0]["key"] != "header":
            return _error(400, "the commit payload must start with a header line")
        header = lines[0]["value"]
        head = repo.branches.get(branch)
        if header.get("parentCommit") and header["parentCommit"] != head:
            return _error(412, "A commit has happened since. Please refresh and try again.")
        tree = dict(repo.commits.get(head or "", {}))
        for line in lines[1:]:
            key, value = line["key"], line["value"]
            if key == "file":
                tree[value["path"]] = base64.b64decode(value["content"])
            elif key == "deletedFile":
                if value["path"] not in tree:
                    return _error(404, f"A file with this name doesn't exist: {value['path']}")
                del tree[value["path"]]
            elif key == "deletedFolder":
                tree = {p: c for p, c in tree.items() if not p.startswith(value["path"].rstrip("/") + "/")}
            else:
                return _error(400, f"this test hub does not take {key!r} operations (LFS/xet)")
        oid = next(self._oids)
        repo.commits[oid], repo.branches[branch], repo.messages[oid] = tree, oid, header["summary"]
        return _json({"commitUrl": f"{self.url}/datasets/{repo_id}/commit/{oid}", "commitOid": oid,
                      "success": True})

    def _tag(self, repo: Repo, rev: str, body: dict) -> Response:
        oid = repo.resolve(rev)
        if oid is None:
            return _error(404, f"Revision Not Found: {rev}", "RevisionNotFound")
        if body["tag"] in repo.tags:
            return _error(409, f"Tag {body['tag']} already exists")
        repo.tags[body["tag"]] = oid
        return _json({"name": body["tag"]})

    def _resolve(self, repo_id: str, rev: str, path: str, method: str) -> Response:
        repo = self.repos.get(repo_id)
        if repo is None:
            return _error(404, f"Repository not found: {repo_id}", "RepoNotFound")
        oid = repo.resolve(rev)
        if oid is None:
            return _error(404, f"Revision not found: {repo_id}@{rev}", "RevisionNotFound")
        content = repo.commits[oid].get(path)
        if content is None:
            return _error(404, f"Entry not found: {path}", "EntryNotFound")
        headers = {"X-Repo-Commit": oid, "ETag": f'"{git_blob_oid(content)}"', "Content-Length": str(len(content))}
        response = Response(content, mimetype="application/octet-stream")  # werkzeug sends no body for HEAD
        response.headers.update(headers)
        return response
