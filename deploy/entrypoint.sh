#!/bin/sh
# The container's entry point: one image, four roles. Each role runs the command of README's
# "Running in production" (the one the production smoke run executes), with the address and the
# number of web workers taken from the environment.
#
#   web      gunicorn on $BIND_ADDRESS (default 0.0.0.0:8000) with $WEB_WORKERS sync workers (default 2)
#   worker   a Celery worker (threads, 4), node name worker@<host name>
#   beat     a Celery beat, which sends while it holds the beat lock (core/beat.py); its schedule
#            file in $BEAT_SCHEDULE, default /tmp/celerybeat-schedule
#   migrate  the migrations, then exit
#
# Anything else is run as given (`python manage.py createsuperuser ...`).
set -eu
role="${1:-web}"
case "$role" in
web)
    exec gunicorn -c config/gunicorn.conf.py config.wsgi --workers "${WEB_WORKERS:-2}" --bind "${BIND_ADDRESS:-0.0.0.0:8000}"
    ;;
worker)
    exec celery -A config worker -l info --pool threads --concurrency 4 -n "worker@${HOSTNAME:-$(hostname)}"
    ;;
beat)
    exec celery -A config beat -l info --schedule "${BEAT_SCHEDULE:-/tmp/celerybeat-schedule}"
    ;;
migrate)
    exec python manage.py migrate --noinput
    ;;
*)
    exec "$@"
    ;;
esac
