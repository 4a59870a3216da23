"""Print what a backup holds (``api.records.backup.contents_markdown``: made from the models), for
``docs/operations.md`` (paste it between the ``backup-contents`` markers; a test checks they agree).

    python -m tools.backup_contents
"""

from __future__ import annotations

from api.records.backup import contents_markdown

if __name__ == "__main__":
    print(contents_markdown())
