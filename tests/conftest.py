"""Shared test set-up: paths, and no test ever reaches beyond loopback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SAMPLES = ROOT / "samples"


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # litellm must never fetch its price map, and no real key may leak into a test;
    # nor may the user's own config (folders remembered as trusted, trusted_api_bases).
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user-config"))
    for key in list(os.environ):
        if key.endswith("_API_KEY"):
            monkeypatch.delenv(key, raising=False)
