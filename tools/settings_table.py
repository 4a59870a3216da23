"""Print the settings table made from ``api.platform.config.SETTINGS``: Markdown for the README
(paste it between the ``settings-table`` markers; a test checks they agree), ``--rst``
for reStructuredText.

    python -m tools.settings_table [--rst]
"""

from __future__ import annotations

import sys

from api.platform.config import markdown_table, rst_table

if __name__ == "__main__":
    print(rst_table() if "--rst" in sys.argv[1:] else markdown_table())
