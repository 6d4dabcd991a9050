"""Which folders are trusted: the one decision the CLI, the studio and the language server all ask.

Trust unlocks what a file can do beyond describing a call: importing its Python hooks (`python:`,
`handler:`), and sending a key where only the file says (an `api_base` away from loopback that the
user did not give, or a key read from a variable other than the provider's usual one).

It is decided per folder, keyed by the resolved folder of the file whose hook would run (a file
reached through a symlink is judged where it really is). Trusting a folder trusts its subfolders,
never its parent or a sibling. A folder is trusted when the user

- named it: `--trust` trusts the folders of the paths on that command line (or the studio's);
- granted it for this session: "Trust once" in the studio's debugger;
- remembered it: "Always", kept in `trusted-folders.txt` in the config folder, honoured by every face.

The user's own config (`config.yaml`, `trusted_api_bases: [URL, ...]`) names the servers a key may
be sent to from any folder, as `--api-base` does for one command.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from contractstudio.providers import provider_of

if TYPE_CHECKING:
    from contractstudio.user_config import UserConfig

TRUST_FILE = "trusted-folders.txt"


def config_folder() -> Path:
    """$XDG_CONFIG_HOME/contractstudio (default ~/.config/contractstudio)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "contractstudio"


def folder_of(path: str | Path) -> Path:
    """The resolved folder a file belongs to (a folder is its own); where its hooks are looked up."""
    p = Path(path).resolve()
    return p if p.is_dir() else p.parent


def remembered_folders() -> frozenset[Path]:
    """The folders the user chose to trust always (one absolute path per line; '#' starts a comment)."""
    try:
        lines = (config_folder() / TRUST_FILE).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return frozenset()
    return frozenset(Path(line.strip()) for line in lines if line.strip() and not line.lstrip().startswith("#"))


def remember_folder(folder: str | Path) -> None:
    """Add a folder to the remembered list (written atomically)."""
    from contractstudio.storage.atomic import write_atomic

    folders = remembered_folders() | {folder_of(folder)}
    target = config_folder() / TRUST_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, "# Folders whose files may run Python hooks and send keys where they say (contractstudio --trust).\n"
                 + "".join(f"{f}\n" for f in sorted(folders)))


class Trust:
    """The trust decisions of one run of a face: folders named or granted now, and the remembered ones."""

    def __init__(self, granted: Iterable[str | Path] = (), *, remembered: bool = True) -> None:
        self._granted: set[Path] = {folder_of(p) for p in granted}
        self._remembered = remembered_folders() if remembered else frozenset()

    @classmethod
    def for_command(cls, paths: Iterable[str | Path], trust: bool) -> Trust:
        """The CLI's: `--trust` trusts the folders of the paths on the command line, and no other."""
        return cls(paths if trust else ())

    def allows(self, path: str | Path | None) -> bool:
        """Whether the file (or folder) at `path` may run its hooks and send keys where it says."""
        if path is None:
            return False
        here = folder_of(path)
        return any(here == t or t in here.parents for t in (*self._granted, *self._remembered))

    def grant(self, path: str | Path) -> Path:
        """Trust the folder of `path` for this session only ("Trust once"); returns that folder."""
        folder = folder_of(path)
        self._granted.add(folder)
        return folder

    def remember(self, path: str | Path) -> Path:
        """Trust the folder of `path` from now on, in every face ("Always"); returns that folder."""
        folder = folder_of(path)
        remember_folder(folder)
        self._remembered = self._remembered | {folder}
        self._granted.add(folder)
        return folder


@dataclass(frozen=True, slots=True)
class HookFolder:
    """Where a file's Python hooks are imported from, and whether they may be: one decision (see `hook_folder`)."""

    folder: Path | None = None  # the resolved folder of the file: hook modules are looked up here and nowhere else
    trusted: bool = False  # whether that same folder is trusted


