"""The test run's own rules: in CI a skip fails the run unless its reason is allowed; markers are strict."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = (Path(__file__).parent / "conftest.py").read_text()


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, body: str, ci: str | None, *args: str) -> pytest.RunResult:
    pytester.makeconftest(CONFTEST)
    # the conftest imports a module of the tests' own (the real model server's fixture): beside it, as in tests/
    pytester.makepyfile(real_model=(Path(__file__).parent / "real_model.py").read_text())
    pytester.makepyfile(body)
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # only our conftest's hooks: fast, and no plugin's state shared
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "--strict-markers", *args)


def test_a_skip_without_an_allowed_reason_fails_a_ci_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    body = 'import pytest\n\n@pytest.mark.skipif(True, reason="tmux is not installed")\ndef test_terminal():\n    pass\n'
    result = _run(pytester, monkeypatch, body, "true")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*skipped in CI*", "*test_terminal: tmux is not installed*"])
    assert _run(pytester, monkeypatch, body, None).ret == pytest.ExitCode.OK  # on a laptop a skip stays a skip


def test_a_skip_on_an_xdist_worker_fails_a_ci_run_too(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """scripts/test.sh runs the suite on both cores (pytest-xdist): a worker's skip is the controller's to count."""
    body = ('import pytest\n\n@pytest.mark.skipif(True, reason="tmux is not installed")\ndef test_terminal():\n    pass\n\n'
            'def test_other():\n    pass\n')
    result = _run(pytester, monkeypatch, body, "true", "-p", "xdist", "-n", "2")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*skipped in CI*", "*test_terminal: tmux is not installed*"])


def test_every_xdist_worker_fuzzes_with_the_seed_the_run_printed(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FUZZ_SEED", raising=False)
    body = ("import os\nfrom pathlib import Path\nimport pytest\nfrom conftest import FUZZ_SEED\n\n"
            "@pytest.mark.parametrize('n', range(8))\ndef test_seed(n):\n"
            "    Path(f\"seed-{os.environ['PYTEST_XDIST_WORKER']}-{n}\").write_text(str(FUZZ_SEED))\n")
    result = _run(pytester, monkeypatch, body, None, "-p", "xdist", "-n", "2")
    assert result.ret == pytest.ExitCode.OK
    [header] = [line for line in result.outlines if line.startswith("fuzz seed: ")]
    written = {p.name.split("-")[1]: p.read_text() for p in pytester.path.glob("seed-*")}
    assert set(written) == {"gw0", "gw1"} and set(written.values()) == {header.split()[2]}


def test_a_skip_with_an_allowed_reason_passes_a_ci_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    body = 'import pytest\n\ndef test_fifo():\n    pytest.skip("FIFOs are POSIX")\n'
    assert _run(pytester, monkeypatch, body, "true").ret == pytest.ExitCode.OK


def test_a_misspelt_marker_is_an_error(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    body = 'import pytest\n\n@pytest.mark.fuz\ndef test_x():\n    pass\n'
    result = _run(pytester, monkeypatch, body, None)
    assert result.ret != pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*'fuz' not found in `markers` configuration option*"])


def test_the_project_runs_with_strict_markers_and_short_fuzz_in_every_run() -> None:
    pyproject = (Path(__file__).parents[1] / "pyproject.toml").read_text()
    assert "--strict-markers" in pyproject
    fuzz = (Path(__file__).parent / "test_fuzz.py").read_text()
    longs = {line.split("(")[0][4:] for line in fuzz.splitlines() if line.startswith("def test_") and "_long(" in line}
    assert longs and all(name.removesuffix("_long") + "_short" in fuzz for name in longs)  # every long run has a short twin


def test_no_test_reaches_the_users_cache_or_config(tmp_path: Path) -> None:
    """Each test (and each xdist worker's) has its own: a reply cached by one test never answers another's request."""
    from contractstudio.evaluation.cache import default_cache_dir
    from contractstudio.trust import config_folder

    assert default_cache_dir().is_relative_to(tmp_path) and config_folder().is_relative_to(tmp_path)


def test_the_phoenix_test_waits_for_the_install_beside_it_and_fails_with_its_output(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """scripts/test.sh installs Phoenix beside the tests, not before them: only the Phoenix test waits for it."""
    from test_otel_phoenix import wait_for_the_install

    status = tmp_path / "phoenix.rc"
    (tmp_path / "phoenix").write_text("ERROR: No matching distribution found for arize-phoenix\n")
    monkeypatch.setenv("CONTRACTSTUDIO_PHOENIX_INSTALL", str(status))
    status.write_text("1\n")
    with pytest.raises(AssertionError, match="No matching distribution found for arize-phoenix"):
        wait_for_the_install()
    status.write_text("0\n")
    wait_for_the_install()  # installed: the test goes on
    script = (Path(__file__).parents[1] / "scripts" / "test.sh").read_text()
    assert script.index('wait "$phoenix"') > script.index(".venv/bin/python -m pytest -n")  # pytest does not wait for it
