"""The marks every Spark test module carries: slow, and skipped without a Java runtime."""

import os
import shutil

import pytest

HAS_JAVA = bool(shutil.which("java") or os.environ.get("JAVA_HOME"))

SPARK_TESTS = [pytest.mark.slow,
               pytest.mark.skipif(not HAS_JAVA, reason="no Java runtime: Spark 4 needs Java 17+ "
                                  "(Debian: apt-get install -y openjdk-17-jre-headless)")]
