"""`python -m contextweaver`: the same command as `contextweaver`."""

from contextweaver.cli import main

main(prog_name="contextweaver")
