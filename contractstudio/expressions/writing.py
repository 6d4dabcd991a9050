"""The lines of a generated function (generated.py): steps added where nothing happens between them, work counted in
a local and measures written inline, each as the meter (sandbox.Meter) does it. Only our own text is written here."""

from __future__ import annotations

from typing import Any


class Source:
    """The lines of one function's body, its table of constants, and the steps entered but not yet added."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 3  # inside `_make`, `_evaluate` and its `try`
        self.pending = 0
        self.constants: list[Any] = []
        self.temps = 0

    def constant(self, value: Any) -> str:
        self.constants.append(value)
        return f"_k{len(self.constants) - 1}"

    def temp(self) -> str:
        self.temps += 1
        return f"_t{self.temps}"

    def step(self) -> None:
        self.pending += 1

    def flush(self) -> None:
        """Add the steps of the nodes entered since the last line: nothing observable happened between them."""
        if self.pending:
            n, self.pending = self.pending, 0
            pad = "    " * self.depth
            self.lines += [f"{pad}_s += {n}", f"{pad}if _s > _MAX:", f"{pad}    _s = _MAX + 2",
                           f"{pad}    raise _steps_exceeded()"]

    def line(self, text: str) -> None:
        self.flush()
        self.lines.append("    " * self.depth + text)

    def block(self, head: str) -> _Indent:
        self.line(head)
        return _Indent(self)


class _Indent:
    __slots__ = ("src",)

    def __init__(self, src: Source) -> None:
        self.src = src

    def __enter__(self) -> None:
        self.src.depth += 1

    def __exit__(self, *exc: object) -> None:
        self.src.flush()  # a step entered in this block is added in it
        self.src.depth -= 1


def metered(w: Source, text: str) -> None:
    """A line calling a helper that measures with the meter: the meter is made if need be and given the work counted so
    far in `_d`, and `_d` takes what the helper added (so the two agree at every line; `finally` takes the larger)."""
    w.line("if _m is None:")
    w.line("    _m = _Meter()")
    w.line("_m.done = _d")
    w.line(text)
    w.line("_d = _m.done")


def work(w: Source, amount: str) -> None:
    """`Meter.work(amount)` counted in the local `_d`: the same sum, the same bound and error."""
    w.line(f"_d += {amount}")
    with w.block("if _d > _MAXWORK:"):
        w.line("raise _work_exceeded()")


def bounded(w: Source, t: str, known_list: bool = False) -> None:
    """`Meter.bounded(t)`: a str or a flat list measured inline, a bool, float or None not at all, anything else by the
    meter. A list's weight is `Meter.weight`'s (its length, a str item's length, 1 for an item that holds nothing);
    a list holding a container is measured by the meter (its weights are memoized by identity there)."""
    if not known_list:
        with w.block(f"if _type({t}) is _str:"):
            with w.block(f"if _len({t}) > _MAXSIZE:"):
                w.line("raise _too_large()")
            work(w, f"_len({t}) // 8 + 1")
        with w.block(f"elif _type({t}) in _UNMEASURED:"):
            w.line("pass")
        w.line(f"elif _type({t}) is not _list:")
        with _Indent(w):
            metered(w, f"{t} = _m.bounded({t})")
        w.line("else:")
        w.depth += 1
    w.line(f"_w = _len({t})")
    with w.block(f"for _x in {t}:"):
        with w.block("if _isinstance(_x, _str):"):
            w.line("_w += _len(_x)")
        with w.block("elif _isinstance(_x, _CONTAINERS):"):
            w.line("_w = -1")
            w.line("break")
        with w.block("else:"):
            w.line("_w += 1")
        with w.block("if _w > _MAXSIZE:"):
            w.line("break")
    with w.block("if _w < 0:"):
        metered(w, f"{t} = _m.bounded({t})")
    with w.block("else:"):
        with w.block("if _w > _MAXSIZE:"):
            w.line("raise _too_large()")
        work(w, f"_len({t}) + 1")
    if not known_list:
        w.flush()
        w.depth -= 1


def truth_test(value: str) -> str:
    """`sandbox.truth(value)` written inline for the plain types (a record is true; anything else goes to truth)."""
    return f"(_bool({value}) if _type({value}) in _PLAIN_TYPES else _truth({value}))"
