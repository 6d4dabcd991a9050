"""Theme files (YAML) turned into Textual themes; a broken file is a message, never a crash."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from textual.color import Color, ColorParseError
from textual.theme import Theme

COLOR_KEYS = ("primary", "secondary", "warning", "error", "success", "accent",
              "foreground", "background", "surface", "panel", "boost")
_ALLOWED = set(COLOR_KEYS) | {"name", "dark", "luminosity_spread", "text_alpha", "variables", "description"}


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


def theme_from_mapping(data: object, path: Path) -> Theme:
    """Build a Theme from a parsed YAML mapping; raises ValueError with a readable reason."""
    if not isinstance(data, dict):
        raise ValueError("the file must hold a mapping with at least `name` and `primary`")
    unknown = sorted(set(data) - _ALLOWED)
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} (known: {', '.join(sorted(_ALLOWED))})")
    name = data.get("name") or path.stem
    if not isinstance(name, str):
        raise ValueError("`name` must be text")
    if "primary" not in data:
        raise ValueError("`primary` colour is required")
    colors: dict[str, Any] = {}  # Theme's colour keywords, all str
    for key in COLOR_KEYS:
        if data.get(key) is None:
            continue
        value = str(data[key])
        try:
            Color.parse(value)
        except ColorParseError:
            raise ValueError(f"`{key}`: {value!r} is not a colour") from None
        colors[key] = value
    variables = data.get("variables") or {}
    if not isinstance(variables, dict):
        raise ValueError("`variables` must be a mapping of CSS variable names to values")
    return Theme(
        name=name,
        dark=bool(data.get("dark", True)),
        luminosity_spread=float(data.get("luminosity_spread", 0.15)),
        text_alpha=float(data.get("text_alpha", 0.95)),
        variables={str(k): str(v) for k, v in variables.items()},
        **colors,
    )


def load_theme_file(path: Path) -> Theme:
    """One theme file; raises ValueError naming the problem."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ValueError(f"cannot read: {err.strerror or err}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ValueError(f"not valid YAML{where}") from None
    return theme_from_mapping(data, path)


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
