"""SymbolicAI-style `@contract` classes in `.py` files, read statically (`ast`, never imported) as `kind: contract`.

Each contracted class becomes one native contract document built at the class's own spans:
the decorator's keywords are the `remedy:` settings (`pre_remedy` -> remedy.pre,
`remedy_retry_params` -> remedy.retry, ...), `forward`'s `input` annotation and return
annotation are `input` / `output`, `act`'s return annotation is `intermediate`, the models
the class uses (LLMDataModel / BaseModel subclasses of the file) are `types:`, their
`Field(description=..., ge=...)` the field specs. Every contract rule then applies
unchanged, at positions in the `.py` file. What only a Python class can get wrong
(forward's and act's signatures, the prompt property, post_remedy without post, fields
without descriptions) is reported here, with the PYC codes declared below.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Literal

from contractstudio.findings.diagnostics import Diagnostic, Span, declare, make
from contractstudio.reading.dialect_registry import MAX_FILE_BYTES, BaseDialect, register
from contractstudio.reading.dialects.python_tree import (
    contract_decorator,
    dotted,
    field_kwargs,
    fields_of,
    fields_with_targets,
    is_field_call,
    literal,
    literal_style,
    models_of,
    monotone_post,
    name_node,
)
from contractstudio.reading.dialects.synth import data_of
from contractstudio.reading.nodes import MapNode, Node, ScalarNode, SeqNode, SourceDocument, SourceFile, new_scalar

NAME = "symbolicai"
MAX_PY_BYTES = MAX_FILE_BYTES  # a Python file larger than this is not read (no contract class is that long)
# Tokens (words, numbers and punctuation marks, comments and strings included) a file may hold for `ast.parse` to
# read it: the parser's memory grows with them (about 400 bytes each: a 4 MB file of a 2,000,000-item list took 2 GB
# and 19 s), and no contract file is that long. 200,000 parse in about 80 MB. Counted before parsing, stopping at
# the bound (issue 32).
MAX_PY_TOKENS = 200_000
_TOKEN = re.compile(r"\w+|[^\w\s]")
_TOKEN_SLICE = 65_536  # characters counted at a time (a word cut in two counts twice: never fewer tokens)
DECORATOR_KEYS = ("pre_remedy", "post_remedy", "accumulate_errors", "verbose", "remedy_retry_params")
_REMEDY_KEYS = {"pre_remedy": "pre", "post_remedy": "post", "remedy_retry_params": "retry"}  # the settings' field names
_FIELD_KEYS = ("description", "ge", "gt", "le", "lt", "min_length", "max_length", "pattern")
_BUILTIN_TYPES = {"str": "str", "int": "int", "float": "float", "bool": "bool", "Any": "any", "object": "any",
                  "list": "list", "List": "list", "dict": "dict", "Dict": "dict", "None": "None", "NoneType": "None"}
# Cheap discovery: a decorator line `@contract(` / `@strategy.contract(` followed, within _DECORATOR_REACH characters,
# by a `class` line. Each is matched at a line's start and never past its line, in one pass over the file's head
# (issue 32: `^@...contract\b[\s\S]{0,4000}?^class\s` read 4,000 characters after every decorator: 85 s on 12 MB).
_CONTRACTED = re.compile(r"^(?:@(?:[A-Za-z_]\w*\.)*contract\b|class\s)", re.M)
_DECORATOR_REACH = 4000
Function = ast.FunctionDef | ast.AsyncFunctionDef
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
_TAGS = {bool: "bool", int: "int", float: "float", str: "str", type(None): "null"}

declare("PYC001", "python-syntax", "error", "A `.py` file with a contracted class that Python cannot parse; the position is Python's.")
declare("PYC101", "forward-signature", "error",
        "`forward` missing, without an `input` parameter, with `*args`, or `input` without a type annotation.")
declare("PYC102", "forward-return", "error", "`forward` without a return annotation: the contract has no output type to generate.")
declare("PYC103", "act-signature", "error",
        "`act` whose first parameter is not an annotated `input`, or without a return annotation (SymbolicAI refuses it at call time).")
declare("PYC104", "prompt-property", "error", "A contracted class without a `prompt` property returning the task's text.")
declare("PYC105", "post-remedy-without-post", "warning",
        "`post_remedy=True` written but no `post` method: SymbolicAI fails every call of the class; ContractStudio "
        "runs it, remedying only the output's type (a warning: the class runs here, it breaks on SymbolicAI).")
declare("PYC106", "field-without-description", "info",
        "A model field without `Field(description=...)`: seed 000 recommends one on every field, it is what the LLM is told.")


def is_contracted(text: str) -> bool:
    """Whether a Python text has a `@contract` class (discovery, the language server), without parsing it.

    Only the first MAX_PY_BYTES characters are searched: a longer file is not read anyway (its YML006 says so)."""
    if "contract" not in text:
        return False
    decorator_end = None
    for found in _CONTRACTED.finditer(text, 0, MAX_PY_BYTES):
        if found.group().startswith("@"):
            decorator_end = found.end()
        elif decorator_end is not None and found.start() - decorator_end <= _DECORATOR_REACH:
            return True
    return False


def token_count(text: str, limit: int) -> int:
    """The tokens of a text (`_TOKEN`: words, numbers and punctuation marks), counted up to just past `limit`."""
    total = 0
    for start in range(0, len(text), _TOKEN_SLICE):
        total += _TOKEN.subn("", text[start:start + _TOKEN_SLICE])[1]
        if total > limit:
            break
    return total


class SymbolicAI(BaseDialect):
    """The dialect: a `.py` file's `@contract` classes, each read as `kind: contract`."""

    name = NAME
    kinds: tuple[str, ...] = ("contract",)
    extensions: tuple[str, ...] = (".py",)

    def sniff(self, text: str) -> str | None:
        """`contract` for a Python text with a contracted class."""
        return "contract" if is_contracted(text) else None

    def read_file(self, text: str, path: str) -> SourceFile:
        """The file's contracted classes (`read_python`)."""
        return read_python(text, path)


