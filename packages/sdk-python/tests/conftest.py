"""Shared helpers of the SDK tests; the environment comes from svc-sdk-services (packages/sdk-codegen)."""
import json
import os

import pytest


def env(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail("%s is not set: run the tests through `npm test` (svc-sdk-services starts the mocks and the server)" % name)
    return value


def snake(name):
    """openapi-generator's snake_case of parameter and operation names."""
    import re

    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    name = re.sub(r"([a-z\d])([A-Z])", r"\1_\2", name)
    return name.replace("-", "_").replace(".", "_").lower()


@pytest.fixture(scope="session")
def mock_urls():
    return json.loads(env("SVC_MOCK_URLS"))


@pytest.fixture(scope="session")
def server_urls():
    return json.loads(env("SVC_SERVER_URLS"))
