"""A hub model fetched once, at a pinned revision, into `$GSPO_HOME/models/hub/<hub>/<org>/<name>/<revision>/`.

When a preset's `model.path` is a hub id (`org/name`) and it pins `model.revision`, or its hub is ModelScope (which
then needs a pinned revision: `Hub.require_pinned`), neither engine downloads the model itself: `gspo prepare-model`
fetches it with the hub's own client (models/hub_fetch.py), and both engines load the prepared folder (verl's
`actor_rollout_ref.model.path` is that folder). A Hugging Face hub id without a revision loads as before (from the
hub's default branch, by transformers or verl).

The folder holds `gspo-model.json` (the manifest: hub, endpoint, repo, revision asked, the commit it resolved to
when the client says, each file's sha256 and size). Checked on use (each dry-run, each launch): every file of the
manifest is there with its size, and no file that can run code is there that the manifest does not list: cheap on
a 60 GB model on shared storage. The full sha256 check is `gspo prepare-model` again (local hashing, no request).
Never in the folder: pickled weights (`*.bin`, `*.pt`, ...: not fetched, safetensors only) and, unless
`model.trust_remote_code` is on, the repo's `*.py` (not fetched). No client, torch or transformers import here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from gspo_cli import layout
from gspo_cli.checks import ERROR, OK, Check
from gspo_cli.config import hub as hubs
from gspo_cli.errors import ConfigError

MANIFEST = "gspo-model.json"
FORMAT = 1
_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
# Files that run code when loaded or imported: pickles are never fetched, *.py only with trust_remote_code.
PICKLES = ("*.bin", "*.pt", "*.pth", "*.pkl", "*.pickle", "*.ckpt", "*.joblib")
CODE = ("*.py",)
KEYS = ["model.path", "model.revision", "hub.name"]


@dataclass(frozen=True)
class HubModel:
    hub: hubs.Hub
    repo: str
    revision: str
    trust_remote_code: bool

    @property
    def folder(self) -> Path:
        return layout.hub_model_dir(self.hub.name, self.repo, self.revision)

    def describe(self) -> str:
        return f"{self.hub.title} model {self.repo}@{self.revision}"


def is_hub_id(path: str) -> bool:
    parts = path.split("/")
    return len(parts) == 2 and all(_PART.match(p) and ".." not in p for p in parts)


def of(preset) -> HubModel | None:
    """The pinned hub model a preset trains, or None (a built-in model, a local folder, or a Hugging Face hub id
    without a revision: loaded as before). ConfigError: ModelScope without a pinned revision, or a `model.path`
    that is neither a local folder nor a hub id."""
    m = preset.model
    if m.path.startswith("builtin:") or Path(m.path).expanduser().exists():
        return None
    hub = hubs.of(preset)
    if m.revision is None and hub.name != hubs.MODELSCOPE:
        return None
    if not is_hub_id(m.path):
        raise ConfigError(f"model.path {m.path!r} is neither a local folder nor a hub id (org/name)",
                          "point model.path at a model folder, or give the repo id on the hub (e.g. Qwen/Qwen3-8B)")
    hub.require_pinned(m.revision, "model.revision", f"model {m.path}")
    assert m.revision is not None  # require_pinned passed or the hub is Hugging Face with a revision
    return HubModel(hub, m.path, m.revision, m.trust_remote_code)


def prepare_command(ref: str | None, preset) -> str:
    from gspo_cli.shell import quote

    return f"gspo prepare-model --preset {quote(ref or preset.name)}"


def read_manifest(folder: Path) -> dict | None:
    from gspo_cli.untrusted import read_json

    path = folder / MANIFEST
    if not path.is_file():
        return None
    try:
        data = read_json(path)
    except (OSError, ValueError):  # unreadable, not JSON or past untrusted's limits: damaged, said by `problem`
        return {}
    return data if isinstance(data, dict) else {}


def problem(model: HubModel, manifest: dict, *, hashes: bool = False) -> str | None:
    """Why the prepared folder is not what its manifest says (None: it is). Sizes always; sha256 with `hashes`."""
    files = manifest.get("files")
    if manifest.get("format") != FORMAT or not isinstance(files, dict) or not files:
        return f"{model.folder / MANIFEST} is not a gspo model manifest"
    if (manifest.get("hub"), manifest.get("repo"), manifest.get("revision")) != \
            (model.hub.name, model.repo, model.revision):
        return f"{model.folder / MANIFEST} is for another hub, repo or revision"
    for name, entry in files.items():
        path = model.folder / name
        if not path.is_file() or path.stat().st_size != entry.get("size"):
            return f"{name} is missing or its size differs from the manifest"
        if hashes and sha256(path) != entry.get("sha256"):
            return f"{name} does not match its sha256 in the manifest"
    extra = [p.name for p in model.folder.rglob("*") if p.is_file() and runs_code(p.name, model.trust_remote_code)
             and p.relative_to(model.folder).as_posix() not in files]
    return f"{extra[0]} can run code and is not in the manifest" if extra else None


def runs_code(name: str, trust_remote_code: bool) -> bool:
    from fnmatch import fnmatch

    patterns = PICKLES + (() if trust_remote_code else CODE)
    return any(fnmatch(name, p) for p in patterns)


def sha256(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def require_prepared(model: HubModel, ref: str | None, preset) -> Path:
    """The prepared folder, checked against its manifest (sizes); ConfigError naming the command otherwise."""
    manifest = read_manifest(model.folder)
    if manifest is None:
        raise ConfigError(f"{model.describe()} is not prepared ({model.folder} has no {MANIFEST})",
                          f"run: {prepare_command(ref, preset)}")
    why = problem(model, manifest)
    if why:
        raise ConfigError(f"{model.describe()}: the prepared folder is damaged: {why}",
                          f"run: {prepare_command(ref, preset)} --force")
    return model.folder


def check(preset, ref: str | None = None, name: str = "model") -> tuple[Check, Path | None] | None:
    """The dry-run's row `name` for a pinned hub model (and its folder when prepared); None for any other."""
    try:
        model = of(preset)
        if model is None:
            return None
        folder = require_prepared(model, ref, preset)
    except ConfigError as exc:
        return Check(name, ERROR, exc.message, KEYS, exc.hint or ""), None
    return Check(name, OK, f"{model.describe()} prepared: {folder}", KEYS), folder


def local_path(preset) -> str:
    """What to load for `model.path`: the prepared folder of a pinned hub model, else `model.path` itself (the
    planner's and preflight's shape facts read its config.json). Never raises: the `model` row says why."""
    try:
        model = of(preset)
    except ConfigError:
        return preset.model.path
    return str(model.folder) if model is not None and (model.folder / "config.json").is_file() else preset.model.path


def summary(manifest: dict) -> str:
    files = manifest.get("files") or {}
    size = sum(int(e.get("size") or 0) for e in files.values())
    commit = manifest.get("resolved_commit")
    return f"{len(files)} files, {size / 1e6:.1f} MB" + (f", commit {commit}" if commit else "")


def dumps(manifest: dict) -> str:
    return json.dumps(manifest, indent=2) + "\n"
