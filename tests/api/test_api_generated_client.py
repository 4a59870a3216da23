"""A client generated from openapi.yaml by ``openapi-python-client`` (as a game backend
would make one) drives a live server: a deal, a verification, a player, a record."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.api.test_api_server import gunicorn, wait_ready  # noqa: F401 (gunicorn: the fixture)
from tests.conftest import ROOT

GENERATOR = Path(sys.executable).with_name("openapi-python-client")
CODE = "YU1-C-AAAAAAB"


@pytest.fixture
def generated(tmp_path: Path):
    """The client package, generated into ``tmp_path`` and importable as ``solitaire_client``."""
    target = tmp_path / "solitaire_client"
    environ = {**os.environ, "PATH": f"{GENERATOR.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(GENERATOR), "generate", "--path", str(ROOT / "openapi.yaml"), "--meta", "none",
                           "--output-path", str(target)], capture_output=True, text=True, timeout=300, env=environ)
    assert done.returncode == 0 and (target / "client.py").exists(), done.stdout + done.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module("solitaire_client")
    finally:
        sys.path.remove(str(tmp_path))
        for name in [name for name in sys.modules if name.split(".")[0] == "solitaire_client"]:
            del sys.modules[name]


@pytest.mark.slow
def test_a_generated_client_plays_deals_verify_players_and_records(generated, gunicorn, legal_log):  # noqa: F811
    port, server, _ = gunicorn(1)
    wait_ready(port, server)
    deals = importlib.import_module("solitaire_client.api.deals.get_deal")
    verify = importlib.import_module("solitaire_client.api.verification.verify")
    register = importlib.import_module("solitaire_client.api.players.register_player")
    submit = importlib.import_module("solitaire_client.api.records.submit_record")
    get_record = importlib.import_module("solitaire_client.api.records.get_record")
    models = importlib.import_module("solitaire_client.models")
    base = f"http://127.0.0.1:{port}/api/v1"
    anyone = generated.Client(base_url=base, raise_on_unexpected_status=True)

    deal = deals.sync(CODE.lower(), client=anyone)
    assert isinstance(deal, models.Deal) and deal.code == CODE
    moves = legal_log(CODE, 8)
    verdict = verify.sync(client=anyone, body=models.VerifyRequest(code=CODE, moves=moves))
    assert isinstance(verdict, models.Verdict) and verdict.verified and verdict.actions == 8
    refused = verify.sync(client=anyone, body=models.VerifyRequest(code="YU1-X-AAAAAAB", moves=moves))
    assert isinstance(refused, models.Problem) and refused.status == 422

    player = register.sync(client=anyone, body=models.PlayerRequest(name="Jääskeläinen"))
    assert isinstance(player, models.NewPlayer) and player.token.startswith("svp_")
    as_player = generated.AuthenticatedClient(base_url=base, token=player.token, raise_on_unexpected_status=True)
    times = [1500 * (i + 1) for i in range(len(moves))]  # (a game without times would rank nowhere: untimed)
    record = submit.sync(client=as_player, body=models.RecordRequest(code=CODE, moves=moves, times=times))
    assert isinstance(record, models.Record), record
    assert record.player == "Jääskeläinen" and record.actions == 8 and record.ranked
    again = get_record.sync(record.id, client=anyone)
    assert isinstance(again, models.Record) and again.canonical == record.canonical
