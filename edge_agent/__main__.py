"""`python -m edge_agent`: the agent's own command, as the `edge-agent` script."""

import sys

from edge_agent.cli import main

if __name__ == "__main__":
    sys.exit(main())
