"""Theme files (YAML) turned into Textual themes; a broken file is a message, never a crash."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

from contractstudio.reading.data_files import UnreadableData, read_data_file

COLOR_KEYS = ("primary", "secondary", "warning", "error", "success", "accent",
              "foreground", "background", "surface", "panel", "boost")


@dataclass(frozen=True, slots=True)
class ThemeProblem:
    """Why one theme file was skipped."""

    path: Path
    message: str

    def __str__(self) -> str:
        return f"theme {self.path.name}: {self.message}"


def bundled_themes_folder() -> Path:
    """The themes shipped with the package (package data; the repository's `themes/` links here)."""
    return Path(__file__).resolve().parent / "bundled_themes"


# A theme variable's value goes into the app's CSS as written: colours, `$variables`, percentages, words.
# Never `;`, `{`, `}`, quotes or a comment, which would end the declaration and add rules of its own (issue 18).
_VARIABLE_NAME = re.compile(r"[a-z][a-z0-9-]{0,63}")
_VARIABLE_VALUE = re.compile(r"[A-Za-z0-9#$%.,() _-]{1,200}")


def _theme_model() -> Any:
    """The pydantic model of a theme file (built on first use: pydantic is not imported before the first screen)."""
    global _MODEL
    if _MODEL is None:
        from pydantic import BaseModel, ConfigDict, Field, field_validator

        class ThemeFile(BaseModel):
            """What a theme file may hold; every value is checked before it reaches Textual's CSS."""

            model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

            name: str | None = Field(default=None, min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.-]+$")
            description: str | None = Field(default=None, max_length=500)
            dark: bool = True
            luminosity_spread: float = Field(default=0.15, ge=0.0, le=1.0)
            text_alpha: float = Field(default=0.95, ge=0.0, le=1.0)
            variables: dict[str, str] = Field(default_factory=dict, max_length=500)
            primary: str
            secondary: str | None = None
            warning: str | None = None
            error: str | None = None
            success: str | None = None
            accent: str | None = None
            foreground: str | None = None
            background: str | None = None
            surface: str | None = None
            panel: str | None = None
            boost: str | None = None

            @field_validator(*COLOR_KEYS)
            @classmethod
            def _colour(cls, value: str | None) -> str | None:
                if value is not None:
                    try:
                        Color.parse(value)
                    except ColorParseError:
                        raise ValueError(f"{value!r} is not a colour") from None
                return value

            @field_validator("variables")
            @classmethod
            def _css_safe(cls, value: dict[str, str]) -> dict[str, str]:
                for name, text in value.items():
                    if not _VARIABLE_NAME.fullmatch(name):
                        raise ValueError(f"{name!r} is not a CSS variable name (lower-case letters, digits and '-')")
                    if not _VARIABLE_VALUE.fullmatch(text):
                        raise ValueError(f"the value of {name!r} may hold only colours, $variables, numbers and words "
                                         "(never ';', '{', '}', quotes or comments)")
                return value

        _MODEL = ThemeFile
    return _MODEL


_MODEL: Any = None


def _theme(fields: dict[str, Any], path: Path) -> Theme:
    colors = {key: fields[key] for key in COLOR_KEYS if fields.get(key) is not None}
    return Theme(name=fields.get("name") or path.stem, dark=bool(fields.get("dark", True)),
                 luminosity_spread=float(fields.get("luminosity_spread", 0.15)), text_alpha=float(fields.get("text_alpha", 0.95)),
                 variables=dict(fields.get("variables") or {}), **colors)


def load_theme_file(path: Path) -> Theme:
    """One theme file, read by the bounded reader and checked by the theme model; raises ValueError naming where and why."""
    read = read_data_file(path)
    if path.parent == bundled_themes_folder():
        # ours, shipped with the package and checked by the model in the tests
        # (tests/studio/test_themes.py): the first screen is drawn without importing pydantic
        return _theme(read.data, path)
    if not isinstance(read.data, dict):
        raise UnreadableData(f"{path}: the file must hold a mapping with at least `name` and `primary`")
    return _theme(read.validated(_theme_model()).model_dump(exclude_none=True), path)


def load_themes(folders: Iterable[Path]) -> tuple[list[Theme], list[ThemeProblem]]:
    """Every *.yaml / *.yml theme in the folders (later folders override earlier names)."""
    themes: dict[str, Theme] = {}
    problems: list[ThemeProblem] = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.suffix not in (".yaml", ".yml"):
                continue
            try:
                theme = load_theme_file(path)
            except (ValueError, TypeError) as err:
                problems.append(ThemeProblem(path, str(err)))
                continue
            themes[theme.name] = theme
    return list(themes.values()), problems
