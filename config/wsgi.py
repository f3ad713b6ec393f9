"""The WSGI entry point production servers load (`gunicorn config.wsgi`).

Once Django is set up and the URLconf, with every view, serializer and model it imports, is
loaded, everything alive is moved out of the garbage collector's reach (`gc.freeze()`): those
objects (about 110,000) live as long as the process, yet every full collection used to walk all of
them. Timed with a `gc.callbacks` hook in each gunicorn worker over the same benchmark runs (a
loaded 2-core machine): full collections took 0.60-0.70 s in all with pauses up to 250-320 ms
before, 0.38-0.42 s with pauses up to 80-170 ms after. Under
`gunicorn --preload` this runs in the master before the fork, which also keeps the workers from
copying the pages those objects live on.
"""

import gc
import os
from importlib import import_module

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
import_module(settings.ROOT_URLCONF)  # what the first request would import
gc.collect()
gc.freeze()
