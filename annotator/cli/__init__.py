"""The `entqa` command line (`annotator.cli.command`): link, serve, index, train and evaluate."""
