"""The dialect registry: every format of another tool that ContractStudio reads, one module each, by name.

A dialect says its name (`--dialect NAME`, `dialect:` in .contractstudio.yaml), the native kinds its documents
read as, the file endings it owns, how its text is told without parsing it (`sniff`: discovery, `check`, the
language server's and the studio's "is this ours?"), and how it is read:
- a YAML dialect reads one parsed document of a YAML file into native documents (`shaped`, `reader`);
- a file dialect (a `.py` file's contracted classes) reads a whole file of its own ending (`read_file`).
Everything that asks about dialects asks here, so a new dialect is one module that calls `register`.

Light on purpose (no reader is imported here): the CLI's parser takes its `--dialect` choices from `CHOICES`,
which loads the dialect modules only when they are asked for. The built-in modules are named as text and
imported on first use, as the analysis rules' modules are (so no import arrow runs back from here to them).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from contractstudio.reading.kinds import NATIVE

if TYPE_CHECKING:
    from contractstudio.findings.diagnostics import Diagnostic, Related
    from contractstudio.reading.nodes import Node, SourceDocument, SourceFile

YAML_ENDINGS = (".yaml", ".yml")
MAX_FILE_BYTES = 4 * 1024 * 1024  # a file of a file dialect larger than this is not read (no contract is that long)
BUILT_IN = (  # in the order their shapes are tried (LocalAI-RAG's is the more specific)
    "contractstudio.reading.dialects.localai_rag",
    "contractstudio.reading.dialects.agentanvil",
    "contractstudio.reading.dialects.symbolicai",
)


@dataclass(frozen=True, slots=True)
class YamlFile:
    """A YAML file being read, as a dialect's reader sees it."""

    source: SourceFile
    location: Path  # the file on disk (or where it would be): bases and settings are found from it
    pipelines_root: Path | None  # .contractstudio.yaml's `pipelines_root:` (where LocalAI-RAG's extends: looks last)
    load_base: Callable[[Path, tuple[Related, ...]], tuple[list[SourceDocument], str | None]]  # a base file, read once


class DocumentReader(Protocol):
    """Reads the documents of one file in one dialect; its findings collect in `diagnostics`."""

    diagnostics: list[Diagnostic]

    def read(self, doc: SourceDocument) -> list[SourceDocument]:
        """The native documents one document of the dialect reads as (none when it cannot be read)."""
        ...


class Dialect(Protocol):
    """A format of another tool read into the native shapes (see the module's docstring)."""

    name: str
    kinds: tuple[str, ...]  # the native kinds its documents read as
    extensions: tuple[str, ...]  # the file endings discovery lists for it
    described: str  # how its files look, for the hint of a document that is nothing we know

    def sniff(self, text: str) -> str | None:
        """The native kind a text of this format reads as, without parsing it; None when it is not this format."""
        ...

    def foreign(self, text: str) -> str | None:
        """What a text of this format's outer shape really is when it is not ours (why it is skipped), else None."""
        ...

    def shaped(self, root: Node | None) -> bool:
        """Whether a parsed YAML document has this format's shape (a YAML dialect)."""
        ...

    def reader(self, file: YamlFile) -> DocumentReader:
        """The reader of one YAML file's documents of this format."""
        ...

    def read_file(self, text: str, path: str) -> SourceFile:
        """A whole file of this dialect's ending read as native documents (a file dialect)."""
        ...


class BaseDialect:
    """Defaults for a dialect: a YAML dialect's module overrides `sniff`, `shaped` and `reader`; a file dialect's
    `extensions`, `sniff` and `read_file`."""

    name = ""
    kinds: tuple[str, ...] = ()
    extensions: tuple[str, ...] = YAML_ENDINGS
    described = ""

    def sniff(self, text: str) -> str | None:
        """Not recognized without parsing."""
        return None

    def foreign(self, text: str) -> str | None:
        """Nothing of this outer shape is another tool's."""
        return None

    def shaped(self, root: Node | None) -> bool:
        """No document has this shape."""
        return False

    def reader(self, file: YamlFile) -> DocumentReader:
        """A YAML dialect says how it reads its documents."""
        raise NotImplementedError(self.name)

    def read_file(self, text: str, path: str) -> SourceFile:
        """A file dialect says how it reads its files."""
        raise NotImplementedError(self.name)


_REGISTERED: dict[str, Dialect] = {}
_loaded = False


