"""Parse time of a ~1 MB observation per runner (the tracker runs on every agent step).

Best of 5, wall clock and CPU time of this process (the CPU column is steadier on a shared machine).
Run: .venv/bin/python benchmarks/parser_speed.py
"""

from __future__ import annotations

import time

from contextweaver.validation import parse_observation

_ONE_RUN = {
    "pytest": ("pytest -v", lambda i: f"tests/test_m{i % 50}.py::test_case_{i}[param-{i}] PASSED  [ 50%]\n"),
    "unittest": ("python -m unittest -v", lambda i: f"test_case_{i} (pkg.tests.Case{i % 40}) ... ok\n"),
    "sympy": (
        "bin/test",
        lambda i: f"sympy/core/tests/test_m{i}.py[40] ........................................ [OK]\n",
    ),
    "go": (
        "go test -v ./...",
        lambda i: f"=== RUN   TestCase{i}\n    x_test.go:10: log line\n--- PASS: TestCase{i} (0.00s)\n",
    ),
    "go-json": (
        "go test -json",
        lambda i: (
            f'{{"Time":"2024-01-01T00:00:00Z","Action":"pass","Package":"acme/p","Test":"TestC{i}","Elapsed":0}}\n'
        ),
    ),
    "cargo": ("cargo test", lambda i: f"test module::tests::case_{i} ... ok\n"),
    "jest": ("npx jest", lambda i: f"    ✓ handles case number {i} (3 ms)\n"),
    "mocha": ("npx mocha", lambda i: f"      ✔ handles case number {i}\n"),
    "maven": (
        "mvn test",
        lambda i: (
            f"[INFO] Tests run: 4, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.1 s - in a.C{i}\n"
        ),
    ),
    "junit-xml": ("cat r.xml", lambda i: f'<testcase classname="a.B{i % 30}" name="test_{i}" time="0.1"/>\n'),
    "dotnet-xml": (
        "cat r.trx",
        lambda i: f'<UnitTestResult testName="Case{i}" outcome="Passed" duration="0:0:1"/>\n',
    ),
    "dart-json": (
        "flutter test --machine",
        lambda i: (
            f'{{"test":{{"id":{i},"name":"group case {i}","suiteID":0,"groupIDs":[1]}},"type":"testStart","time":{i}}}\n'
            f'{{"testID":{i},"result":"success","skipped":false,"hidden":false,"type":"testDone","time":{i}}}\n'
        ),
    ),
    "rspec-json": (
        "rspec --format json",
        lambda i: (
            f'{{"id":"./spec/a_spec.rb[1:{i}]","description":"case {i}","full_description":"A case {i}",'
            f'"status":"passed","file_path":"./spec/a_spec.rb","line_number":{i}}},'
        ),
    ),
    "gradle": ("./gradlew test", lambda i: f"com.acme.Case{i % 40}Test > handlesCase{i}() PASSED\n"),
    "phpunit": ("vendor/bin/phpunit", lambda i: f"{'.' * 63} {i * 63} / 9999999 ( 50%)\n"),
    "vitest": ("npx vitest run", lambda i: f" ✓ src/case{i}.test.ts  (12 tests) {i % 9}ms\n"),
    "tap": ("node --test", lambda i: f"ok {i} - handles case number {i}\n  ---\n  duration_ms: 0.1\n  ...\n"),
    "rspec-text": ("bundle exec rspec", lambda i: f"{'.' * 79}\n"),
    "minitest": ("rake test", lambda i: f"Case{i % 40}Test#test_case_{i} = 0.00 s = .\n"),
    "ctest": (
        "ctest",
        lambda i: f"{i}/99999 Test #{i}: case_{i} ..........................   Passed    0.01 sec\n",
    ),
}
_HEAD = {
    "pytest": "============================= test session starts ==============================\n",
    "jest": "PASS src/big.test.js\n  Big\n",
    "mocha": "\n  Big\n    suite\n",
    "junit-xml": '<testsuites><testsuite name="big">\n',
    "dotnet-xml": "<TestRun><Results>\n",
    "maven": "[INFO]  T E S T S\n",
    "gradle": "> Task :test\n\n",
    "phpunit": "PHPUnit 10.5.20 by Sebastian Bergmann and contributors.\n\n",
    "vitest": "\n RUN  v1.6.0 /app\n\n",
    "tap": "TAP version 13\n",
    "minitest": "# Running:\n\n",
    "ctest": "Test project /app/build\n",
    "dart-json": '{"protocolVersion":"0.1.1","type":"start","time":0}\n'
    '{"suite":{"id":0,"platform":"vm","path":"test/big_test.dart"},"type":"suite","time":0}\n',
    "rspec-json": '{"version":"3.13.0","examples":[',
}
_TAIL = {
    "pytest": "==== 1 failed, 99 passed in 1.0s ====\n",
    "unittest": "Ran 100 tests in 1.0s\n\nOK\n",
    "sympy": "== tests finished: 100 passed, in 1.0 seconds ==\n",
    "go": "PASS\nok  \tacme/p\t1.0s\n",
    "go-json": '{"Time":"2024-01-01T00:00:00Z","Action":"pass","Package":"acme/p","Elapsed":1}\n',
    "cargo": "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n",
    "jest": "Tests:       100 passed, 100 total\n",
    "mocha": "\n  100 passing (1s)\n",
    "maven": "[INFO] Results:\n[INFO] Tests run: 100, Failures: 0, Errors: 0, Skipped: 0\n[INFO] BUILD SUCCESS\n",
    "junit-xml": "</testsuite></testsuites>\n",
    "dotnet-xml": "</Results></TestRun>\n",
    "dart-json": '{"success":true,"type":"done","time":9}\n',
    "rspec-json": '{"id":"x","full_description":"A last","status":"passed"}],"summary":{"example_count":1,'
    '"failure_count":0,"pending_count":0},"summary_line":"1 example, 0 failures"}\n',
    "gradle": "\n100 tests completed, 1 failed\n\nBUILD FAILED in 9s\n",
    "phpunit": "\nOK (100 tests, 100 assertions)\n",
    "vitest": "\n Test Files  100 passed (100)\n      Tests  1200 passed (1200)\n",
    "tap": "1..100\n# tests 100\n# pass 100\n# fail 0\n",
    "rspec-text": "\nFinished in 9.1 seconds (files took 1 second to load)\n100 examples, 0 failures\n",
    "minitest": "\n100 runs, 100 assertions, 0 failures, 0 errors, 0 skips\n",
    "ctest": "\n100% tests passed, 0 tests failed out of 100\n",
}


