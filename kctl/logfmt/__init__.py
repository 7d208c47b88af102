"""Pure decoders of Kafka's on-disk formats: bytes in, dataclasses out, no I/O."""

# The kinds of file dump-segment reads (chosen by file name; --type overrides).
FILE_TYPES = (
    "log",
    "index",
    "timeindex",
    "txnindex",
    "producer-snapshot",
    "kraft-snapshot",
    "leader-epoch-checkpoint",
    "offset-checkpoint",
    "partition-metadata",
    "meta-properties",
    "quorum-state",
)
