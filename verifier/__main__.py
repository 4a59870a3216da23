import os
import sys

from .cli import main

status = main()
sys.stdout.flush()
sys.stderr.flush()
os._exit(status)  # (the output is out: no teardown of every object, one by one, on the way out)
