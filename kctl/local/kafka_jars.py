"""Where the jars of the local Apache Kafka cluster come from, and the Java that runs them.

In this order: ``--kafka-home DIR`` or ``KAFKA_HOME`` (an unpacked Apache Kafka distribution,
``DIR/libs/*.jar``); kctl's cache (``$XDG_CACHE_HOME/kctl/kafka/VERSION/libs``); else Maven
Central through ``mvn`` and the pom shipped in this package (``kafka-runtime.pom.xml``), whose
``dependency:copy-dependencies`` fills the cache. No downloader of our own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kctl.errors import KctlError

# The newest 4.x for which both the broker and kafka-tools are published on Maven Central.
DEFAULT_VERSION = "4.3.1"
_VERSION_RE = re.compile(r"^\d+\.\d+\.\d+$")
_COMPLETE = ".complete"

# Kafka 4 logs through Log4j 2; Kafka 3 through reload4j (Log4j 1). The version of the Log4j 2
# binding matches what Kafka 4.3's own build uses; Maven's nearest-wins makes the three agree.
_LOG4J2 = "2.25.4"
_LOGGING_4 = "\n".join(
    f"    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>{a}</artifactId>"
    f"<version>{_LOG4J2}</version></dependency>"
    for a in ("log4j-api", "log4j-core", "log4j-slf4j-impl")
)
_LOGGING_3 = (
    "    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId>"
    "<version>1.7.36</version></dependency>\n"
    "    <dependency><groupId>ch.qos.reload4j</groupId><artifactId>reload4j</artifactId>"
    "<version>1.2.25</version></dependency>"
)
_TOOLS = (
    "    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId>"
    "<version>{v}</version></dependency>"
)


@dataclass(frozen=True)
class KafkaRuntime:
    version: str
    libs: Path  # a directory of jars
    source: str  # "kafka-home", "cache" or "maven"

    @property
    def classpath(self) -> str:
        return str(self.libs / "*")

    @property
    def major(self) -> int:
        return int(self.version.split(".", 1)[0])


def cache_dir() -> Path:
    env = os.environ.get("KCTL_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kctl"


def check_version(version: str) -> str:
    if not _VERSION_RE.match(version):
        raise KctlError(
            f"not a Kafka version: {version!r}", "expected MAJOR.MINOR.PATCH, e.g. 4.3.1"
        )
    if _tuple(version) < (3, 3, 0):
        raise KctlError(f"Kafka {version} is too old", "the local cluster runs KRaft: 3.3 or newer")
    return version


def _tuple(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def java_binary() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def java_major(java: str) -> int | None:
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def require_java() -> str:
    """The java binary, version 17 or newer, or one line naming the fix."""
    java = java_binary()
    if java is None:
        raise KctlError(
            "Java is not installed",
            "Apache Kafka needs Java 17+: apt-get install openjdk-17-jre-headless, "
            "or use --engine tansu",
        )
    major = java_major(java)
    if major is None or major < 17:
        raise KctlError(
            f"{java} is Java {major or 'of an unknown version'}",
            "Apache Kafka 4 needs Java 17+: set JAVA_HOME to a JDK 17",
        )
    return java


def from_kafka_home(home: str | Path) -> KafkaRuntime:
    libs = Path(home).expanduser() / "libs"
    jars = sorted(libs.glob("kafka_2.*-*.jar")) if libs.is_dir() else []
    broker = [j for j in jars if re.match(r"kafka_2\.\d+-\d+\.\d+\.\d+\.jar$", j.name)]
    if not broker:
        raise KctlError(
            f"no Apache Kafka distribution in {home}",
            "expected libs/kafka_2.13-VERSION.jar (an unpacked kafka_2.13-VERSION.tgz)",
        )
    version = broker[0].name.split("-", 1)[1].removesuffix(".jar")
    return KafkaRuntime(version, libs, "kafka-home")


def _stamp(version: str) -> str:
    """What a complete cache of ``version`` records: a digest of the pom it was resolved from,
    so a kctl that wants other jars resolves again instead of using an older set."""
    import hashlib

    return f"{version} {hashlib.sha256(pom_text(version).encode()).hexdigest()[:16]}\n"


def cached(version: str) -> KafkaRuntime | None:
    libs = cache_dir() / "kafka" / version / "libs"
    try:
        if (libs / _COMPLETE).read_text() == _stamp(version):
            return KafkaRuntime(version, libs, "cache")
    except OSError:
        pass
    return None


def pom_text(version: str) -> str:
    template = (Path(__file__).parent / "kafka-runtime.pom.xml").read_text()
    major = int(version.split(".")[0])
    tools = _TOOLS.format(v=version) if _tuple(version) >= (3, 5, 0) else ""
    return (
        template.replace("@KAFKA_VERSION@", version)
        .replace("@TOOLS@", tools)
        .replace("@LOGGING@", _LOGGING_4 if major >= 4 else _LOGGING_3)
    )


def resolve_with_maven(version: str) -> KafkaRuntime:
    mvn = maven(
        f"Apache Kafka {version}",
        "apt-get install maven, or point --kafka-home/KAFKA_HOME at an unpacked distribution",
    )
    target = cache_dir() / "kafka" / version
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target, prefix=".resolve-") as work:
        pom = Path(work) / "pom.xml"
        pom.write_text(pom_text(version))
        out = Path(work) / "libs"
        cmd = [
            mvn,
            "-B",
            "-q",
            "-Dstyle.color=never",
            "-f",
            str(pom),
            "dependency:copy-dependencies",
            f"-DoutputDirectory={out}",
            "-DincludeScope=runtime",
        ]
        run_maven(cmd, f"Apache Kafka {version}", timeout=900)
        (out / _COMPLETE).write_text(_stamp(version))
        libs = target / "libs"
        if libs.exists():
            shutil.rmtree(libs)
        os.replace(out, libs)
    return KafkaRuntime(version, libs, "maven")


def maven(what: str, hint: str) -> str:
    """The mvn to fetch ``what`` with, or a KctlError (Maven is not installed) with ``hint``."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise KctlError(f"cannot fetch {what}: Maven is not installed", hint)
    return mvn


