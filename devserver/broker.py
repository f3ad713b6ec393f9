"""`make run`'s broker: kombu's filesystem transport, with each message written whole before the
worker can see it.

kombu's own `_put` creates the message file and then writes it, so a worker polling the folder can
move and read a file that is still empty and die on the JSON it cannot decode (seen with eight
bookings at once). Here the message is written under a name the worker's queue filter ignores (it
does not end in `.<queue>.msg`) and renamed into place, which is atomic on one file system.
"""

import os
import uuid
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        message = str_to_bytes(dumps(payload))
        name = f"{monotonic() * 1000:.0f}_{uuid.uuid4()}.{queue}.msg"
        partial = os.path.join(self.data_folder_out, f"partial-{uuid.uuid4()}")
        try:
            with open(partial, "wb") as file:
                file.write(message)
            os.replace(partial, os.path.join(self.data_folder_out, name))
        except OSError as error:
            raise ChannelError(f"Cannot add file {name!r} to directory") from error


class Transport(filesystem.Transport):
    Channel = Channel
