from typing import Any

def records_json(
    data: Any,
    base_offset: int,
    first_ts: int,
    count: int,
    base_seq: int,
    text: str | None = None,
) -> tuple[str, list[int] | range] | None: ...
def jsonl_block(msgs: list[Any], types: tuple[str | None, ...]) -> bytes | None: ...
def produce_chunk(
    produce: Any,
    topic: str,
    data: bytes,
    start: int,
    end: int,
    sep: bytes | None,
    catch: tuple[type[BaseException], ...],
) -> tuple[int, int, int, int]: ...
