"""`make smoke`: the production configuration of README's "Running in production", end to end.

`python -m smoke` builds a virtualenv from requirements.txt alone, starts gunicorn, a Celery worker
and beat from it on a fresh PostgreSQL database and Redis, and walks what users do over HTTP only.
docs/operations.md ("The production smoke run") describes every step.
"""
