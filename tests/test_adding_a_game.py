"""What adding a game touches, counted: a toy game (``tests/toy_game.py``) declared in a temporary
copy of the registry works through everything that derives from the registry, the hand-kept
tables that do not derive are the ones ``docs/adding-a-game.md`` names (each lacks the toy until
it is edited), and the doc's list of files is the list here, checked against the repository."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.rules.registry import GAMES, RULE_SETS, VARIANT_ID_MAX, RuleSet, check_rule_sets
from tests.toy_game import DECLARATION, PREFIX, TITLE, VARIANT

ROOT = Path(__file__).resolve().parent.parent
REGISTRY = ROOT / "engine" / "rules" / "registry.py"
DOC = ROOT / "docs" / "adding-a-game.md"

#: every file a new game touches, and why: ``new`` files (``<game>`` in the name, with Yukon's and
#: Forty Thieves' counterparts in the repository), the ``declaration``, hand-kept ``tables`` that
#: lack the toy until edited (the toy run finds each), ``catalogs`` that the extraction rewrites and
#: a translator completes, the deals' test ``vectors`` and ``prose`` naming every game in words, and
#: files touched only ``when`` a game needs something new there
TOUCHED = {
    "engine/rules/<game>.py": "new",
    "engine/solver/<game>.py": "new",
    "tests/engine/test_engine_rules_<game>.py": "new",
    "engine/rules/registry.py": "declaration",
    "engine/solver/registry.py": "table",
    "openapi.yaml": "table",
    "bench/naive_reference.py": "table",
    "bench/solver.py": "table",
    "bench/load_records.py": "table",
    "api/pages/i18n/messages.pot": "catalog",
    "api/pages/i18n/ko/LC_MESSAGES/messages.po": "catalog",
    "api/pages/i18n/fi/LC_MESSAGES/messages.po": "catalog",
    "tests/engine/test_engine_codes_deals.py": "vectors",
    "README.md": "prose",
    "docs/rules.md": "prose",
    "docs/game-codes.md": "prose",
    "docs/winnability.md": "prose",
    "engine/messages.py": "when",
    "engine/rules/base.py": "when",
    "engine/actions.py": "when",
    "docs/move-notation.md": "when",
}
#: the games' own files, whose pattern the new files follow
COUNTERPARTS = {"<game>": ("yukon", "forty_thieves")}

#: run in a fresh interpreter: the engine is the copy, then the probes run and print what they saw
BOOT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from tests.test_adding_a_game import probe_with_toy
print(json.dumps(probe_with_toy(sys.argv[1])))
"""


def engine_with_toy(folder: Path) -> Path:
    """A copy of the engine whose registry declares the toy, added to ``RULE_SETS`` before the
    lookups and games are built from it (where a developer adds a declaration)."""
    text = REGISTRY.read_text(encoding="utf-8")
    marker = re.search(r"^#: every game, by its code letters\n", text, re.MULTILINE)
    assert marker, "the registry no longer builds GAMES after RULE_SETS: move the toy's insertion point"
    # the sources only: without its compiled modules the copy runs as pure Python
    shutil.copytree(ROOT / "engine", folder / "engine", ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"))
    copy = folder / "engine" / "rules" / "registry.py"
    copy.write_text(text[: marker.start()] + DECLARATION + text[marker.start():], encoding="utf-8")
    return folder


# -- in the fresh interpreter, with the toy declared ------------------------------------------

def _engine_and_verifier() -> dict[str, Any]:
    from io import StringIO

    from engine import Game, IllegalActionError, parse_action
    from tests.play import play_greedy
    from verifier import replay
    from verifier.cli import build_parser, main

    code = f"{PREFIX}-AAAAAAB"
    log = play_greedy(code, 30)
    game, refused = Game.from_code(code), None
    for source in range(1, 9):  # a column's card onto a column it does not build on
        for target in (t for t in range(1, 9) if t != source):
            try:
                game.push(parse_action(f"T{source}>T{target}"))
                game.undo()
            except IllegalActionError:
                refused = refused or f"T{source}>T{target}"
    out = StringIO()
    main(["deal", code, "--json"], out=out)
    bad = replay(code, [refused])
    return {"deal": json.loads(out.getvalue()), "log": log, "replay": replay(code, log).to_json(),
            "refused": {"legal": bad.legal, "rule": bad.error.rule if bad.error else None},
            "cli_help": build_parser(solver=False).format_help()}


def _service(database: str) -> dict[str, Any]:
    from api import create_app
    from tests.play import play_greedy

    app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{database}", "RATELIMIT_ENABLED": False,
                      "API_KEYS_REQUIRED": False, "CELERY_BROKER_URL": None, "FAIRPLAY_TIMES_REQUIRED": False,
                      "FAIRPLAY_SOLVE_TOP": None})
    client, code = app.test_client(), f"{PREFIX}-AAAAAAB"
    stored = client.post("/api/v1/records", json={"code": code, "player": "ann", "moves": play_greedy(code, 30)})
    board = client.get(f"/api/v1/leaderboard?variant={VARIANT}")
    seen = {"stored": stored.status_code, "record": stored.get_json(), "board": board.get_json(),
            "home": client.get("/").get_data(as_text=True),
            "deal_page": client.get(f"/deals/{code}").get_data(as_text=True)}
    app.extensions["api.platform.db"].dispose()
    return seen


