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
    """`compoworld --manifests` run in-process (CliRunner) adds manifests to this process's library
    through an environment variable; undo that after the test, so no later test on the same worker
    sees another test's compiled services."""
    from compoworld.services import MANIFESTS_ENV

    before = os.environ.get(MANIFESTS_ENV)
    yield
    if os.environ.get(MANIFESTS_ENV) != before:
        if before is None:
            os.environ.pop(MANIFESTS_ENV, None)
        else:
            os.environ[MANIFESTS_ENV] = before
        from compoworld.services import registry
        from compoworld.tasks import generator, moves

        registry.cache_clear()
        moves.all_moves.cache_clear()
        generator.base_world.cache_clear()
