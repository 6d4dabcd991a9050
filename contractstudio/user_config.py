"""The user's own config (`config.yaml` in the config folder): one validated model, read by every face.

The studio takes its theme and keymap from it, and every live call asks it which servers the user named
(`trusted_api_bases`). It is read through the one bounded reader, so a file nested 20,000 deep, an alias
bomb or bytes that are not UTF-8 are a message with the position, and everything falls back to defaults;
nothing that reads the config ever raises (issue 18).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from contractstudio.reading.data_files import UnreadableData, read_data_file

CONFIG_FILE = "config.yaml"
MAX_CONFIG_BYTES = 256 * 1024

KeyName = Annotated[str, StringConstraints(min_length=1, max_length=200)]


class UserConfig(BaseModel):
    """What config.yaml may set; anything else is refused with its position (defaults are used)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    theme: Annotated[str, StringConstraints(max_length=200)] | None = None
    model: Annotated[str, StringConstraints(min_length=1, max_length=500)] | None = None  # the default model (a litellm string)
    # binding id -> key or keys as written; which ids and keys exist is checked by the studio (studio/keymap.py)
    keymap: dict[KeyName, KeyName | list[KeyName]] = Field(default_factory=dict)
    # servers a key may be sent to from any folder (see contractstudio/trust.py)
    trusted_api_bases: Annotated[str, StringConstraints(max_length=2000)] | list[
        Annotated[str, StringConstraints(max_length=2000)]] = Field(default_factory=list)

    @property
    def api_bases(self) -> tuple[str, ...]:
        """`trusted_api_bases` as a tuple (one URL may be written without a list)."""
        value = self.trusted_api_bases
        return (value,) if isinstance(value, str) else tuple(value)


def load_user_config(path: Path) -> tuple[UserConfig, str | None]:
    """(the config at `path`, why it could not be used or None); a missing file is the defaults, a bad one the defaults and why.

    `path` is `trust.config_folder() / CONFIG_FILE` (the config folder is decided by `contractstudio.trust`).
    """
    if not path.exists() and not path.is_symlink():
        return UserConfig(), None
    try:
        return read_data_file(path, MAX_CONFIG_BYTES).validated(UserConfig), None
    except UnreadableData as err:
        return UserConfig(), f"{err}; defaults used"