def _bench() -> dict[str, Any]:
    from contextlib import redirect_stdout
    from io import StringIO

    from bench import corpus
    from bench import solver as solver_bench
    from bench.fairplay import measure

    letters = PREFIX[:2], PREFIX[-1]
    shown = StringIO()
    with redirect_stdout(shown), pytest.raises(SystemExit):
        solver_bench.main(["--help"])
    return {"fairplay": letters in measure.RULE_SETS and measure.title(letters) == TITLE,
            "corpus": VARIANT in corpus.VARIANTS, "solver_options": "--toy-nodes" in shown.getvalue()}


def _hand_kept() -> dict[str, bool]:
    """Per hand-kept file: whether it already knows the toy (it should not: each needs an edit)."""
    from api.pages.i18n import extract
    from bench import load_records, naive_reference
    from bench import solver as solver_bench
    from engine.solver.registry import SOLVERS

    stale = {str(path.relative_to(extract.ROOT)) for path, text in extract.outputs().items()
             if not path.exists() or path.read_bytes() != text}
    enums = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))["components"]["schemas"]
    knows = {
        "engine/solver/registry.py": VARIANT in SOLVERS,
        "openapi.yaml": VARIANT in enums["Variant"]["enum"],
        "bench/naive_reference.py": PREFIX[:2] in naive_reference.GAMES,
        "bench/solver.py": any(VARIANT in table for table in (solver_bench.FULL, solver_bench.QUICK,
                                                               solver_bench.NODE_BUDGETS)),
        "bench/load_records.py": VARIANT in load_records.SHARES,
    }
    knows.update({path: path not in stale for path, kind in TOUCHED.items() if kind == "catalog"})
    return knows


def probe_with_toy(folder: str) -> dict[str, Any]:
    return {**_engine_and_verifier(), **_service(f"{folder}/toy.sqlite3"), "bench": _bench(),
            "hand_kept": _hand_kept()}


