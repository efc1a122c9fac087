"""go test -v: subtests, parallel output, panics, build failures, benchmarks, several packages."""

from contextweaver.records import TestStatus
from contextweaver.validation import parse_observation

RUN = """\
=== RUN   TestParse
=== RUN   TestParse/empty
=== RUN   TestParse/unicode
    parse_test.go:31: got "x", want "y"
--- FAIL: TestParse (0.00s)
    --- PASS: TestParse/empty (0.00s)
    --- FAIL: TestParse/unicode (0.00s)
=== RUN   TestSkipMe
    parse_test.go:40: needs docker
--- SKIP: TestSkipMe (0.00s)
FAIL
exit status 1
FAIL\tgithub.com/acme/tool/parse\t0.012s
=== RUN   TestOK
--- PASS: TestOK (0.00s)
PASS
ok  \tgithub.com/acme/tool/util\t(cached)
"""


def test_subtests_and_packages_name_every_test() -> None:
    report = parse_observation(RUN, "go test -v ./...")
    assert report is not None and report.runner == "go"
    assert report.tests == {
        "github.com/acme/tool/parse.TestParse": TestStatus.FAILED,
        "github.com/acme/tool/parse.TestParse/empty": TestStatus.PASSED,
        "github.com/acme/tool/parse.TestParse/unicode": TestStatus.FAILED,
        "github.com/acme/tool/parse.TestSkipMe": TestStatus.SKIPPED,
        "github.com/acme/tool/util.TestOK": TestStatus.PASSED,
    }
    assert report.totals is None and report.complete and report.failed_signal


def test_panic_fails_the_running_test() -> None:
    text = "=== RUN   TestBoom\npanic: runtime error: index out of range [3] with length 2\n\n"
    text += "goroutine 7 [running]:\nFAIL\tgithub.com/acme/boom\t0.004s\n"
    report = parse_observation(text, "go test ./boom")
    assert report is not None
    assert report.tests == {"github.com/acme/boom.TestBoom": TestStatus.FAILED}


def test_build_failure_is_a_package_error() -> None:
    text = "# github.com/acme/x [github.com/acme/x.test]\n./x_test.go:9:2: undefined: Frob\n"
    text += "FAIL\tgithub.com/acme/x [build failed]\n"
    report = parse_observation(text, "go test ./x")
    assert report is not None
    assert report.tests == {"github.com/acme/x.[build failed]": TestStatus.ERROR}
    assert report.failed_signal


def test_truncated_run_without_package_line_is_incomplete() -> None:
    report = parse_observation("=== RUN   TestA\n--- PASS: TestA (0.01s)\n=== RUN   TestB\n")
    assert report is not None and not report.complete


def test_benchmarks_count_as_passed() -> None:
    text = "goos: linux\nBenchmarkHash-8   \t 1000000\t      1042 ns/op\nPASS\nok  \tacme/hash\t1.2s\n"
    report = parse_observation(text, "go test -bench .")
    assert report is not None
    assert report.tests == {"acme/hash.BenchmarkHash": TestStatus.PASSED}


def test_benchmark_failures_and_skips_have_no_duration() -> None:
    text = """goos: linux
goarch: amd64
pkg: example.com/codec
BenchmarkEncode-8   \t  500000\t      2310 ns/op
--- FAIL: BenchmarkDecode
    codec_test.go:41: decode mismatch
--- SKIP: BenchmarkStream
    codec_test.go:58: needs network
FAIL
exit status 1
FAIL\texample.com/codec\t2.104s
"""
    report = parse_observation(text, "go test -bench . ./...")
    assert report is not None
    assert report.tests == {
        "example.com/codec.BenchmarkEncode": TestStatus.PASSED,
        "example.com/codec.BenchmarkDecode": TestStatus.FAILED,
        "example.com/codec.BenchmarkStream": TestStatus.SKIPPED,
    }
