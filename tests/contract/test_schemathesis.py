"""The API against its own OpenAPI schema: schemathesis over every operation, per role.

Each role's token gets every operation, so that the 401s, 403s and 404s are held to the
schema as much as the successes, under every check schemathesis has: the schema states
the server's rules, so data it allows is taken and data it refuses is refused (the rules
OpenAPI cannot state are listed in tests/contract/hooks.py). The budget is fixed and small
(a full run is ``python -m bench.contract``); the seed is fixed, so a failure here
reproduces.
"""

import pytest

from gating.roles import Role
from tests.contract import runner

# Random cases per operation, on top of the schema's boundary and type-violation cases.
MAX_EXAMPLES = 15


@pytest.mark.parametrize("role", list(Role), ids=str)
def test_api_matches_its_schema(role, contract_world, api_server, tmp_path):
    result = runner.run(
        api_server.base_url,
        contract_world,
        role,
        max_examples=MAX_EXAMPLES,
        checks=runner.ALL_CHECKS,
        workdir=tmp_path / "schemathesis",
    )

    assert not result.report["errors"], result.output
    assert result.operations["tested"] == result.operations["total"], result.output
    if result.failures:
        # The listing goes to the captured output, shown once under the failure.
        print(runner.describe(result, server_log=api_server.log()))
        pytest.fail(
            f"{len(result.failures)} distinct contract failures with the {role} token: "
            "each with its curl and response under 'Captured stdout call'",
            pytrace=False,
        )
