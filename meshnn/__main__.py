"""``python -m meshnn``: the meshnn command."""

from meshnn.cli.main import main

raise SystemExit(main())
