"""Generated requests (schemathesis, from openapi.yaml): valid and invalid input
alike is answered as the contract says, and never with a server error."""

from __future__ import annotations

from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"
CHECKS = [checks.not_a_server_error, checks.status_code_conformance, checks.content_type_conformance,
          checks.response_schema_conformance, checks.negative_data_rejection]

schema = schemathesis.openapi.from_path(str(SPEC_PATH))


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_generated_requests_get_contract_answers(case, app):
    case.call_and_validate(app=app, checks=CHECKS)
