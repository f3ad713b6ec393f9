"""The one read path of every GET, in two halves planned from the same output serializer:

- `core.fastpath.rows`: which columns to fetch. The resource's selector queryset is read as plain
  rows of exactly what the serializer shows (`read_rows`, and `@reads` for method fields);
- `core.fastpath.output`: how to write them. `FastReadMixin` turns each row into the response's
  dict with a per-class plan instead of DRF's per-field dispatch, with DRF's exact output.

A field added to a serializer is therefore read and written by GET with no other change.
Compiled queries for the few hand-tuned lookups outside this path live in `core.fastpath.compiled_queries`.
"""

from core.fastpath.rows import plain_prefetches, read_row_by_key, read_rows, reads, row_iterable

__all__ = ["plain_prefetches", "read_row_by_key", "read_rows", "reads", "row_iterable"]
