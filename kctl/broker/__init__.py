"""Everything that talks to a broker: the only package that imports confluent_kafka (librdkafka)
and kafka-python. Operations are plain functions taking a connection or client and returning
dataclasses; commands call them and hand the results to a formatter."""