def observation(runner: str, size: int = 1_000_000) -> str:
    lines = []
    total = 0
    i = 0
    make = _ONE_RUN[runner][1]
    while total < size:
        line = make(i)
        lines.append(line)
        total += len(line)
        i += 1
    return (
        "<returncode>0</returncode>\n<output>\n"
        + _HEAD.get(runner, "")
        + "".join(lines)
        + _TAIL[runner]
        + "</output>"
    )


def best_of(text: str, command: str, runs: int = 5) -> tuple[float, float, int]:
    """Best wall and best CPU milliseconds over `runs` parses, and the number of tests parsed."""
    wall = cpu = float("inf")
    tests = 0
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        report = parse_observation(text, command)
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
        tests = len(report.tests) if report else 0
    return wall * 1000, cpu * 1000, tests


def main() -> None:
    print(f"{'runner':<12} {'MB':>5} {'tests':>7} {'wall ms':>8} {'cpu ms':>7}")
    for runner, (command, _) in _ONE_RUN.items():
        text = observation(runner)
        wall, cpu, tests = best_of(text, command)
        print(f"{runner:<12} {len(text) / 1e6:5.2f} {tests:>7} {wall:8.1f} {cpu:7.1f}")
    noise = "\n".join(
        f"src/module_{i}.py:{i}: def function_{i}(arg): return arg  # ordinary text" for i in range(14000)
    )
    wall, cpu, _ = best_of(noise, "grep -rn def src")
    print(f"{'no runner':<12} {len(noise) / 1e6:5.2f} {'-':>7} {wall:8.1f} {cpu:7.1f}")


if __name__ == "__main__":
    main()
