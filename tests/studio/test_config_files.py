"""The user's own config and themes cannot crash any face (issue 18 point 14): each is read by the one bounded
reader and checked by its model (contractstudio/user_config.py, studio/themes.py) before a value reaches CSS; a bad file is
a message with its position and everything else keeps working with the defaults."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contractstudio.studio.config import load_config
from contractstudio.studio.themes import bundled_themes_folder, load_theme_file, load_themes
from contractstudio.trust import user_api_bases, user_gave

from .conftest import settle

ALIAS_BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8))


def config_file() -> Path:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "contractstudio" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def theme_file(name: str, text: str) -> Path:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "contractstudio" / "themes"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return folder / name


@pytest.mark.parametrize(("text", "said"), ids=["deep", "alias-bomb", "theme-not-text", "bases-not-urls", "unknown-key"], argvalues=[
    ("keymap:\n" + "  " * 0 + "a: " + "[" * 20_000 + "]" * 20_000 + "\n", "config.yaml:2:"),
    (ALIAS_BOMB, "aliases expand"),
    ("theme: [1, 2]\n", "config.yaml:1:1: theme"),
    ("trusted_api_bases: {a: 1}\n", "config.yaml:1:1: trusted_api_bases"),
    ("thme: x\n", "config.yaml:1:1: thme: Extra inputs are not permitted"),
])
def test_a_bad_config_is_the_defaults_and_a_message_with_its_position(text: str, said: str) -> None:
    config_file().write_text(text)
    config = load_config()
    assert config.theme is None and config.keymap == {}
    assert len(config.problems) == 1 and said in config.problems[0] and "defaults used" in config.problems[0]
    assert user_api_bases() == ()  # every live call asks this: it never raises


def test_a_config_that_is_not_utf8_never_breaks_a_live_call() -> None:
    config_file().write_bytes(b"trusted_api_bases: [http://caf\xe9.example]\n")
    assert not user_gave("http://example.com", user_api_bases())
    assert "config.yaml:1:1: the file is not UTF-8" in load_config().problems[0]
    config_file().write_text("trusted_api_bases: https://models.example:8443\ntheme: contractstudio-light\n")
    assert user_gave("https://models.example:8443/v1", user_api_bases()) and load_config().theme == "contractstudio-light"
    assert load_config().api_bases == ("https://models.example:8443",)  # what the studio hands every analysis


@pytest.mark.parametrize(("text", "said"), ids=["deep", "nan", "css-injection", "alias-bomb", "alpha"], argvalues=[
    ("name: deep\nprimary: '#ff0000'\nvariables: " + "{a: " * 20_000 + "x" + "}" * 20_000 + "\n", "deep.yaml:3:"),
    ("name: nan\nprimary: '#ff0000'\nluminosity_spread: .nan\n", "nan.yaml:3:1: luminosity_spread"),
    ("name: inject\nprimary: '#ff0000'\nvariables:\n  block-cursor-foreground: 'red; } * { display: none'\n",
     "inject.yaml:3:1: variables: Value error, the value of 'block-cursor-foreground' may hold only"),
    (ALIAS_BOMB, "aliases expand"),
    ("name: x\nprimary: '#ff0000'\ntext_alpha: 7\n", "x.yaml:3:1: text_alpha"),
])
def test_a_hostile_theme_is_refused_with_its_position(text: str, said: str) -> None:
    name = said.split(".yaml")[0] + ".yaml" if ".yaml" in said else "bomb.yaml"
    path = theme_file(name, text)
    with pytest.raises(ValueError) as err:
        load_theme_file(path)
    assert said in str(err.value)


def test_the_bundled_themes_pass_the_theme_model() -> None:
    from contractstudio.reading.data_files import read_data_file
    from contractstudio.studio.themes import _theme_model

    for path in bundled_themes_folder().glob("*.yaml"):
        read_data_file(path).validated(_theme_model())
    assert load_themes([bundled_themes_folder()])[1] == []


async def test_the_studio_starts_with_defaults_and_says_why_when_config_and_themes_are_hostile(make_app) -> None:
    config_file().write_bytes(b"theme: inject\n\xff\n")
    theme_file("inject.yaml", "name: inject\nprimary: '#ff0000'\nvariables:\n  foreground: 'red; } * { display: none'\n")
    theme_file("nan.yaml", "name: nan\nprimary: '#ff0000'\nluminosity_spread: .nan\n")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()  # the notes are shown on mount for 8 s: read them before a loaded machine lets them expire
        messages = " | ".join(str(n.message) for n in app._notifications)
        await settle(pilot)
        assert "config.yaml:2:1: the file is not UTF-8" in messages
        assert "inject.yaml:3:1: variables" in messages and "nan.yaml:3:1: luminosity_spread" in messages
        assert app.theme == "contractstudio-dark" and "inject" not in app.available_themes
        assert app.screen.query("*")  # drawn: the CSS was never given the injected rule
