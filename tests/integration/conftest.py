"""Fixtures shared by the Spark integration tests."""

import pytest


@pytest.fixture(scope="module")
def spark():
    """A ``local[2]`` Spark session for one test module (the JVM starts once per module)."""
    from kneecap import spark_engine  # the spark extra: imported only where a test asks for Spark

    session = spark_engine.session("local[2]")
    yield session
    session.stop()
