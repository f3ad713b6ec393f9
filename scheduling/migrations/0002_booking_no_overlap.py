"""No double booking, enforced by PostgreSQL itself.

An exclusion constraint refuses two ACCEPTED/PENDING bookings of one organizer whose
[start, end) ranges overlap, whatever the application does and however many processes race.
It needs the btree_gist extension (for `organizer_id WITH =` inside a GiST index).

The constraint is written as SQL rather than as model state: it was introduced when the same
migrations also ran on SQLite. The service runs on PostgreSQL only now, everywhere; the SQL is
unchanged so that databases migrated before keep the same constraint.
"""

from django.db import migrations

CONSTRAINT = "booking_no_overlap_per_organizer"

CREATE = f"""
CREATE EXTENSION IF NOT EXISTS btree_gist;
ALTER TABLE scheduling_booking ADD CONSTRAINT {CONSTRAINT}
    EXCLUDE USING gist (organizer_id WITH =, tstzrange(start_time, end_time, '[)') WITH &&)
    WHERE (status IN ('ACCEPTED', 'PENDING'));
"""

DROP = f"ALTER TABLE scheduling_booking DROP CONSTRAINT IF EXISTS {CONSTRAINT};"


def create_constraint(apps, schema_editor):
    schema_editor.execute(CREATE)


def drop_constraint(apps, schema_editor):
    schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("scheduling", "0001_initial")]

    operations = [migrations.RunPython(create_constraint, drop_constraint, elidable=False)]
