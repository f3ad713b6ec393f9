"""The garbage collector's settings for a server process, applied by `config/wsgi.py` once the
URLconf is loaded (docs/benchmarks.md, "Garbage the collector had to find").

Once Django is set up and the URLconf, with every view, serializer and model it imports, is
loaded, everything alive is moved out of the garbage collector's reach (`gc.freeze()`): those
objects (about 110,000) live as long as the process, yet every full collection used to walk all of
them; freezing them shortens both the total time spent in full collections and the longest
pause (measured per gunicorn worker: docs/benchmarks.md, "Profiling and what changed"). Under
`gunicorn --preload` this runs in the master before the fork, which also keeps the workers from
copying the pages those objects live on.

The collector's first generation then runs every `GC_GEN0_THRESHOLD` (default 10,000) new
container objects instead of Python's 700. A request that reads a page of 100 rows keeps a few
thousand objects alive at once, so at 700 the collector ran in the middle of most such requests and
moved what it found alive to an older generation, to be walked again there. With a request's
objects freed when its response is sent (`core.fastpath.release.ReleasedWhenSentMixin`), a read or a
schedule create leaves the collector nothing, so it runs only when one request holds more than
that many objects at once, or after many requests of the kinds that still leave a few dozen (an
update, a booking, an error): docs/benchmarks.md, "Garbage the collector had to find".
"""

import gc

from django.conf import settings

from core.fastpath.switch import fast_paths


def settle_collector() -> None:
    """Freeze what the process has loaded and raise the first generation's threshold; with the
    switch off (`FAST_PATHS`), Python's own collector settings."""
    if not fast_paths():
        return
    gc.collect()
    gc.freeze()
    _first, *older = gc.get_threshold()
    gc.set_threshold(settings.GC_GEN0_THRESHOLD, *older)
