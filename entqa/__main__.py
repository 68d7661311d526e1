"""`python -m entqa`: the `entqa` command."""
from entqa.cli import main

raise SystemExit(main())
