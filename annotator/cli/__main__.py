"""`python -m entqa`: the `entqa` command."""
from annotator.cli.command import main

raise SystemExit(main())