def run_maven(cmd: list[str], what: str, *, timeout: int, cwd: str | None = None) -> None:
    """Run ``cmd`` (an mvn command fetching ``what``): a KctlError when it does not finish
    within ``timeout`` seconds or fails (with Maven's first error)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        raise KctlError(
            f"cannot fetch {what}", f"mvn did not finish within {timeout // 60} minutes"
        ) from None
    if proc.returncode != 0:
        raise KctlError(f"cannot fetch {what} with mvn", _mvn_reason(proc))


def _mvn_reason(proc: subprocess.CompletedProcess[str]) -> str:
    plain = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout + proc.stderr)
    lines = [ln.strip() for ln in plain.splitlines() if ln.strip()]
    errors = [ln.removeprefix("[ERROR]").strip() for ln in lines if ln.startswith("[ERROR]")]
    errors = [e for e in errors if e]
    text = errors[0] if errors else (lines[-1] if lines else f"exit code {proc.returncode}")
    text = text.split(" -> [Help")[0]
    if any(
        s in text
        for s in ("Could not resolve", "Could not transfer", "Unknown host", "No plugin found")
    ):
        text += " — is Maven Central reachable (proxy in ~/.m2/settings.xml)?"
    return text[:400]


def locate(version: str | None = None, kafka_home: str | None = None) -> KafkaRuntime:
    """The jars to run, without fetching anything when a distribution or the cache has them."""
    home = kafka_home or os.environ.get("KAFKA_HOME")
    if home:
        runtime = from_kafka_home(home)
        if version and runtime.version != version:
            raise KctlError(
                f"{home} holds Kafka {runtime.version}, not {version}",
                "drop --kafka-version or point KAFKA_HOME elsewhere",
            )
        return runtime
    version = check_version(version or DEFAULT_VERSION)
    return cached(version) or resolve_with_maven(version)


def available_without_fetching(version: str | None = None) -> str | None:
    """Why the Kafka engine can run here (for the default engine choice), or None."""
    if java_binary() is None or (java_major(java_binary() or "") or 0) < 17:
        return None
    if os.environ.get("KAFKA_HOME"):
        return "Java 17 and KAFKA_HOME are available"
    if cached(version or DEFAULT_VERSION):
        return "Java 17 and the cached Kafka jars are available"
    if shutil.which("mvn"):
        return "Java 17 and Maven are available"
    return None
