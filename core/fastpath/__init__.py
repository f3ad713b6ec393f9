"""The speed machinery, in one room: every piece here answers exactly what plain Django and DRF
answer, only faster. `FAST_PATHS=0` (`core.fastpath.switch`, README "Configuration") turns every
piece off; `make test` runs the API suites that way too and compares each read's bytes with the
machinery's. Gains are from docs/benchmarks.md ("Profiling and what changed"), in-process unless
said otherwise.

Each piece: what it replaces; its gain; what answers instead when the switch is off.

- `rows.py` (`read_rows`, `reads`): a GET's model instances, as rows of exactly the output
  serializer's columns, each reverse relation in one query per page. The schedules selector and
  output 5.7 → 2.7 ms CPU; a bookings page 106.8 → 52.0 M instructions. Off: the selector's queryset.
- `shapes.py`: building and compiling a list's page and COUNT on every request; kept per query
  shape. Payments list ÷ floor 0.62 → 0.78–0.81. Off with `read_rows`.
- `branches.py` (`AnyBranch`): an OR of visibility branches, each branch read along its own index
  up to the page's end. A busy organizer's page 0.5–2.4 s → milliseconds at 10^6–10^7 bookings.
  Off: an OR of one subquery per branch.
- `output.py` (`FastReadMixin`): DRF's per-field `to_representation`, as one generated writer per
  serializer class. One page's output 0.80 → 0.32 ms (payments), 1.37 → 0.68 ms (bookings). Off: DRF's.
- `fields.py` (`BuiltOnceFieldsMixin`): DRF building every field for every serializer instance.
  A booking body's fields 480 → 213 µs. Off: DRF's.
- `compiled_queries.py` (`CompiledQuery`, `CompiledValues`, `Parameter`, `AnyOf`): building a hot
  lookup's ORM query on every call; compiled once, run with each call's values, JSON columns read
  with orjson. API key lookup 0.50 → 0.11 ms CPU, bookable event type 6.8 → 1.2 ms. Off: the ORM
  evaluates the queryset on every call. Its `rows_together` sends a read-back's statements in one
  pipeline: a schedule PATCH's read-back 9.4 → 7.5 ms on a loaded machine. Off: one after another.
- `inserts.py` (`CompiledInsert`): `bulk_create`'s INSERT built and compiled on every call (model
  instances, each value's `pre_save` and `get_db_prep_save`, psycopg dumping lists); one
  `INSERT … SELECT *, %s, … FROM unnest(…)` text per process, the rows' text columns as array
  literals, JSON written with orjson. The outbox's two-row INSERT 598–644 → 86–113 µs CPU; with the
  sending bound's Lua script and the outbox's two dropped indexes, `benchmarks/mail.py`'s mail on ÷
  off 1.15–1.26 → 1.07–1.10 (CPU 1.19–1.20 → 1.08–1.12). Off: the instances, `bulk_create`d.
- `loaded.py` (`record_loaded`, `read_back`): reading a write's answer back; the service's objects
  as written, or one statement by key. `POST /v1/bookings` 14 → 11 statements, ÷ floor 0.81 →
  0.85–0.90. Off: nothing recorded, the ORM reads the answer back.
- `db_loaders.py`: Django's pure-Python `timestamptz` loader; psycopg's compiled one, same values.
  3.2 → 0.3 µs a value, 300 values on a page of bookings. Off: Django's loader. Its
  `read_in_binary` (`CompiledValues(binary=True)`): a statement of integers and date-times read in
  binary, same values; slots' busy time with 400 calendar periods 0.90 → 0.55 ms. Off: text.
- `release.py` (`ReleasedWhenSentMixin`): DRF's reference cycles left to the collector; cut when
  the response is sent. Collector time of a payments page 0.56 → 0.03–0.05 ms. Off: left as DRF
  leaves them.
- `collector.py`: Python's collector settings in a server process; `gc.freeze()` after start-up,
  the first generation every `GC_GEN0_THRESHOLD` objects. Longest pause 250–320 → 80–170 ms,
  collections in 2,000 reads 9–20 → 0. Off: Python's settings.

Outside this room, each with its own off path: `scheduling/services/schedules.py` writes a new
schedule and locks its owner in one statement (the ORM's `save()` after the lock when off); the
compiled lookups of `accounts/authentication.py`, `scheduling/selectors/event_types.py`,
`scheduling/selectors/slot_sources.py` and `webhooks/selectors.py` are `CompiledQuery`/`CompiledValues`.
Not switched: `core/renderers.py` (orjson, the API's renderer with its number rules, tested equal
to DRF's bytes) and `core/pagination.py` (no COUNT when the page ends the list: the same total).

The rules the machinery puts on everyone else (checked by `core/tests/test_fastpath_rules.py` and
`tests/test_read_plans.py` for every resource):

- a serializer field reads a column, a foreign key's columns, a reverse foreign key (`many=True`),
  or a model property that reads only its model's columns; a `SerializerMethodField` says what it
  reads with `@reads(...)`; anything else fails when the plan is made;
- `get_fields()` must not depend on the serializer's instance (data, context, partial);
- a selector prefetches with plain `Prefetch(lookup, queryset=<Model>.objects.order_by(...))` and
  the same for every caller;
- `AnyBranch` stands at the top of a query's WHERE, ANDed with the rest;
- objects recorded with `record_loaded` hold their parent's key, not the parent.

What to change:

- **a new field**: declare it on the output serializer; nothing else (a method field: `@reads`).
- **a new list**: a selector returning the queryset (visibility, order, plain prefetches) and a
  viewset with `ListResourceMixin`; the base reads it with `read_rows`. Add it to
  `tests/test_list_walks.py`.
- **a new write**: the service returns the model instance; the base's `reload` answers with it read
  back (`read_back`). To answer unread, the service records what it wrote (`record_loaded`), the
  view sets `answers_as_written = True`, and a test compares the answer with `GET /{id}`'s.
- **a new hot lookup**: a `functools.cache`d function building a `CompiledQuery` of the ORM
  queryset with a `Parameter` per value.
- **a new hot write of many rows**: a `functools.cache`d function building a `CompiledInsert` of
  the model, naming the columns whose values differ by row; the call passes values as the
  database takes them (JSON as Python objects).
"""

from core.fastpath.rows import plain_prefetches, read_row_by_key, read_rows, reads, row_iterable

__all__ = ["plain_prefetches", "read_row_by_key", "read_rows", "reads", "row_iterable"]
