"""The user's settings: config folder, keymap, theme choice (a bad config is a message, never a crash)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

# One config folder for every face; trust decisions (trusted-folders.txt) live in contractstudio.trust.
from contractstudio.trust import config_folder


@dataclass(slots=True)
class StudioConfig:
    """What config.yaml may set."""

    theme: str | None = None
    keymap: dict[str, object] = field(default_factory=dict)  # binding id -> key(s) as written; checked by studio.keymap
    problems: list[str] = field(default_factory=list)

    @property
    def themes_folder(self) -> Path:
        return config_folder() / "themes"


def load_config(path: Path | None = None) -> StudioConfig:
    """Read config.yaml: `theme: NAME` and `keymap: {binding_id: key or [keys]}`."""
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
        config.keymap = {str(k): v for k, v in keymap.items()}
    else:
        config.problems.append(f"{path}: `keymap` must map binding ids to keys (or lists of keys)")
    return config