def hook_folder(path: str | Path | None, trust: Trust | bool) -> HookFolder:
    """The import folder of a file's hooks and its trust, both from the file's resolved path, for every face.

    Deciding them apart is how a symlink borrowed trust (issue 18): trust judged where the link points,
    modules imported beside the link. `trust` is a face's Trust, or the caller's own bool (`cs.load(trust=True)`,
    an eval job whose face already asked Trust for this file).
    """
    if path is None:
        return HookFolder()
    folder = folder_of(path)
    return HookFolder(folder, trust.allows(folder) if isinstance(trust, Trust) else bool(trust))


# ----------------------------------------------------------------- where a key may go


def is_loopback(url: str | None) -> bool:
    """Whether a URL's host is this machine by its literal name (localhost, 127.0.0.0/8, ::1); DNS is never asked."""
    import ipaddress

    try:
        host = (urlsplit(url or "").hostname or "").rstrip(".").lower()
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def origin(url: str | None) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) of a URL: the server a key would reach, whatever the path."""
    try:
        parts = urlsplit(url or "")
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname:
        return None
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    return parts.scheme.lower(), parts.hostname.rstrip(".").lower(), port or default


def shown_origin(url: str) -> str:
    """The server of a URL as a user writes it (`http://[fc00::1]:8000`: an IPv6 host in brackets, as URLs need)."""
    where = origin(url)
    if where is None:
        return repr(url)
    scheme, host, port = where
    return f"{scheme}://" + (f"[{host}]" if ":" in host else host) + (f":{port}" if port not in (80, 443) else "")


def user_config() -> UserConfig:
    """The user's own config.yaml, validated by its one model (the defaults when absent or bad: a bad config never crashes)."""
    from contractstudio.user_config import CONFIG_FILE, load_user_config  # pydantic: only when asked

    return load_user_config(config_folder() / CONFIG_FILE)[0]


def user_api_bases() -> tuple[str, ...]:
    """The servers the user's own config allows keys to be sent to (`trusted_api_bases:` in config.yaml); none if it is bad."""
    return user_config().api_bases


def user_gave(url: str | None, given: Iterable[str]) -> bool:
    """Whether a server is one the user named: in `given` (--api-base, their config's trusted_api_bases)."""
    wanted = origin(url)
    return wanted is not None and any(origin(u) == wanted for u in given)


# The variables a provider's key is conventionally read from (litellm's own names), by provider (providers.py).
_USUAL_VARIABLES: dict[str, tuple[str, ...]] = {
    "azure": ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "cohere": ("COHERE_API_KEY", "CO_API_KEY"),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY"),
    "fireworks_ai": ("FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY"),
    "huggingface": ("HUGGINGFACE_API_KEY", "HF_TOKEN"),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "replicate": ("REPLICATE_API_KEY", "REPLICATE_API_TOKEN"),
}


def usual_key_variables(model: str | None) -> tuple[str, ...]:
    """The environment variables the model's provider conventionally reads its key from (OPENAI_API_KEY for openai/...)."""
    provider = provider_of(model)
    if not provider or not provider.replace("_", "").isalnum():
        return ()
    return _USUAL_VARIABLES.get(provider, (f"{provider.upper()}_API_KEY",))


def untrusted_key_routes(model: str | None, api_base: str | None, api_key_env: str | None,
                         given: Iterable[str] = ()) -> list[tuple[str, str]]:
    """What an `llm:` block asks that only a trusted folder may: [(key, why)]; empty when nothing needs trust.

    `api_base` is the file's; `given` are the servers the user named (--api-base, and `user_api_bases()`, their
    config's, read once by the face): this reads nothing from disk, so the analyzer may ask it on every key.
    """
    found: list[tuple[str, str]] = []
    if api_key_env:
        usual = usual_key_variables(model)
        if api_key_env not in usual:
            expected = f"the provider's usual variable is {' or '.join(usual)}" if usual else "no usual variable is known for this model"
            found.append(("api_key_env", f"reads the key from {api_key_env} ({expected})"))
    if api_base and not is_loopback(api_base) and not user_gave(api_base, given):
        host = shown_origin(api_base)
        found.append(("api_base", f"sends its requests, and the key, to {host}, a server only the file names"))
    return found
