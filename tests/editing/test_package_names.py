"""The editing package's lazy names stay the functions they name, whatever was imported before them."""

import subprocess
import sys


def test_hover_is_the_function_even_after_every_editing_module_was_imported() -> None:
    # A submodule named like one of the package's lazy names replaced it once imported (the import system sets the
    # submodule as the package's attribute), so `editing.hover(...)` in the studio and the language server called
    # a module: "'module' object is not callable", depending on what ran first.
    probe = (
        "import importlib, pkgutil, contractstudio.editing as e\n"
        "for m in pkgutil.iter_modules(e.__path__): importlib.import_module(f'contractstudio.editing.{m.name}')\n"
        "print(sorted(n for n in e.__all__ if not callable(getattr(e, n))))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
