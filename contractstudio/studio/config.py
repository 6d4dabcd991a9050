"""The user's settings as the studio uses them: theme choice and keymap (a bad config is a message, never a crash).

config.yaml is read and validated by the one model every face shares (`contractstudio/user_config.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# One config folder for every face; trust decisions (trusted-folders.txt) live in contractstudio.trust.
from contractstudio.trust import config_folder


@dataclass(slots=True)
class StudioConfig:
    """What config.yaml sets for the studio."""

    theme: str | None = None
    keymap: dict[str, object] = field(default_factory=dict)  # binding id -> key(s) as written; checked by studio.keymap
    api_bases: tuple[str, ...] = ()  # trusted_api_bases: handed to every analysis (Context.api_bases), read once here
    problems: list[str] = field(default_factory=list)

    @property
    def themes_folder(self) -> Path:
        return config_folder() / "themes"


def load_config(path: Path | None = None) -> StudioConfig:
    """Read config.yaml: `theme: NAME` and `keymap: {binding_id: key or [keys]}`; a bad file gives the defaults and why."""
    path = path or config_folder() / "config.yaml"
    if not path.exists() and not path.is_symlink():
        return StudioConfig()  # nothing to validate: pydantic is not imported before the first screen
    from contractstudio.user_config import load_user_config

    config, problem = load_user_config(path)
    return StudioConfig(theme=config.theme, keymap=dict(config.keymap), api_bases=config.api_bases,
                        problems=[problem] if problem else [])
