"""Generated requests (schemathesis 4, from openapi.yaml) against the WSGI app, as
in production: API keys required. Valid and invalid input alike must get an
answer the contract allows, never a server error; an operation that declares
the API key must refuse a request without one or with a wrong one.

A bounded number of examples per operation keeps the run short
(``FUZZ_EXAMPLES``, default 40).
"""

from __future__ import annotations

import os
from datetime import UTC
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks
from schemathesis.config import SchemathesisConfig

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,
    checks.negative_data_rejection,
    checks.ignored_auth,
]



@pytest.fixture
def production_app(make_empty_app):
    """An empty app that requires API keys, and an admin key for it."""
    from api.platform.auth import create_key

    app = make_empty_app(API_KEYS_REQUIRED=True)
    with app.extensions["api.platform.db"].sessions() as session:
        token = create_key(session, "fuzzer", admin=True)[1]
        prepared(session)
    return app, token


def prepared(session):
    """What the worker tier keeps ready in production: the current challenges and a deal proved
    winnable per variant (without them those endpoints answer 503, as documented)."""
    from datetime import datetime

    import engine
    from api.challenges.windows import KINDS, window
    from api.platform.models import Challenge, Solvability
    from engine import BY_VARIANT, GameCode

    now = datetime.now(UTC)
    for variant, rules in BY_VARIANT.items():
        code = str(GameCode(rules.game, rules.letter, 1))
        for kind in KINDS:
            start, end = window(kind, now)
            session.add(Challenge(variant=variant, kind=kind, starts_at=start, ends_at=end, code=code, candidate=0,
                                  par=1, par_line="", prepared_at=now))
        # (a deal of its own: a running challenge's deal never comes out of the pool)
        session.add(Solvability(code=str(GameCode(rules.game, rules.letter, 2)), variant=variant, budget="1s", budget_seconds=1.0, budget_nodes=None,
                                engine_version=engine.__version__, rules_version=engine.RULES_VERSION,
                                status="winnable", reason="fixture", solution="", solution_actions=0, verified=True,
                                attempts=1, requested_at=now, solved_at=now))
    session.commit()


#: how invalid input may be refused: schemathesis' default list (4xx refusals; a 5xx fails
#: ``not_a_server_error`` anyway) plus 413, since a negative case with thousands of generated
#: log items can outgrow MAX_CONTENT_LENGTH, and a too-large body is refused before it is read
REJECTIONS = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]
schema = schemathesis.openapi.from_path(str(SPEC_PATH), config=SchemathesisConfig.from_dict(
    {"checks": {"negative_data_rejection": {"expected-statuses": REJECTIONS}}}))


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_generated_requests_get_contract_answers(case, production_app, auth):
    app, token = production_app
    # bind the operation to this test's app, so that every request (the checks' own probes
    # without the key included) goes to it through WSGI
    case.operation.app = case.operation.schema.app = app
    case.call_and_validate(headers=auth(token), checks=CHECKS)
