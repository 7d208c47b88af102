"""Kafka protocol messages kafka-python does not define, as kafka-python's own schema-driven
classes (``ApiMessage`` built from the JSON beside this file, written from Kafka's
``clients/src/main/resources/common/message`` definitions: the fields kctl sends and reads).
Importing this module imports kafka-python: only the broker layer does, inside functions."""

from __future__ import annotations

import sys
from typing import Any

from kafka.protocol.api_message import ApiMessage

_HERE: Any = sys.modules[__name__]


class UnregisterBrokerRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class UnregisterBrokerResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class AddRaftVoterRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class AddRaftVoterResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class RemoveRaftVoterRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class RemoveRaftVoterResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


# Copied unchanged from kafka-clients-4.3.1.jar (common/message/*.json, Apache License 2.0):
# the group APIs of KIP-848 (consumer groups), KIP-932 (share groups) and KIP-1071 (streams).
class ConsumerGroupDescribeRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class ConsumerGroupDescribeResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class ShareGroupDescribeRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class ShareGroupDescribeResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class DescribeShareGroupOffsetsRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class DescribeShareGroupOffsetsResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class AlterShareGroupOffsetsRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class AlterShareGroupOffsetsResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class DeleteShareGroupOffsetsRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class DeleteShareGroupOffsetsResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class StreamsGroupDescribeRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class StreamsGroupDescribeResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


# Copied unchanged from kafka-clients-4.3.1.jar: delegation tokens (KIP-48, KIP-373).
class CreateDelegationTokenRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class CreateDelegationTokenResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class RenewDelegationTokenRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class RenewDelegationTokenResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class ExpireDelegationTokenRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class ExpireDelegationTokenResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class DescribeDelegationTokenRequest(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass


class DescribeDelegationTokenResponse(ApiMessage, load_json=_HERE):  # type: ignore[call-arg]
    pass
