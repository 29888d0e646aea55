"""Loopback hubs that speak the part of each hub's HTTP API its real client asks (imported as a plain module).

ModelScope (modelscope 1.40.2 / modelscope_hub 0.5.1):
  GET /api/v1/datasets/{repo}/repo?Revision=R&FilePath=F      one dataset file
  GET /api/v1/models/{repo}/repo/files?Revision=R&Recursive=True   a model's file list (Path, Type, Size, Sha256)
  GET /api/v1/models/{repo}/repo?Revision=R&FilePath=F        one model file
  GET /api/v1/models/{repo}                                   the repo's metadata (HubApi.repo_exists)
Hugging Face (huggingface_hub 1.33, through HF_ENDPOINT / `endpoint=`):
  GET /api/models/{repo}/revision/{rev}                       the commit a revision resolves to (`sha`)
  GET /api/models/{repo}/tree/{commit}?recursive=true         the file list at that commit
  HEAD|GET /{repo}/resolve/{commit}/{file}                     one file (X-Repo-Commit, ETag)
Anything else answers each hub's 404 (ModelScope's JSON; Hugging Face's `X-Error-Code: RepoNotFound`, or
`RevisionNotFound` for a known repo at an unknown revision). `seen` records every request.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
import urllib.parse
from dataclasses import dataclass, field

MS_404 = b'{"Code":10010205001,"Message":"not found","Success":false}'


@dataclass
class Repo:
    files: dict[str, bytes]
    revisions: dict[str, str]  # revision (tag or commit) -> the commit it is
    kind: str = "model"  # model | dataset


@dataclass
class LoopbackHub:
    repos: dict[str, Repo]
    seen: list[str] = field(default_factory=list)
    url: str = ""

    def answer(self, method: str, raw_path: str) -> tuple[int, bytes, dict[str, str]]:
        self.seen.append(f"{method} {raw_path}")
        url = urllib.parse.urlsplit(raw_path)
        path, query = urllib.parse.unquote(url.path), dict(urllib.parse.parse_qsl(url.query))
        for kind in ("models", "datasets"):
            for name, repo in self.repos.items():
                if (path + "/").startswith(f"/api/v1/{kind}/{name}/") and kind == repo.kind + "s":
                    return self._modelscope(repo, path[len(f"/api/v1/{kind}/{name}"):], query)
        for name, repo in self.repos.items():
            for prefix in (f"/api/models/{name}/", f"/{name}/resolve/"):
                if path.startswith(prefix):
                    return self._huggingface(name, repo, prefix, path[len(prefix):])
        return 404, MS_404, {"Content-Type": "application/json", "X-Error-Code": "RepoNotFound"}

    def _modelscope(self, repo: Repo, rest: str, query: dict) -> tuple[int, bytes, dict[str, str]]:
        if rest == "":  # the repo's metadata (HubApi.repo_exists), at any revision
            return 200, b'{"Code":200,"Success":true,"Data":{"Private":false}}', {"Content-Type": "application/json"}
        if query.get("Revision") not in repo.revisions:
            return 404, MS_404, {"Content-Type": "application/json"}
        if rest == "/repo/files":
            listing = [{"Path": n, "Name": n, "Type": "blob", "Size": len(b), "Sha256": hashlib.sha256(b).hexdigest()}
                       for n, b in repo.files.items()]
            body = {"Code": 200, "Success": True, "Data": {"Files": listing}}
            return 200, json.dumps(body).encode(), {"Content-Type": "application/json"}
        if rest == "/repo" and query.get("FilePath") in repo.files:
            return 200, repo.files[query["FilePath"]], {"Content-Type": "application/octet-stream"}
        return 404, MS_404, {"Content-Type": "application/json"}

    def _huggingface(self, name: str, repo: Repo, prefix: str, rest: str) -> tuple[int, bytes, dict[str, str]]:
        missing = {"Content-Type": "application/json", "X-Error-Code": "RevisionNotFound"}
        if prefix.startswith("/api/models/"):
            what, _, rev = rest.partition("/")
            if rev not in repo.revisions:
                return 404, b'{"error":"Invalid rev id"}', missing
            if what == "revision":
                body = {"id": name, "sha": repo.revisions[rev], "siblings": [{"rfilename": n} for n in repo.files]}
                return 200, json.dumps(body).encode(), {"Content-Type": "application/json"}
            if what == "tree":
                tree = [{"type": "file", "path": n, "size": len(b), "oid": hashlib.sha1(b).hexdigest()}
                        for n, b in repo.files.items()]
                return 200, json.dumps(tree).encode(), {"Content-Type": "application/json"}
            return 404, b"{}", missing
        rev, _, filename = rest.partition("/")
        if rev not in repo.revisions or filename not in repo.files:
            return 404, b"{}", {**missing, "X-Error-Code": "EntryNotFound" if rev in repo.revisions else
                                "RevisionNotFound"}
        data = repo.files[filename]
        return 200, data, {"Content-Type": "application/octet-stream", "X-Repo-Commit": repo.revisions[rev],
                           "ETag": f'"{hashlib.sha256(data).hexdigest()}"'}


def serve(hub: LoopbackHub) -> http.server.ThreadingHTTPServer:
    """Start `hub` on 127.0.0.1 (a free port; `hub.url` set); the caller shuts the server down."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def _reply(self) -> None:
            status, body, headers = hub.answer(self.command, self.path)
            self.send_response(status)
            for key, value in {**headers, "Content-Length": str(len(body))}.items():
                self.send_header(key, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = do_HEAD = _reply

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    return server
