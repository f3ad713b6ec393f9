from django.apps import AppConfig


class DevserverConfig(AppConfig):
    """`make run` (`manage.py rundev`): the embedded PostgreSQL, the web server, a Celery worker and
    beat, supervised together, with the demo data. It starts the whole project, so it sits at the
    top beside `config` and `demo`, and no app imports it."""

    name = "devserver"
