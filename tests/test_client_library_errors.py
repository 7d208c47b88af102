"""A client library's own exception that no command turned into a KctlError ends as one line
naming the library's error (kctl.errors.client_library_error, used by kctl.cli.main), not as
``unexpected <type>``. The exceptions are the libraries' real classes; the end-to-end cases
(an exception out of confluent-kafka through kctl consume) are in test_consume.py."""

from __future__ import annotations

import pytest

from kctl.errors import EXIT_FAILED, client_library_error


def test_confluent_kafka_exception_and_error_object_name_librdkafka_s_code():
    from confluent_kafka import KafkaError, KafkaException

    raised = KafkaException(KafkaError(KafkaError._STATE, "Failed to set assignment"))
    failure = client_library_error(raised)
    assert failure is not None and failure.exit_code == EXIT_FAILED
    assert failure.line() == (
        "Kafka client: _STATE: Failed to set assignment (confluent-kafka raised KafkaException)"
    )
    # What consume() re-raises from a callback: the KafkaError object itself.
    failure = client_library_error(KafkaError(KafkaError._STATE))
    assert failure is not None
    assert failure.line() == (
        "Kafka client: _STATE: Local: Erroneous state (confluent-kafka raised KafkaError)"
    )
    failure = client_library_error(KafkaException("no error object"))
    assert failure is not None
    assert failure.line() == (
        "Kafka client: KafkaException: no error object (confluent-kafka raised KafkaException)"
    )


@pytest.mark.parametrize(
    ("make", "line"),
    [
        (
            lambda e: e.RequestTimedOutError("no answer"),
            "Kafka client: RequestTimedOutError: error code 7, no answer "
            "(kafka-python raised RequestTimedOutError)",
        ),
        (
            lambda e: e.KafkaTimeoutError("Timeout after 15000 ms"),
            "Kafka client: KafkaTimeoutError: Timeout after 15000 ms "
            "(kafka-python raised KafkaTimeoutError)",
        ),
        (
            lambda e: e.KafkaConnectionError(),
            "Kafka client: KafkaConnectionError (kafka-python raised KafkaConnectionError)",
        ),
    ],
)
def test_kafka_python_errors_name_their_class(make, line):
    import kafka.errors

    failure = client_library_error(make(kafka.errors))
    assert failure is not None and failure.line() == line


def test_other_exceptions_are_not_the_client_library_s():
    assert client_library_error(ValueError("x")) is None
    assert client_library_error(KeyError("confluent_kafka")) is None
