"""The registry of runner parsers, in detection order (more specific formats before general ones)."""

from __future__ import annotations

from contextweaver.registry import Registry

_MODULE = "contextweaver.validation.parsers"

PARSERS = Registry(
    "test parser",
    {
        "pytest": f"{_MODULE}.pytest:PytestParser",
        "sympy": f"{_MODULE}.sympy:SympyParser",
        "django": f"{_MODULE}.django:DjangoParser",
        "unittest": f"{_MODULE}.unittest:UnittestParser",
        "go-json": f"{_MODULE}.go_json:GoJsonParser",
        "go": f"{_MODULE}.go_test:GoTestParser",
        "jest": f"{_MODULE}.jest:JestParser",
        "mocha": f"{_MODULE}.mocha:MochaParser",
        "cargo": f"{_MODULE}.cargo:CargoParser",
        "maven": f"{_MODULE}.maven:MavenParser",
        "junit-xml": f"{_MODULE}.junit_xml:JunitXmlParser",
        "dotnet-xml": f"{_MODULE}.dotnet_xml:DotnetXmlParser",
        "rspec-json": f"{_MODULE}.rspec_json:RspecJsonParser",
        "dart-json": f"{_MODULE}.dart_json:DartJsonParser",
        "gradle": f"{_MODULE}.gradle:GradleParser",
        "phpunit": f"{_MODULE}.phpunit:PhpunitParser",
        "vitest": f"{_MODULE}.vitest:VitestParser",
        "tap": f"{_MODULE}.tap:TapParser",
        "rspec-text": f"{_MODULE}.rspec_text:RspecTextParser",
        "minitest": f"{_MODULE}.minitest:MinitestParser",
        "ctest": f"{_MODULE}.ctest:CtestParser",
    },
)

DETECTION_ORDER = (
    "go-json",
    "dart-json",
    "rspec-json",
    "go",
    "cargo",
    "gradle",
    "ctest",
    "maven",
    "junit-xml",
    "dotnet-xml",
    "vitest",
    "jest",
    "mocha",
    "tap",
    "phpunit",
    "rspec-text",
    "minitest",
    "sympy",
    "pytest",
    "django",
    "unittest",
)
