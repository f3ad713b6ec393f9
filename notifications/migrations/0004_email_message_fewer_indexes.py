# Two indexes every outbox row paid for and nothing reads: the organizer's (no query filters or
# orders messages by organizer; the sending bound counts in Redis) and the `varchar_pattern_ops`
# copy that `unique=True` on a CharField adds to the Message-ID's unique index for LIKE lookups
# (none is made: the admin searches `=message_id`, an exact match). The uniqueness stays, as a
# named constraint: the existing unique index is renamed, not built again, so that the migration
# takes no longer on a full outbox.
from django.db import migrations, models

CONSTRAINT = "email_message_id_unique"


def _like_index(schema_editor, model) -> str:
    # The name Django gives (and looks for when it drops) the LIKE copy of a unique CharField's index.
    return schema_editor._create_index_name(model._meta.db_table, ["message_id"], suffix="_like")


def keep_the_unique_index_drop_its_like_copy(apps, schema_editor):
    model = apps.get_model("notifications", "EmailMessage")
    quote = schema_editor.quote_name
    (unique,) = schema_editor._constraint_names(model, ["message_id"], unique=True, primary_key=False)
    table = quote(model._meta.db_table)
    schema_editor.execute(f"ALTER TABLE {table} RENAME CONSTRAINT {quote(unique)} TO {quote(CONSTRAINT)}")
    schema_editor.execute(f"DROP INDEX IF EXISTS {quote(_like_index(schema_editor, model))}")


def back_to_a_unique_column(apps, schema_editor):
    model = apps.get_model("notifications", "EmailMessage")
    quote = schema_editor.quote_name
    table = quote(model._meta.db_table)
    original = f"{model._meta.db_table}_message_id_key"  # PostgreSQL's name for the column's UNIQUE
    schema_editor.execute(f"ALTER TABLE {table} RENAME CONSTRAINT {quote(CONSTRAINT)} TO {quote(original)}")
    like = quote(_like_index(schema_editor, model))
    schema_editor.execute(f"CREATE INDEX {like} ON {table} (message_id varchar_pattern_ops)")


class Migration(migrations.Migration):
    dependencies = [("notifications", "0003_email_message_organizer_id_bigint")]

    operations = [
        migrations.AlterField(
            model_name="emailmessage",
            name="organizer_id",
            field=models.BigIntegerField(),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="emailmessage",
                    name="message_id",
                    field=models.CharField(max_length=255),
                ),
                migrations.AddConstraint(
                    model_name="emailmessage",
                    constraint=models.UniqueConstraint(fields=("message_id",), name=CONSTRAINT),
                ),
            ],
            database_operations=[
                migrations.RunPython(keep_the_unique_index_drop_its_like_copy, back_to_a_unique_column),
            ],
        ),
    ]
