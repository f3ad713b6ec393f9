"""`manage.py runweb`: `runserver` (with its static files handler and autoreloader) on the
pooled server of devserver/web.py. `rundev` starts it as `make run`'s web server."""

from django.contrib.staticfiles.management.commands.runserver import Command as RunserverCommand

from devserver.web import PooledWSGIServer


class Command(RunserverCommand):
    help = "runserver with a fixed pool of request threads, each keeping one database connection."
    server_cls = PooledWSGIServer

    def inner_run(self, *args, **options):
        options["use_threading"] = False  # the pool is the threading: no thread per connection
        super().inner_run(*args, **options)
