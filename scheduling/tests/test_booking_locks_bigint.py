"""The people's advisory locks (`LOCK_PEOPLE_SQL`) take any bigint user id: the second key is the
id's low 32 bits as an int4, so an id of PostgreSQL's int4 range is its own key."""

import pytest
from django.db import connection, transaction

from scheduling.selectors.slot_sources import PERSON_LOCK_SPACE
from scheduling.services.assignment import lock_people

pytestmark = pytest.mark.django_db


def held_keys() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
            " AND classid::bigint = %s AND objsubid = 2 ORDER BY 1",
            [PERSON_LOCK_SPACE],
        )
        return [row[0] for row in cursor.fetchall()]


def test_ids_above_int4_are_locked_by_their_low_32_bits():
    with transaction.atomic():
        lock_people([2**31 + 7, 5, 2**32 + 2**31 + 7, 2**63 - 1])
        # pg_locks shows the int4 key as an unsigned oid: 2**31 + 7 is the key -2**31 + 7
        assert held_keys() == [5, 2**31 + 7, 2**32 - 1]
