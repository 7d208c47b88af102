"""kctl: one command for Apache Kafka operations."""

__version__ = "0.1.0"
