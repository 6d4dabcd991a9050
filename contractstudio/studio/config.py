"""The user's settings: config folder, keymap, theme choice (a bad config is a message, never a crash)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml


def config_folder() -> Path:
    """$XDG_CONFIG_HOME/contractstudio (default ~/.config/contractstudio)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "contractstudio"


@dataclass(slots=True)
class StudioConfig:
    """What config.yaml may set."""

    theme: str | None = None
    keymap: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def themes_folder(self) -> Path:
        return config_folder() / "themes"


def load_config(path: Path | None = None) -> StudioConfig:
    """Read config.yaml: `theme: NAME` and `keymap: {binding_id: key}`."""
    path = path or config_folder() / "config.yaml"
    config = StudioConfig()
    if not path.is_file():
        return config
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as err:
        config.problems.append(f"{path}: cannot read the config ({type(err).__name__}); defaults used")
        return config
    if not isinstance(data, dict):
        config.problems.append(f"{path}: the config must be a mapping; defaults used")
        return config
    theme = data.get("theme")
    if theme is not None:
        config.theme = str(theme)
    keymap = data.get("keymap") or {}
    if isinstance(keymap, dict):
        config.keymap = {str(k): str(v) for k, v in keymap.items() if v}
    else:
        config.problems.append(f"{path}: `keymap` must map binding ids to keys")
    return config


def trust_file() -> Path:
    """Folders the user chose to trust, one absolute path per line."""
    return config_folder() / "trusted-folders.txt"


def trusted_folders() -> set[Path]:
    """The folders remembered as trusted (python: hooks may run there)."""
    try:
        lines = trust_file().read_text(encoding="utf-8").splitlines()
    except OSError:
        return set()
    return {Path(line.strip()) for line in lines if line.strip() and not line.startswith("#")}


def is_trusted(folder: Path) -> bool:
    """A folder is trusted when it or one of its parents was remembered."""
    here = folder.resolve()
    return any(here == t or t in here.parents for t in trusted_folders())


def remember_trust(folder: Path) -> None:
    """Add a folder to the trusted list (written atomically)."""
    from contractstudio.studio.workspace import write_atomic

    folders = trusted_folders() | {folder.resolve()}
    trust_file().parent.mkdir(parents=True, exist_ok=True)
    write_atomic(trust_file(), "# Folders whose python: hooks the studio may run (contractstudio studio --trust).\n"
                 + "".join(f"{f}\n" for f in sorted(folders)))
