"""The `entqa` command line (`entqa.cli`): link, serve, index, train and evaluate."""
