"""The WSGI entry point production servers load (`gunicorn config.wsgi`).

Once Django is set up and the URLconf is loaded, the garbage collector is set for a long-lived
server process (`core.fastpath.collector`).
"""

import os
from importlib import import_module

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
import_module(settings.ROOT_URLCONF)  # what the first request would import

from core.fastpath.collector import settle_collector  # noqa: E402 (needs Django set up)

settle_collector()