def register(dialect: Dialect) -> Dialect:
    """Add a dialect (a module calls this once, at its import); the same name again replaces it. Its documents must
    read as kinds the analyzer knows: every rule of those kinds then applies to them unchanged."""
    from contractstudio.reading.kinds import KNOWN_KINDS

    unknown = [k for k in dialect.kinds if k not in KNOWN_KINDS]
    if not dialect.name or dialect.name == NATIVE or not dialect.kinds or unknown:
        raise ValueError(f"dialect {dialect.name!r}: a name other than {NATIVE!r} and the native kinds its documents read as "
                         f"({', '.join(KNOWN_KINDS)}) are needed" + (f"; not a kind: {', '.join(unknown)}" if unknown else ""))
    _REGISTERED[dialect.name] = dialect
    return dialect


def forget(name: str) -> None:
    """Remove a dialect (a test's toy dialect)."""
    _REGISTERED.pop(name, None)


def dialects() -> list[Dialect]:
    """Every registered dialect, the built-in ones first, in the order their shapes are tried."""
    global _loaded
    if not _loaded:
        for module in BUILT_IN:
            importlib.import_module(module)  # each registers itself
        _loaded = True
    found = list(_REGISTERED.values())
    return [d for d in found if type(d).__module__ in BUILT_IN] + [d for d in found if type(d).__module__ not in BUILT_IN]


def yaml_dialects() -> list[Dialect]:
    """The dialects that read YAML files (those `--dialect` can name)."""
    return [d for d in dialects() if set(d.extensions) & set(YAML_ENDINGS)]


def named(name: str | None) -> Dialect | None:
    """The dialect of that name, or None (the native format, or no such dialect)."""
    return next((d for d in dialects() if d.name == name), None)


def names() -> tuple[str, ...]:
    """What `--dialect` and `dialect:` accept: the native format, then every YAML dialect."""
    return (NATIVE, *(d.name for d in yaml_dialects()))


def for_file(path: str | Path) -> Dialect | None:
    """The file dialect that owns a file by its ending (a `.py` file's classes), or None (YAML, read as YAML)."""
    name = str(path)
    return next((d for d in dialects() if not name.endswith(YAML_ENDINGS) and name.endswith(d.extensions)), None)


def file_endings() -> tuple[str, ...]:
    """The endings of files of the file dialects (discovery lists them when asked to)."""
    return tuple(e for d in dialects() for e in d.extensions if e not in YAML_ENDINGS)


def sniff_kind(text: str) -> str | None:
    """The native kind a YAML text of another format reads as, without parsing it (the first dialect that knows it)."""
    return next((kind for d in yaml_dialects() if (kind := d.sniff(text)) is not None), None)


def foreign(text: str) -> str | None:
    """What a text of a dialect's outer shape really is when it is not ours (the reason a file is skipped), else None."""
    return next((why for d in yaml_dialects() if (why := d.foreign(text)) is not None), None)


def detect(root: Node | None) -> Dialect | None:
    """The YAML dialect whose shape a parsed document has, or None (native)."""
    return next((d for d in yaml_dialects() if d.shaped(root)), None)


def described() -> str:
    """How the YAML dialects' files look, for the hint of a document that is nothing we know."""
    parts = [d.described for d in yaml_dialects() if d.described]
    return " and ".join(parts) if len(parts) < 3 else ", ".join(parts[:-1]) + " and " + parts[-1]


def hint() -> str:
    """The hint of a document that has no `kind:` and is no dialect's: what it may say, what else is read."""
    from contractstudio.reading.kinds import KNOWN_KINDS

    return (f"add 'kind: {KNOWN_KINDS[0]}' (or {', '.join(KNOWN_KINDS[1:])}); other formats are read too: {described()}; "
            f"--dialect {'|'.join(names())} forces one")


def forced_hint(root: Node | None, dialect: str) -> str:
    """The hint of a document read as `dialect` (by --dialect or a folder setting) without that dialect's shape: a
    native document is told so, not to add the `kind:` it has."""
    from contractstudio.reading.kinds import KNOWN_KINDS
    from contractstudio.reading.nodes import MapNode, ScalarNode

    kind = root.get("kind") if isinstance(root, MapNode) else None
    if isinstance(kind, ScalarNode) and kind.value in KNOWN_KINDS:
        return (f"it has kind: {kind.value} (the native format): drop --dialect {dialect} "
                "(or the dialect: of its folder's .contractstudio.yaml)")
    return hint()


class Choices:
    """`--dialect`'s choices for argparse, read from the registry only when an option is given or help is shown."""

    def __contains__(self, name: object) -> bool:
        return name in names()

    def __iter__(self) -> Iterator[str]:
        return iter(names())


CHOICES = Choices()

__all__ = ["BUILT_IN", "CHOICES", "MAX_FILE_BYTES", "YAML_ENDINGS", "BaseDialect", "Dialect", "DocumentReader", "YamlFile", "described",
           "detect", "dialects", "file_endings", "for_file", "forced_hint", "foreign", "forget", "hint", "named", "names", "register",
           "sniff_kind", "yaml_dialects"]
