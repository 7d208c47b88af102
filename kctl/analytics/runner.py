"""The SparkSession for kctl analytics: ``local[*]`` by default, any ``--master`` and
``--conf key=value`` passed through; Spark's UI off, its logs quiet (errors only, on stderr),
progress bars on stderr when stderr is a terminal.

A missing pyspark or Java is one line naming the fix."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from kctl.errors import KctlError
from kctl.parsing import key_value

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"

_LOG4J2 = """\
status = error
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = spark: %p %c{{1}}: %m%n%ex
logger.jetty.name = org.sparkproject.jetty
logger.jetty.level = error
logger.parquet.name = org.apache.parquet
logger.parquet.level = error
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = {level}
"""


class SparkUnavailable(KctlError):
    """pyspark or Java is missing, or the Spark driver did not start."""


# What the JVM and Spark's launcher print on stderr before any log configuration applies:
# not errors, not for operators. Everything else the JVM writes still reaches stderr.
JVM_NOISE = (
    b"WARNING: Using incubator modules",
    b"Setting default log level to",
    b"To adjust logging level use sc.setLogLevel",
    b"NativeCodeLoader: Unable to load native-hadoop library",
    b"WARN NativeCodeLoader",
)


def quiet_jvm_stderr() -> None:
    """From now on, the processes this one starts (Spark's JVM) write stderr into a pipe that a
    thread copies to the real stderr without the launcher's noise lines (JVM_NOISE). Python's
    own stderr is restored at once; the JVM keeps the pipe for its lifetime."""
    import threading

    read_end, write_end = os.pipe()
    real = os.dup(2)
    os.dup2(write_end, 2)
    os.close(write_end)

    def copy() -> None:
        with os.fdopen(read_end, "rb", buffering=0) as pipe:
            pending = b""
            while chunk := pipe.read(65536):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if not line.strip() or any(n in line for n in JVM_NOISE):
                        continue
                    os.write(real, line + b"\n")
            if pending:
                os.write(real, pending)

    threading.Thread(target=copy, name="kctl-jvm-stderr", daemon=True).start()

    def restore() -> None:
        os.dup2(real, 2)

    _restore_stderr.append(restore)


_restore_stderr: list[Any] = []


def parse_conf(items: list[str]) -> dict[str, str]:
    """``--conf key=value`` items as a dict (later ones win)."""
    return dict(key_value(item, "--conf", strip_key=True) for item in items)


def _require_pyspark() -> None:
    try:
        import pyspark  # noqa: F401
    except ImportError as exc:
        raise SparkUnavailable("pyspark is not installed", "pip install 'kctl[spark]'") from exc


def _require_java() -> None:
    home = os.environ.get("JAVA_HOME")
    if home and os.path.exists(os.path.join(home, "bin", "java")):
        return
    if shutil.which("java"):
        return
    raise SparkUnavailable(
        "Java was not found", "install a Java 17 or 21 runtime, or set JAVA_HOME"
    )


def require() -> None:
    """Fail fast, in one line, when pyspark or Java is missing (before any sampling)."""
    _require_pyspark()
    _require_java()


def session_conf(master: str, conf: dict[str, str], log_level: str = "ERROR") -> dict[str, str]:
    """The Spark configuration kctl starts with: our defaults, then the user's ``--conf``."""
    log4j = os.path.join(tempfile.gettempdir(), f"kctl-spark-log4j2-{log_level.lower()}.properties")
    with open(log4j, "w", encoding="utf-8") as fh:
        fh.write(_LOG4J2.format(level=log_level.lower()))
    ours = {
        "spark.app.name": "kctl analytics",
        "spark.master": master,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "true" if sys.stderr.isatty() else "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.adaptive.enabled": "true",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{log4j}",
        "spark.executor.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{log4j}",
    }
    merged = {**ours, **conf}
    merged["spark.pyspark.python"] = worker_python(conf)
    for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        if key in conf:
            merged[key] = f"{ours[key]} {conf[key]}"
    return merged


def worker_python(conf: dict[str, str]) -> str:
    """The Python that Spark's Python workers run (Burrow's rules, kctl.analytics.burrow, run
    there and need pyarrow): ``--conf spark.pyspark.python``, else ``PYSPARK_PYTHON``, else
    this interpreter (Spark's own default, ``python3`` on the PATH, may lack pyarrow)."""
    return conf.get("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON") or sys.executable


def build_session(
    master: str = DEFAULT_MASTER, conf: dict[str, str] | None = None, *, debug: bool = False
) -> SparkSession:
    """Start (or join) the SparkSession for this process."""
    _require_pyspark()
    _require_java()
    from pyspark.sql import SparkSession

    # pyspark takes the workers' Python from the environment when the context starts.
    os.environ["PYSPARK_PYTHON"] = worker_python(conf or {})

    builder = SparkSession.builder
    for key, value in session_conf(master, conf or {}, "WARN" if debug else "ERROR").items():
        builder = builder.config(key, value)
    if not debug:
        quiet_jvm_stderr()  # the JVM inherits the filtered stderr as it starts
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # the JVM did not start or the master refused us
        first = " ".join(str(exc).strip().splitlines()[:1])[:300]
        raise SparkUnavailable(f"Spark did not start with --master {master}", first) from exc
    finally:
        while _restore_stderr:  # Python's stderr is its own again; the JVM keeps the filter
            _restore_stderr.pop()()
    spark.sparkContext.setLogLevel("WARN" if debug else "ERROR")
    spark.sparkContext.addPyFile(rules_archive())
    return spark


# The modules Spark's Python workers run (kctl.analytics.burrow's Arrow function and the rules
# of kctl.lag.burrow), with their packages' faces: pure, importing nothing else of kctl.
WORKER_MODULES = (
    "kctl/__init__.py",
    "kctl/lag/__init__.py",
    "kctl/lag/burrow.py",
    "kctl/analytics/__init__.py",
    "kctl/analytics/burrow.py",
)


def rules_archive() -> str:
    """A zip of ``WORKER_MODULES`` for ``SparkContext.addPyFile``, so that executors on any
    cluster run the same rule code as the driver without kctl installed there. Named after
    its content (written once, reused)."""
    import hashlib
    import zipfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    sources = {name: (root / name).read_bytes() for name in WORKER_MODULES}
    digest = hashlib.sha256(b"".join(n.encode() + b"\0" + s for n, s in sources.items()))
    path = Path(tempfile.gettempdir()) / f"kctl-spark-rules-{digest.hexdigest()[:16]}.zip"
    if not path.exists():
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        with zipfile.ZipFile(partial, "w") as archive:
            for name, source in sources.items():
                archive.writestr(name, source)
        os.replace(partial, path)
    return str(path)


@contextmanager
def session(
    master: str = DEFAULT_MASTER, conf: dict[str, str] | None = None, *, debug: bool = False
) -> Iterator[SparkSession]:
    """A SparkSession that is stopped at the end; Spark's errors become one kctl line."""
    spark = build_session(master, conf, debug=debug)
    try:
        yield spark
    except KctlError:
        raise
    except Exception as exc:
        raise spark_error(exc) from exc
    finally:
        spark.stop()


def spark_error(exc: BaseException) -> KctlError:
    """A Spark/Py4J exception as one kctl error line."""
    from kctl.errors import NotFoundError

    text = " ".join(str(exc).strip().split())
    name = type(exc).__name__
    if "PATH_NOT_FOUND" in text or "Path does not exist" in text:
        return NotFoundError("lag samples not found", text[:300])
    return KctlError(f"the Spark job failed ({name})", text[:300])


def cores(spark: Any) -> int:
    return int(spark.sparkContext.defaultParallelism)
