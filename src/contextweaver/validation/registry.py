"""The registry of runner parsers, in detection order (more specific formats before general ones):
the order of the entries is the order in which observations are tried."""

from __future__ import annotations

from contextweaver.registry import Registry

_MODULE = "contextweaver.validation.parsers"

PARSERS = Registry(
    "test parser",
    {
        "go-json": f"{_MODULE}.go_json:GoJsonParser",
        "dart-json": f"{_MODULE}.dart_json:DartJsonParser",
        "rspec-json": f"{_MODULE}.rspec_json:RspecJsonParser",
        "go": f"{_MODULE}.go_test:GoTestParser",
        "cargo": f"{_MODULE}.cargo:CargoParser",
        "gradle": f"{_MODULE}.gradle:GradleParser",
        "ctest": f"{_MODULE}.ctest:CtestParser",
        "maven": f"{_MODULE}.maven:MavenParser",
        "junit-xml": f"{_MODULE}.junit_xml:JunitXmlParser",
        "dotnet-xml": f"{_MODULE}.dotnet_xml:DotnetXmlParser",
        "vitest": f"{_MODULE}.vitest:VitestParser",
        "jest": f"{_MODULE}.jest:JestParser",
        "mocha": f"{_MODULE}.mocha:MochaParser",
        "tap": f"{_MODULE}.tap:TapParser",
        "phpunit": f"{_MODULE}.phpunit:PhpunitParser",
        "rspec-text": f"{_MODULE}.rspec_text:RspecTextParser",
        "minitest": f"{_MODULE}.minitest:MinitestParser",
        "sympy": f"{_MODULE}.sympy:SympyParser",
        "pytest": f"{_MODULE}.pytest:PytestParser",
        "django": f"{_MODULE}.django:DjangoParser",
        "unittest": f"{_MODULE}.unittest:UnittestParser",
    },
)
