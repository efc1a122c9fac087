"""One parser per test runner; `contextweaver.validation.registry.PARSERS` maps names to them."""
