"""`make run`'s filesystem broker never hands the worker a message that is still being written
(kombu's own transport creates the file first and writes it after, which a polling worker can
read empty and die on)."""

from pathlib import Path

import pytest
from kombu import Connection


@pytest.fixture
def queue(tmp_path):
    options = {
        "data_folder_in": str(tmp_path),
        "data_folder_out": str(tmp_path),
        "processed_folder": str(tmp_path),
        "store_processed": False,
    }
    with Connection(
        "filesystem://localhost//", transport="devserver.broker:Transport", transport_options=options
    ) as conn:
        simple = conn.SimpleQueue("deliveries")
        yield simple
        simple.close()


def test_every_message_arrives_whole_once(queue):
    for number in range(50):
        queue.put({"number": number})
    received = [queue.get(timeout=1).payload["number"] for _ in range(50)]
    assert sorted(received) == list(range(50))  # kombu orders by the millisecond, not within one
    with pytest.raises(queue.Empty):
        queue.get(timeout=0.2)


def test_a_message_still_being_written_is_not_taken(queue, tmp_path):
    # What a producer leaves while it writes: the partial file, under a name outside any queue.
    (Path(tmp_path) / "partial-5f0c7a4e").write_bytes(b"")
    with pytest.raises(queue.Empty):
        queue.get(timeout=0.2)
    queue.put({"number": 1})
    assert queue.get(timeout=1).payload == {"number": 1}
