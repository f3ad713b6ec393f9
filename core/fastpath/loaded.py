"""What a write answers with: the rows it has just made, recorded on the object it returns as if
they had been prefetched (`record_loaded`), or the object read back by its key (`read_back`).

A create that answers with what it wrote (instead of reading it back) hands its serializer an
object whose reverse relations (`schedule.availability`, `booking.attendees`) already hold the
rows: `instance.<relation>.all()` then runs no query, exactly as after `prefetch_related()`.
"""

from collections.abc import Callable

from django.db.models import QuerySet

from core.fastpath.rows import plain_prefetches, read_row_by_key
from core.fastpath.switch import fast_paths


def record_loaded(instance, relation: str, objects: list) -> None:
    """Record `objects` as `instance`'s rows of the reverse relation `relation`, in that order.

    The recorded queryset is the related model's own, filtered by the key, not the related
    manager's: that one points back at `instance`, a cycle that only Python's cyclic collector
    could free (docs/benchmarks.md, "Garbage the collector had to find"). For the same reason the
    objects should hold `instance`'s key (`booking_id=`), not `instance` itself. With the switch off
    (`FAST_PATHS`) nothing is recorded: the relation is read from the database when it is asked."""
    if not fast_paths():
        return
    field = getattr(type(instance), relation).field
    queryset = field.model._default_manager.filter(**{field.attname: instance.pk})  # lazy: no query
    queryset._result_cache = objects
    queryset._prefetch_done = True
    instance.__dict__.setdefault("_prefetched_objects_cache", {})[field.remote_field.cache_name] = queryset


def read_back(owner: type, selector: Callable[[], QuerySet], serializer_class: type, pk) -> object | None:
    """The row of primary key `pk` as GET /{id} reads it (`read_row_by_key`: the serializer's
    columns, the selector's relations), whatever the selector's filters; None when it is gone.

    The selector's queryset is built only for its prefetches (which reverse relations the answer
    reads, in which order). When they are plain (`plain_prefetches`: no filter, the same for every
    caller, as every selector here writes them) they are kept on `owner` (the view class) for its
    next writes, and the selector is not built again; so a selector must not prefetch differently
    per caller. With the switch off (`FAST_PATHS`), the ORM reads the object with the selector's
    prefetches."""
    if not fast_paths():
        queryset = selector()
        lookups = queryset._prefetch_related_lookups
        return queryset.model._default_manager.filter(pk=pk).prefetch_related(*lookups).first()
    kept = owner.__dict__.get("_reload_from")
    if kept is not None:  # (an empty queryset of the model, its prefetches)
        return read_row_by_key(kept[0], serializer_class, pk, related=kept[1])
    queryset = selector()
    prefetches = plain_prefetches(queryset)
    if prefetches is not None:
        owner._reload_from = (queryset.model._default_manager.none(), prefetches)
    return read_row_by_key(queryset, serializer_class, pk)