# -- the tests ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = engine_with_toy(tmp_path_factory.mktemp("toy"))
    run = subprocess.run([sys.executable, "-c", BOOT, str(folder)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    seen: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return seen


def test_a_toy_game_deals_and_replays_from_its_declaration_alone(toy):
    assert {k: toy["deal"][k] for k in ("game", "rules", "variant")} == {"game": "toy", "rules": "toy",
                                                                          "variant": VARIANT}
    assert [len(column) for column in toy["deal"]["tableau"]] == [7] * 4 + [6] * 4
    verdict = toy["replay"]
    assert verdict["legal"] and verdict["actions"] == len(toy["log"]) > 0 and verdict["variant"] == VARIANT
    assert toy["refused"] == {"legal": False, "rule": "tableau.build"}
    assert "Yukon, Forty Thieves and Toy game codes" in " ".join(toy["cli_help"].split())


def test_the_service_stores_ranks_and_shows_the_toy(toy):
    assert toy["stored"] == 201, toy["record"]
    assert toy["record"]["variant"] == VARIANT
    assert [entry["record_id"] for entry in toy["board"]["entries"]] == [toy["record"]["id"]]
    assert "Verified games of Yukon, Forty Thieves and Toy" in toy["home"]
    # the board's wording follows the toy's scoring: a take-back loop adds 10 − 5, and wins earn alike
    caption = re.search(r'<caption class="board-order">(.*?)</caption>', toy["deal_page"], re.S)
    assert caption and "adds 5 to it" in caption.group(1)
    assert "Earned" not in toy["deal_page"]


def test_the_benchmarks_lists_take_the_toy(toy):
    assert toy["bench"] == {"fairplay": True, "corpus": True, "solver_options": True}


def test_each_hand_kept_file_the_doc_names_lacks_the_toy_until_edited(toy):
    hand_kept = {path for path, kind in TOUCHED.items() if kind in ("table", "catalog")}
    assert set(toy["hand_kept"]) == hand_kept
    assert not any(toy["hand_kept"].values()), toy["hand_kept"]


def test_the_hand_kept_tables_cover_every_rule_set_today():
    from bench import load_records, naive_reference
    from bench import solver as solver_bench
    from engine.solver.registry import SOLVERS

    variants = {s.variant for s in RULE_SETS}
    assert set(SOLVERS) == set(solver_bench.FULL) == set(solver_bench.QUICK) == set(solver_bench.NODE_BUDGETS) \
        == set(load_records.SHARES) == variants
    assert set(naive_reference.GAMES) == set(GAMES)


def _doc_list() -> list[str]:
    """The paths of the doc's list (its section *Every file, in one list*), in its order."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Every file, in one list", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^- `([^`]+)`", section, re.MULTILINE)


def test_the_doc_lists_every_file_a_new_game_touches():
    listed = _doc_list()
    assert len(listed) == len(set(listed))
    assert set(listed) == set(TOUCHED), (sorted(set(listed) - set(TOUCHED)), sorted(set(TOUCHED) - set(listed)))
    assert f"touches {len(TOUCHED)} files" in " ".join(DOC.read_text(encoding="utf-8").split())


def test_the_listed_files_are_in_the_repository():
    for path, kind in TOUCHED.items():
        if kind == "new":
            for placeholder, games in COUNTERPARTS.items():
                if placeholder in path:
                    assert any((ROOT / path.replace(placeholder, game)).exists() for game in games), path
        else:
            assert (ROOT / path).is_file(), path
    for path in (p for p, kind in TOUCHED.items() if kind in ("prose", "vectors")):  # each names every game
        text = (ROOT / path).read_text(encoding="utf-8")
        assert all(game.title in text or game.name in text for game in GAMES.values()), path


def test_the_registry_refuses_a_variant_id_the_databases_cannot_hold():
    from api.platform.models import Base

    columns = [c for table in Base.metadata.tables.values() for c in table.columns if c.name == "variant"]
    assert columns and {c.type.length for c in columns} == {VARIANT_ID_MAX}  # type: ignore[attr-defined]
    assert all(len(s.variant) <= VARIANT_ID_MAX for s in RULE_SETS)
    s = RULE_SETS[-1]
    too_long = RuleSet(game=s.game, letter="X", rules_name=s.rules_name, variant="x" * (VARIANT_ID_MAX + 1),
                       title=s.title, layout=s.layout, stock=s.stock, scoring=s.scoring, max_group=s.max_group,
                       rules_factory=s.rules_factory)
    with pytest.raises(ValueError, match=f"variant id 'x+': 1 to {VARIANT_ID_MAX} lower-case"):
        check_rule_sets((*RULE_SETS, too_long))
    with pytest.raises(ValueError, match="declared twice"):
        check_rule_sets((*RULE_SETS, RULE_SETS[0]))