def read_python(text: str, path: str) -> SourceFile:
    """A `.py` file as native contract documents (one per contracted class) and the dialect's own findings."""
    source = SourceFile(path, text)
    reader = PythonReader(path, text)
    source.documents = reader.read()
    source.diagnostics = reader.diagnostics
    return source


class PythonReader:
    """One `.py` file's contracted classes -> native contract documents, with the PYC findings."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.lines: list[str] = []  # the lines ast numbers, split once the file is within the bounds (read)
        self.text = text
        self.diagnostics: list[Diagnostic] = []

    # ------------------------------------------------------------- positions and nodes

    def _column(self, line: int, offset: int) -> int:
        """ast's UTF-8 byte offset on a line as the 1-based character column our spans use."""
        if 1 <= line <= len(self.lines):
            return len(self.lines[line - 1].encode("utf-8")[:offset].decode("utf-8", errors="ignore")) + 1
        return offset + 1

    def span(self, node: ast.AST) -> Span:
        """Where an ast node is in the file."""
        line, end_line = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
        return Span(line, self._column(line, node.col_offset),  # type: ignore[attr-defined]
                    end_line, self._column(end_line, node.end_col_offset or node.col_offset))  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str | None:
        """The source text of a node (ast.get_source_segment splits the whole file on every call: quadratic here)."""
        where = [getattr(node, k, None) for k in ("lineno", "end_lineno", "col_offset", "end_col_offset")]
        if not all(isinstance(v, int) for v in where):
            return None
        line, end, col, end_col = (int(v) for v in where)  # type: ignore[arg-type]
        if not 1 <= line <= end <= len(self.lines):
            return None
        chunk = [x.encode("utf-8") for x in self.lines[line - 1:end]]
        if len(chunk) == 1:
            return chunk[0][col:end_col].decode("utf-8", errors="replace")
        return b"\n".join([chunk[0][col:], *chunk[1:-1], chunk[-1][:end_col]]).decode("utf-8", errors="replace")

    def scalar(self, value: Any, at: ast.AST) -> ScalarNode:
        s = self.span(at)
        tag = "tag:yaml.org,2002:" + _TAGS.get(type(value), "str")
        text = self.segment(at) or str(value)
        return new_scalar(s.line, s.column, s.end_line, s.end_column, tag, value, literal_style(text, value), text)

    def mapping(self, pairs: list[tuple[Node, Node]], at: ast.AST) -> MapNode:
        s, node = self.span(at), MapNode()
        node.line, node.column, node.end_line, node.end_column, node.tag = s.line, s.column, s.end_line, s.end_column, ""
        node.pairs = pairs
        return node

    def sequence(self, items: list[Node], at: ast.AST) -> SeqNode:
        s, node = self.span(at), SeqNode()
        node.line, node.column, node.end_line, node.end_column, node.tag = s.line, s.column, s.end_line, s.end_column, ""
        node.items = items
        return node

    def report(self, code: str, message: str, at: ast.AST, hint: str | None = None) -> None:
        self.diagnostics.append(make(code, message, self.path, self.span(at), hint=hint))

    # ------------------------------------------------------------- the file

    def read(self) -> list[SourceDocument]:
        if len(self.text) > MAX_PY_BYTES:
            self.diagnostics.append(make("YML006", f"the file is larger than {MAX_PY_BYTES // (1024 * 1024)} MiB: not read",
                                         self.path, Span(1, 1, 1, 2)))
            return []
        if token_count(self.text, MAX_PY_TOKENS) > MAX_PY_TOKENS:  # before the parser spends memory on each one
            self.diagnostics.append(make("YML006", f"the file has more than {MAX_PY_TOKENS:,} tokens: not parsed (parsing "
                                         "it could take gigabytes)", self.path, Span(1, 1, 1, 2)))
            return []
        self.lines = _LINE_BREAKS.split(self.text)  # not str.splitlines, which also breaks at \f, \x1c ...
        try:
            tree = ast.parse(self.text, self.path)
        except SyntaxError as err:
            line, column = err.lineno or 1, err.offset or 1
            self.diagnostics.append(make("PYC001", f"Python syntax error: {err.msg}", self.path,
                                         Span(line, column, line, column + 1)))
            return []
        except (RecursionError, MemoryError, ValueError) as err:
            self.diagnostics.append(make("YML006", f"the file cannot be parsed safely: {type(err).__name__}", self.path,
                                         Span(1, 1, 1, 2)))
            return []
        classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
        models = models_of(classes)
        for cls in models.values():
            try:
                self._field_descriptions(cls)
            except RecursionError:
                self.report("YML006", f"class '{cls.name}' is too deeply nested to read", name_node(cls))
        docs: list[SourceDocument] = []
        for cls in classes:
            decorator = contract_decorator(cls)
            if decorator is None:
                continue
            try:
                root = self.contract(cls, decorator, models)
                data = data_of(root)
            except RecursionError:  # an annotation or literal nested past what the reader walks: said, never a crash
                self.report("YML006", f"class '{cls.name}' is too deeply nested to read", name_node(cls))
                continue
            docs.append(SourceDocument(len(docs), root, data, cls.lineno, dialect=NAME))
        return docs

    def _field_descriptions(self, cls: ast.ClassDef) -> None:
        for name, ann, value in fields_of(cls):
            if field_kwargs(value).get("description") is None:
                self.report("PYC106", f"field '{cls.name}.{name}' has no Field(description=...): the LLM is told only its "
                            "name and type", ann, hint=f'{name}: {ast.unparse(ann)} = Field(description="...")')

    # ------------------------------------------------------------- one class

    def contract(self, cls: ast.ClassDef, decorator: ast.expr, models: dict[str, ast.ClassDef]) -> MapNode:
        """The native contract document of one contracted class."""
        methods = {n.name: n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        name_at = name_node(cls)
        pairs: list[tuple[Node, Node]] = [(self.scalar("kind", decorator), self.scalar("contract", decorator)),
                                          (self.scalar("name", name_at), self.scalar(cls.name, name_at))]
        pairs.append(self._prompt(cls, methods.get("prompt")))
        forward = methods.get("forward")
        input_ann, output_ann = self._forward(cls, forward)
        used: list[str] = []
        for key, ann in (("input", input_ann), ("output", output_ann)):
            at = ann if ann is not None else name_at
            pairs.append((self.scalar(key, at), self.scalar(self.type_string(ann, models, used), at)))
        act = methods.get("act")
        if act is not None:
            act_ann = self._act(act)
            at = act_ann if act_ann is not None else name_node(act)  # unannotated: PYC103 says so, the type reads as `any`
            pairs.append((self.scalar("intermediate", at), self.scalar(self.type_string(act_ann, models, used), at)))
            hook = self.mapping([(self.scalar("python", act), self.scalar(f"{cls.name}.act", act))], act)
            pairs.append((self.scalar("act", name_node(act)), hook))
        for role in ("pre", "post"):
            method = methods.get(role)
            items: list[Node] = [] if method is None else [  # the method is the condition: the engine calls it as a hook
                self.mapping([(self.scalar("python", method), self.scalar(f"{cls.name}.{role}", method))], method)]
            items += [self.mapping([(self.scalar("assert", item), self.scalar(item.value, item)),  # monotone: true
                                    (self.scalar("monotone", at), self.scalar(True, at))], item)
                      for item, at in (monotone_post(cls) if role == "post" else [])]
            if items:
                pairs.append((self.scalar(role, name_node(method) if method else cls), self.sequence(items, method or cls)))
        remedy, post_remedy = self._remedy(decorator)
        if remedy is not None:
            pairs.append(remedy)
        if isinstance(post_remedy, ast.expr) and "post" not in methods:  # SymbolicAI's default is off: only when asked
            self.report("PYC105", f"post_remedy=True but '{cls.name}' has no `post` method: SymbolicAI fails every call "
                        "of this class (\"Post-condition function not defined\"); ContractStudio runs it and remedies only "
                        "the output's type", post_remedy,
                        hint="add `def post(self, output) -> bool` raising a message on bad output, or drop post_remedy=True")
        pairs.append((self.scalar("types", cls), self._types(models, used, cls)))
        return self.mapping(pairs, cls)

    def _prompt(self, cls: ast.ClassDef, method: Function | None) -> tuple[Node, Node]:
        at = name_node(cls)
        if method is None or not any(dotted(d) == "property" for d in method.decorator_list):
            self.report("PYC104", f"'{cls.name}' has no `prompt` property" if method is None else
                        "`prompt` must be a property (@property) returning the task's text", at if method is None else name_node(method),
                        hint="add `@property` `def prompt(self) -> str:` returning the fixed task's text")
            return self.scalar("prompt", at), self.scalar("", at)
        returned = next((n.value for n in ast.walk(method) if isinstance(n, ast.Return) and n.value is not None), None)
        if isinstance(returned, ast.Constant) and isinstance(returned.value, str):
            return self.scalar("prompt", method), self.scalar(returned.value, returned)
        # computed in Python: not checkable statically; a neutral text keeps the prompt rules quiet
        return self.scalar("prompt", method), self.scalar("(computed in Python)", returned or method)

    def _forward(self, cls: ast.ClassDef, forward: Function | None) -> tuple[ast.expr | None, ast.expr | None]:
        if forward is None:
            self.report("PYC101", f"'{cls.name}' has no `forward` method: the contract has no input or output type",
                        name_node(cls), hint="def forward(self, input: MyInput, **kwargs) -> MyOutput:")
            return None, None
        args = forward.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        given = next((a for a in params if a.arg == "input"), None)
        if args.vararg is not None:
            self.report("PYC101", "`forward` must not take *args: the input is passed as the keyword `input`", args.vararg)
        if given is None:
            self.report("PYC101", "`forward` has no parameter named `input`", forward.args.args[-1] if forward.args.args else forward,
                        hint="def forward(self, input: MyInput, **kwargs) -> MyOutput:")
        elif given.annotation is None:
            self.report("PYC101", "`forward`'s `input` parameter has no type annotation: the contract has no input type", given,
                        hint="input: MyInput (an LLMDataModel subclass)")
        if forward.returns is None:
            self.report("PYC102", "`forward` has no return annotation: the contract has no output type to generate", name_node(forward),
                        hint="-> MyOutput (an LLMDataModel subclass, or a type such as list[str])")
        return (given.annotation if given is not None else None), forward.returns

    def _act(self, act: Function) -> ast.expr | None:
        positional = [*act.args.posonlyargs, *act.args.args][1:]  # after self
        first = positional[0] if positional else None
        if first is None:
            self.report("PYC103", "`act` must take the input as its first parameter after self", name_node(act),
                        hint="def act(self, input: MyInput, **kwargs) -> MyIntermediate:")
        elif first.arg != "input":
            self.report("PYC103", f"`act`'s first parameter is '{first.arg}': it must be named `input`", first)
        elif first.annotation is None:
            self.report("PYC103", "`act`'s `input` parameter has no type annotation", first)
        if act.returns is None:
            self.report("PYC103", "`act` has no return annotation: the intermediate type is unknown", name_node(act),
                        hint="-> MyIntermediate (an LLMDataModel subclass)")
        return act.returns

    def _remedy(self, decorator: ast.expr) -> tuple[tuple[Node, Node] | None, ast.expr | Literal[False] | None]:
        """The decorator's keywords as `remedy:`; and post_remedy's node (False when it is literally off, None when not given)."""
        if not isinstance(decorator, ast.Call):
            return None, None
        pairs: list[tuple[Node, Node]] = []
        post: ast.expr | Literal[False] | None = None
        for kw in decorator.keywords:
            if kw.arg is None:
                continue  # **settings: not readable statically
            if kw.arg == "post_remedy":
                post = False if literal(kw.value) is False else kw.value
            # the analyzer validates these with the decorator's own settings model (documents/decorator_model.py):
            # an unknown keyword goes in as it is written, and is the error the decorator raises
            value = self.value(kw.value)
            if value is None and kw.arg not in DECORATOR_KEYS:
                value = self.scalar(None, kw.value)  # computed, but the keyword itself is unknown: still reported
            if value is not None:
                pairs.append((self.scalar(_REMEDY_KEYS.get(kw.arg, kw.arg), kw), value))
        if not pairs:
            return None, post
        return (self.scalar("remedy", decorator), self.mapping(pairs, decorator)), post

    def value(self, node: ast.expr) -> Node | None:
        """A literal (a constant, a dict display or `dict(k=v)`, a list) as nodes at its spans; None when not literal."""
        if isinstance(node, ast.Constant):
            return self.scalar(node.value, node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            value = literal(node)
            return self.scalar(value, node) if value is not None else None
        if isinstance(node, ast.Dict):
            pairs: list[tuple[Node, Node]] = []
            for k, v in zip(node.keys, node.values, strict=True):
                item = self.value(v) if isinstance(k, ast.Constant) and isinstance(k.value, str) else None
                if item is not None and isinstance(k, ast.Constant):
                    pairs.append((self.scalar(k.value, k), item))
            return self.mapping(pairs, node)
        if isinstance(node, ast.Call) and dotted(node.func) == "dict" and not node.args:
            pairs = []  # the same list, for dict(k=v)
            for kw in node.keywords:
                item = self.value(kw.value) if kw.arg is not None else None
                if item is not None:
                    s = self.span(kw)
                    key = new_scalar(s.line, s.column, s.line, s.column + len(kw.arg or ""), "tag:yaml.org,2002:str",
                                     kw.arg, "", kw.arg or "")
                    pairs.append((key, item))
            return self.mapping(pairs, node)
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [self.value(e) for e in node.elts]
            return self.sequence([i for i in items if i is not None], node)
        return None

    # ------------------------------------------------------------- types

    def type_string(self, ann: ast.expr | None, models: dict[str, ast.ClassDef], used: list[str]) -> str:
        """An annotation in the format's type syntax; a name the file does not define reads as `any` (it is imported)."""
        if ann is None:
            return "any"
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):  # a string annotation
            try:
                return self.type_string(ast.parse(ann.value, mode="eval").body, models, used)
            except SyntaxError:
                return "any"
        if isinstance(ann, ast.Constant) and ann.value is None:
            return "None"
        if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
            return f"{self.type_string(ann.left, models, used)} | {self.type_string(ann.right, models, used)}"
        name = dotted(ann).rsplit(".", 1)[-1] if isinstance(ann, (ast.Name, ast.Attribute)) else None
        if name is not None:
            if name in models:
                if name not in used:
                    used.append(name)
                return name
            return _BUILTIN_TYPES.get(name, "any")
        if isinstance(ann, ast.Subscript):
            base = dotted(ann.value).rsplit(".", 1)[-1]
            args = list(ann.slice.elts) if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            inner = [self.type_string(a, models, used) for a in args]
            if base in ("Optional",) and len(inner) == 1:
                return f"{inner[0]} | None"
            if base == "Union":
                return " | ".join(inner)
            if base in ("list", "List", "Sequence", "set", "Set") and len(inner) == 1:
                return f"list[{inner[0]}]"
            if base in ("dict", "Dict", "Mapping") and len(inner) == 2:
                return f"dict[{inner[0]}, {inner[1]}]"
            if base == "Literal":
                return ast.unparse(ann).rsplit(".", 1)[-1] if "." in dotted(ann.value) else ast.unparse(ann)
        return "any"

    def _default(self, value: ast.expr | None, kwargs: dict[str, ast.expr]) -> Node | None:
        """A field's default as a node (`[]` for default_factory=list); None without one, or when it is not a literal."""
        if value is None:
            return None
        if not is_field_call(value):
            return self.value(value)
        if "default" in kwargs:
            return self.value(kwargs["default"])
        factory = dotted(kwargs["default_factory"]) if "default_factory" in kwargs else ""
        if factory in ("list", "set", "tuple", "dict"):
            return self.mapping([], kwargs["default_factory"]) if factory == "dict" else self.sequence([], kwargs["default_factory"])
        return None

    def _types(self, models: dict[str, ast.ClassDef], used: list[str], at: ast.ClassDef) -> MapNode:
        """The models the class uses (through its annotations and their fields), as `types:`."""
        pairs: list[tuple[Node, Node]] = []
        i = 0
        while i < len(used):  # `used` grows as field types name further models
            cls = models[used[i]]
            i += 1
            fields: list[tuple[Node, Node]] = []
            for name, ann, value, target in fields_with_targets(cls, models):
                spec: list[tuple[Node, Node]] = [(self.scalar("type", ann), self.scalar(self.type_string(ann, models, used), ann))]
                kwargs = field_kwargs(value)
                for key in _FIELD_KEYS:
                    if key in kwargs:
                        node = self.value(kwargs[key])
                        if node is not None:
                            spec.append((self.scalar(key, kwargs[key]), node))
                default = self._default(value, kwargs)
                if default is not None:
                    spec.append((self.scalar("default", value or ann), default))
                fields.append((self.scalar(name, target), self.mapping(spec, target)))
            decl = self.mapping([(self.scalar("fields", cls), self.mapping(fields, cls))], cls)
            pairs.append((self.scalar(cls.name, name_node(cls)), decl))
        return self.mapping(pairs, at)


register(SymbolicAI())
