"""`python -m mindgraph` runs the CLI."""

from .cli import main

main()
