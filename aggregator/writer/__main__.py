"""``python -m rldp.aggregator.writer``: the writer process (:func:`.process.main`)."""

import sys

from .process import main

sys.exit(main())
