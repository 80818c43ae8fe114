"""A stand-in for the person's browser in sign-in tests: ``CODEMODE_OAUTH_OPEN="python oauth_browser.py"``.

Run with the authorization URL as its last argument, it follows the redirects (the test server consents at
once) to the loopback listener of ``codemode login``, as a browser would, and prints where it ended.
"""

from __future__ import annotations

import sys
import urllib.request

with urllib.request.urlopen(sys.argv[-1], timeout=30) as response:  # follows 302s
    print(f"oauth_browser: {response.status}", file=sys.stderr)  # never the URL: it holds the code
