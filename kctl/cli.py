"""The root command: global options, sub-app registration, errors → one line and an exit code.

Nothing here (or in any ``kctl.commands`` module at import time) imports confluent_kafka,
kafka-python, pyspark or pyarrow, so ``kctl --help`` stays instant.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from typing import Any

import typer
from typer.core import TyperGroup

from kctl import __version__, arguments
from kctl.commands import _complete
from kctl.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    KctlError,
    UsageError,
    client_library_error,
)
from kctl.parsing import key_value, number_text


class _RootGroup(TyperGroup):
    """The root command: while the shell asks for candidates, the words are hoisted as for a
    run, so global options anywhere (-b, -p, --timeout) reach the completion functions."""

    def _main_shell_completion(
        self, ctx_args: Any, prog_name: str, complete_var: str | None = None
    ) -> None:
        var = complete_var or f"_{prog_name}_COMPLETE".replace("-", "_").upper()
        if os.environ.get(var):
            from typer._click.shell_completion import ShellComplete

            original = ShellComplete.get_completions

            def hoisted(comp: Any, args: list[str], incomplete: str) -> Any:
                return original(comp, completion_args(list(args)), incomplete)

            ShellComplete.get_completions = hoisted  # type: ignore[method-assign,assignment]
        super()._main_shell_completion(ctx_args, prog_name, complete_var)


app = typer.Typer(
    cls=_RootGroup,
    name="kctl",
    help="One command for Apache Kafka operations.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Example: kctl -b 127.0.0.1:9092 topics list -o json",
)

# Global options: accepted before or after the sub-command (see hoist_global_options).
_GLOBAL_WITH_VALUE = {
    "-b": "--bootstrap-server",
    "--bootstrap-server": "--bootstrap-server",
    "--bootstrap-servers": "--bootstrap-server",
    "-p": "--profile",
    "--profile": "--profile",
    "--command-config": "--command-config",
    "-X": "-X",
    "--timeout": "--timeout",
    "-o": "--output",
    "--output": "--output",
}
_GLOBAL_FLAGS = {"--debug", "--no-color", "--no-headers"}
# A global option hoisted from after the sub-command only when its value is a URL: `kctl local
# up --schema-registry` and `kctl local fetch --schema-registry` are flags of their own.
_GLOBAL_URL = {"--schema-registry"}


def _is_url(value: str) -> bool:
    return "://" in value


def hoist_global_options(argv: list[str]) -> list[str]:
    """Move global options found anywhere before ``--`` to the front, so that
    ``kctl topics list -o json`` means ``kctl -o json topics list`` as operators expect."""
    hoisted, rest = _split_global_options(argv)
    return hoisted + rest


def _split_global_options(argv: list[str]) -> tuple[list[str], list[str]]:
    """(the global options, normalised; everything else in order)."""
    hoisted: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest.extend(argv[i:])
            break
        name, eq, value = arg.partition("=")
        if arg in _GLOBAL_FLAGS:
            hoisted.append(arg)
        elif arg in _GLOBAL_URL and i + 1 < len(argv) and _is_url(argv[i + 1]):
            hoisted += [arg, argv[i + 1]]
            i += 1
        elif eq and name in _GLOBAL_URL:
            hoisted += [name, value]
        elif arg in _GLOBAL_WITH_VALUE and i + 1 < len(argv):
            hoisted += [_GLOBAL_WITH_VALUE[arg], argv[i + 1]]
            i += 1
        elif eq and name.startswith("--") and name in _GLOBAL_WITH_VALUE:
            hoisted += [_GLOBAL_WITH_VALUE[name], value]
        elif len(arg) > 2 and arg[:2] in ("-o", "-b", "-X", "-p") and arg[1] != "-":
            hoisted += [_GLOBAL_WITH_VALUE[arg[:2]], arg[2:]]
        else:
            rest.append(arg)
        i += 1
    return hoisted, rest


def completion_args(args: list[str]) -> list[str]:
    """The complete words of a command line being completed, arranged as :func:`main` arranges
    a run's: global options first. A global option whose value is the word being completed
    (``kctl topics list -o <TAB>``) goes last, after the other global options and without the
    sub-command, so that the root command completes its value."""
    if args and args[-1] in _GLOBAL_WITH_VALUE and "--" not in args:
        hoisted, _ = _split_global_options(args[:-1])
        return [*hoisted, _GLOBAL_WITH_VALUE[args[-1]]]
    return hoist_global_options(args)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kctl {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    bootstrap_server: str | None = typer.Option(
        None,
        "--bootstrap-server",
        "-b",
        envvar="KCTL_BOOTSTRAP_SERVERS",
        help="Bootstrap servers, host:port[,host:port] (overrides the profile).",
    ),
    profile: str | None = typer.Option(
        None,
        "--profile",
        "-p",
        envvar="KCTL_PROFILE",
        help="Connection profile to use.",
        autocompletion=_complete.profile_names,
    ),
    command_config: str | None = typer.Option(
        None,
        "--command-config",
        help="Client .properties file, as the kafka-*.sh tools take.",
        metavar="FILE",
    ),
    overrides: list[str] = typer.Option(
        [], "-X", help="Client property override key=value (repeatable).", metavar="KEY=VALUE"
    ),
    timeout: float = typer.Option(
        15.0, "--timeout", help="Seconds to wait for the cluster (0 < SECONDS <= 3600)."
    ),
    output: str | None = typer.Option(
        None,
        "--output",
        "-o",
        help="json|jsonl|yaml|csv|table|plain|name (default: table on a terminal, plain when "
        "piped; name: names only, one per line).",
        autocompletion=_complete.output_formats,
    ),
    schema_registry: str | None = typer.Option(
        None,
        "--schema-registry",
        envvar="KCTL_SCHEMA_REGISTRY_URL",
        metavar="URL",
        help="Schema Registry URL, the base of its Confluent API (overrides the profile's "
        "schema_registry.url; for Apicurio: http://HOST:PORT/apis/ccompat/v7).",
    ),
    no_headers: bool = typer.Option(False, "--no-headers", help="Omit the header row."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks and client logs."),
    no_color: bool = typer.Option(False, "--no-color", help="No colour in tables."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """One command for Apache Kafka operations: topics, configs, cluster, local broker, profiles."""
    # Finite already (kctl.arguments). At most an hour: the client library's admin calls take
    # request_timeout up to 3600000 ms ('--timeout 32768 groups list' was an unexpected
    # ValueError from confluent-kafka).
    if not 0 < timeout <= 3600:
        raise UsageError(f"--timeout {number_text(timeout)} is out of range", "0 < SECONDS <= 3600")
    for item in overrides:  # the form, for every command (not only those that connect)
        key_value(item, "-X", strip_key=True, secret=True)
    from kctl.environment import OUTPUT_FORMATS, Environment

    if output is not None and output not in OUTPUT_FORMATS:
        raise typer.BadParameter(
            f"{output!r} is not one of {', '.join(OUTPUT_FORMATS)}", param_hint="--output"
        )
    # The one place the global options become an Environment: click's context hands it to the
    # sub-command, which passes it on (commands._common.connection/output_view).
    ctx.obj = Environment.of_process(
        bootstrap_servers=bootstrap_server,
        profile=profile,
        command_config=command_config,
        overrides=tuple(overrides),
        timeout=timeout,
        output=output,
        no_headers=no_headers,
        schema_registry=schema_registry or None,
        debug=debug or bool(os.environ.get("KCTL_DEBUG")),
        color=not no_color,
    )


# The sub-commands: name -> (module, kind, one-line summary). A run registers only the one it
# invokes (Typer builds every registered command's parameters at start-up, ~0.5 ms each); the
# others stand in as placeholders carrying their summary for `kctl --help`. A test checks that
# each summary is the module's own.
SUBCOMMANDS: dict[str, tuple[str, str, str]] = {
    "topics": ("topics", "group", "List, describe, create and delete topics; add partitions."),
    "configs": (
        "configs",
        "group",
        "Describe and change configs: topics, brokers, broker loggers, groups, client metrics.",
    ),
    "cluster": ("cluster", "group", "Cluster id, controller, brokers; API versions per broker."),
    "produce": ("produce", "command", "Produce records from stdin, files or --key/--value."),
    "consume": (
        "consume",
        "command",
        "Consume records to stdout (JSON lines, table, plain, template).",
    ),
    "offsets": (
        "offsets",
        "group",
        "Partition offsets (get) and __consumer_offsets records (decode).",
    ),
    "records": ("records", "group", "Delete records at the start of partitions."),
    "groups": ("groups", "group", "Consumer groups: list, describe, lag, delete, reset offsets."),
    "transactions": (
        "transactions",
        "group",
        "Transactions: list, describe, producers, find hanging, abort.",
    ),
    "replicas": (
        "replicas",
        "group",
        "Replica health in one report; replicas compared batch by batch, online and offline.",
    ),
    "partitions": (
        "partitions",
        "group",
        "Elect leaders and reassign partitions: the plan first, --execute to act.",
    ),
    "acls": ("acls", "group", "ACLs: list, add and remove who may do what (kafka-acls.sh)."),
    "users": ("users", "group", "SCRAM users: list, describe, set passwords, delete."),
    "tokens": (
        "tokens",
        "group",
        "Delegation tokens: create, describe, renew, expire (kafka-delegation-tokens.sh).",
    ),
    "quotas": (
        "quotas",
        "group",
        "Client quotas for users, clients and IPs: describe, set, delete.",
    ),
    "quorum": (
        "quorum",
        "group",
        "The KRaft controller quorum: describe, add and remove controllers.",
    ),
    "features": (
        "features",
        "group",
        "Feature levels (metadata.version and others): describe, upgrade, downgrade.",
    ),
    "metadata": ("metadata", "group", "Read a KRaft metadata log offline: the cluster's state."),
    "dump-segment": (
        "dump",
        "command",
        "Decode Kafka's on-disk files (segments, indexes, snapshots, checkpoints).",
    ),
    "perf": (
        "perf",
        "group",
        "Load tests: produce or consume N records and report throughput and latency.",
    ),
    "schemas": (
        "schemas",
        "group",
        "Schema Registry: subjects, schemas, compatibility, deletes, export and import.",
    ),
    "profile": ("profile", "group", "Named connection profiles: list, show, use, add, delete."),
    "local": (
        "local",
        "group",
        "Start, inspect and stop a local cluster on loopback (Apache Kafka or Tansu); stop, "
        "kill and restart single brokers to rehearse failures.",
    ),
    "analytics": (
        "analytics",
        "group",
        "Lag analytics on Spark: Burrow status, time lag, trends and plots from lag samples.",
    ),
}
_registered: set[str] = set()


def _add(name: str) -> None:
    """Register one sub-command for real (imports its module)."""
    import importlib

    module_name = SUBCOMMANDS[name][0]
    module = importlib.import_module(f"kctl.commands.{module_name}")
    if name == "produce":
        app.command("produce", epilog=module.EPILOG)(module.produce)
    elif name == "consume":
        app.command("consume", epilog=module.EPILOG)(module.consume)
    elif name == "dump-segment":
        app.command("dump-segment", epilog=module.EPILOG, short_help=SUBCOMMANDS[name][2])(
            module.dump_segment
        )
    elif name == "offsets":
        from kctl.commands import offsets_get

        module.app.command("get", epilog=offsets_get.EPILOG)(offsets_get.offsets_get)
        app.add_typer(module.app, name="offsets")
    else:
        app.add_typer(module.app, name=name)


def _placeholder(name: str) -> None:
    """A stand-in that only lists ``name`` with its summary in ``kctl --help``."""
    _module, kind, summary = SUBCOMMANDS[name]
    if kind == "command":
        app.command(name, short_help=summary, add_help_option=False)(lambda: None)
    else:
        app.add_typer(typer.Typer(help=summary), name=name)


def register(only: str | None = None) -> typer.Typer:
    """Register every sub-command (``only`` None), or ``only`` for real and placeholders for the
    others; once per process. Returns the root app."""
    if _registered:
        return app
    for name in SUBCOMMANDS:
        if only is None or name == only:
            _add(name)
        else:
            _placeholder(name)
        _registered.add(name)
    _one_line_summaries(app)
    return app


def invoked(args: list[str]) -> str | None:
    """The sub-command a hoisted argument list runs (None: the root's own help or options)."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return None
        if arg in _GLOBAL_WITH_VALUE or arg in _GLOBAL_URL:
            i += 2
            continue
        if arg.startswith("-"):
            i += 1
            continue
        return arg if arg in SUBCOMMANDS else None
    return None


def _one_line_summaries(typer_app: typer.Typer) -> None:
    """Command lists show one line per command: the docstring's first paragraph, unwrapped."""
    for info in typer_app.registered_commands:
        doc = info.help or (info.callback.__doc__ if info.callback else None)
        if info.short_help is None and doc:
            info.short_help = " ".join(doc.strip().split("\n\n")[0].split())
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _one_line_summaries(group.typer_instance)


def _end_line_after_interrupt() -> None:
    """^C at a prompt or during --watch: the terminal shows ``^C`` where the cursor was; end that
    line so the shell's prompt starts on a fresh one."""
    with contextlib.suppress(OSError, ValueError):
        if sys.stderr.isatty():
            sys.stderr.write("\n")
            sys.stderr.flush()


def _print_error(line: str) -> None:
    sys.stderr.write(f"kctl: error: {line}\n")
    sys.stderr.flush()


def main(argv: list[str] | None = None) -> None:
    args = hoist_global_options(list(sys.argv[1:] if argv is None else argv))
    debug = "--debug" in args or bool(os.environ.get("KCTL_DEBUG"))
    code = 0
    try:
        completing = any(k.endswith("_COMPLETE") and k.startswith("_KCTL") for k in os.environ)
        register(None if completing else invoked(args) or "")
        # The click command tree, every parameter checked as it is converted (kctl.arguments):
        # text is UTF-8 within Kafka's string limit, numbers within their wire type, paths as
        # the file system has them. Then run as app(...) would.
        command = arguments.install(typer.main.get_command(app))
        result = command.main(args=args, prog_name="kctl", standalone_mode=False)
        code = result if isinstance(result, int) else 0
        if code == EXIT_INTERRUPTED:  # Typer answers ^C (KeyboardInterrupt) with exit 130
            _end_line_after_interrupt()
    except typer.Exit as exc:
        code = exc.exit_code
    except SystemExit as exc:
        # Typer turns a closed stdout (EPIPE, `kctl ... | head`) into exit 1 after wrapping
        # stdout; for us the reader leaving early is a normal end.
        if exc.code == 1 and type(sys.stdout).__name__ == "PacifyFlushWrapper":
            _silence_stdout()
            code = 0
        else:
            raise
    except typer.Abort:
        _end_line_after_interrupt()
        code = EXIT_INTERRUPTED
    except typer.TyperException as exc:
        hint = ""
        ctx = getattr(exc, "ctx", None)
        if ctx is not None:
            hint = f" (see '{ctx.command_path} --help')"
        _print_error(" ".join(exc.format_message().split()) + hint)
        code = exc.exit_code if exc.exit_code else EXIT_USAGE
    except KctlError as exc:
        if debug:
            traceback.print_exc()
        _print_error(exc.line())
        code = exc.exit_code
    except KeyboardInterrupt:
        _end_line_after_interrupt()
        code = EXIT_INTERRUPTED
    except BrokenPipeError:
        # `kctl ... | head`: the reader left; end quietly.
        _silence_stdout()
        code = 0
    except Exception as exc:
        code = _unexpected(exc, debug)
    except:  # noqa: E722 - confluent-kafka also raises KafkaError objects, no BaseException
        failure = sys.exc_info()[1]
        if client_library_error(failure) is None:
            raise
        code = _unexpected(failure, debug)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    sys.exit(code)


def _unexpected(exc: object, debug: bool) -> int:
    """An exception no command turned into a KctlError: a client library's own error (named,
    in one line, exit 1), else ``unexpected <type>``; the traceback only with --debug."""
    if debug:
        _print_traceback()
    failure = client_library_error(exc)
    if failure is None:
        failure = KctlError(f"unexpected {type(exc).__name__}: {exc}")
    if not debug:
        hint = "run with --debug for the traceback"
        failure.why = f"{failure.why}; {hint}" if failure.why else hint
    _print_error(failure.line())
    return EXIT_FAILED


def _print_traceback() -> None:
    """The traceback of the exception being handled, also for an object that is no
    BaseException (which the traceback module cannot format)."""
    kind, value, tb = sys.exc_info()
    if isinstance(value, BaseException):
        traceback.print_exc()
        return
    sys.stderr.write("Traceback (most recent call last):\n")
    traceback.print_tb(tb)
    sys.stderr.write(
        f"{getattr(kind, '__module__', '')}.{getattr(kind, '__name__', '')}: {value}\n"
    )


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ else 1)
