"""`python -m bot_memory <command>`: the same as the installed `bot-memory` script."""

from __future__ import annotations

import sys

from bot_memory.cli import main

if __name__ == "__main__":
    sys.exit(main())
