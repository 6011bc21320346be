import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=int(os.environ.get("COMPOWORLD_PROPERTY_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
    derandomize=True,
)
settings.load_profile("default")


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _library_stays_as_it_was():
    """`compoworld --manifests` run in-process (CliRunner) makes a library with compiled services the
    process's active one; put back the one before after the test, so no later test on the same worker
    sees another test's compiled services."""
    from compoworld.core import library

    before = library.chosen()
    yield
    library.use(before)
