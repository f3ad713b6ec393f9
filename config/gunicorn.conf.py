"""gunicorn settings for production and `make bench`:

    gunicorn -c config/gunicorn.conf.py config.wsgi

Flags on the command line and `GUNICORN_CMD_ARGS` override these. gunicorn's own environment
variables still apply: `PORT` (binds 0.0.0.0:$PORT) and `WEB_CONCURRENCY` (the number of workers).
"""

import os

# Each worker tells the master it is alive by touching a file every second or so. In /tmp on a disk
# (containers, VMs) that metadata write can block the worker, a request with it, for as long as the
# disk takes; in memory it cannot (gunicorn's docs recommend /dev/shm for this).
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
