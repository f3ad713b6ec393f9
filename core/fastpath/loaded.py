"""Rows a write has just made, recorded on the object it returns as if they had been prefetched.

A create that answers with what it wrote (instead of reading it back) hands its serializer an
object whose reverse relations (`schedule.availability`, `booking.attendees`) already hold the
rows: `instance.<relation>.all()` then runs no query, exactly as after `prefetch_related()`.
"""


def record_loaded(instance, relation: str, objects: list) -> None:
    """Record `objects` as `instance`'s rows of the reverse relation `relation`, in that order.

    The recorded queryset is the related model's own, filtered by the key, not the related
    manager's: that one points back at `instance`, a cycle that only Python's cyclic collector
    could free (docs/benchmarks.md, "Garbage the collector had to find"). For the same reason the
    objects should hold `instance`'s key (`booking_id=`), not `instance` itself."""
    field = getattr(type(instance), relation).field
    queryset = field.model._default_manager.filter(**{field.attname: instance.pk})  # lazy: no query
    queryset._result_cache = objects
    queryset._prefetch_done = True
    instance.__dict__.setdefault("_prefetched_objects_cache", {})[field.remote_field.cache_name] = queryset
