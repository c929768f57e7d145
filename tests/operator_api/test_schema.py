"""Schemathesis drives every operator endpoint against the live OpenAPI schema: no 5xx, every
response as documented, schema-valid requests accepted, schema-invalid ones refused."""

import pytest
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from accounts.operators import open_session
from tests.schema_support import live_schema

pytestmark = pytest.mark.django_db

schema = live_schema(r"^/api/operator/v1/")

#: Codes of answers a schema-valid request may rightly get: which currencies an operator uses and
#: how many decimals each has are the operator's data, not the schema's.
DATA_REFUSALS = {"currency_not_allowed", "invalid_amount"}


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_operator_api_conforms(case, schema_settings, acme, bolt, shared_round, bolt_round):
    """Every operator endpoint as acme (players p1 and p2 with EUR and USD wallets, bets in a
    settled round, a session), the throttle off. Schema-valid yet rightly refused (400): a made-up
    cursor (only the API makes them), a date_from after date_to, and the ``DATA_REFUSALS``. Every
    request carries acme's key: a negative case whose only fault was a missing Authorization header
    is no longer invalid once signed, so the "invalid data rejected" check skips those."""
    open_session(operator=acme[0], player="p1", currency="EUR")
    query = case.query or {}
    made_up = "cursor" in query or str(query.get("date_from", "")) > str(query.get("date_to", "~"))
    excluded = [positive_data_acceptance] if made_up else []
    if not any(name.lower() == "authorization" for name in case.headers or {}):
        excluded.append(negative_data_rejection)
    headers = {"Authorization": f"Bearer {acme[1]}"}
    response = case.call(headers=headers)
    if response.status_code == 400 and response.json().get("code") in DATA_REFUSALS:
        excluded.append(positive_data_acceptance)
    case.validate_response(response, headers=headers, excluded_checks=excluded)
