"""The executable's entry point: the same `edge` command as the console script."""

import sys

from edge.cli import main

if __name__ == "__main__":
    sys.exit(main())
