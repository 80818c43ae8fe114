"""``python -m codemode_kernel``: the Code Mode kernel (``-f CONNECTION_FILE``) or ``install``."""

import sys

from .kernel.app import main

sys.exit(main())
