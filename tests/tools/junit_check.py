#!/usr/bin/python3
"""Checks a JUnit XML file the way a CI system reads it.

rxerun writes its JUnit report by hand; this parses it with junitparser (the
library many CI tools use), so a file that is not well-formed XML, or whose
declared counts disagree with its testcases, fails here and not in a user's
pipeline.

    junit_check.py FILE --expect-tests N --expect-failures N --expect-errors N
                   --expect-skipped N [--expect-failure-case NAME ...]
                   [--expect-error-case NAME ...] [--expect-skipped-case NAME ...]
                   [--expect-case NAME ...] [--expect-suite NAME ...]

A report of several runs (a suite) holds one <testsuite> per run; a case is
then named SUITE::CASE ("vm-pass@6.1::cleanup"), and a name without "::"
must be unique across the suites.

Exit 0 when every expectation holds, 1 (with one line per problem on stderr)
otherwise, 2 on bad usage.
"""

import argparse
import sys

from junitparser import Error, Failure, JUnitXml, Skipped, TestSuite


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("file")
    p.add_argument("--expect-tests", type=int)
    p.add_argument("--expect-failures", type=int)
    p.add_argument("--expect-errors", type=int)
    p.add_argument("--expect-skipped", type=int)
    p.add_argument("--expect-case", action="append", default=[], metavar="NAME",
                   help="a testcase with this name exists")
    p.add_argument("--expect-failure-case", action="append", default=[], metavar="NAME",
                   help="this testcase has a <failure>")
    p.add_argument("--expect-error-case", action="append", default=[], metavar="NAME",
                   help="this testcase has an <error>")
    p.add_argument("--expect-skipped-case", action="append", default=[], metavar="NAME",
                   help="this testcase is <skipped>")
    p.add_argument("--expect-suite", action="append", default=[], metavar="NAME",
                   help="a testsuite with this name exists")
    p.add_argument("--expect-suites", type=int, help="the number of testsuites")
    return p.parse_args(argv)


def suites_of(xml):
    # fromfile returns a TestSuite when the root is <testsuite>.
    return [xml] if isinstance(xml, TestSuite) else list(xml)


def declared(elem, attr):
    """The count an element declares, or None when it declares none."""
    value = elem._elem.attrib.get(attr)
    return None if value is None else int(value)


def check(args):
    problems = []
    try:
        xml = JUnitXml.fromfile(args.file)
    except Exception as e:  # ParseError, JUnitXmlError, OSError: all mean "unusable"
        return [f"{args.file}: not a readable JUnit file: {type(e).__name__}: {e}"]

    suites = suites_of(xml)
    if not suites:
        problems.append("no <testsuite> element")

    cases = {}  # "SUITE::CASE" and, when unique, "CASE" -> result tags
    bare = {}  # CASE -> how many suites have it
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in suites:
        counted = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for case in suite:
            if not case.name:
                problems.append(f"suite {suite.name!r}: a testcase without a name")
            qualified = f"{suite.name}::{case.name}"
            if qualified in cases:
                problems.append(f"testcase {case.name!r} appears twice in suite {suite.name!r}")
            results = case.result
            tags = [type(r).__name__ for r in results]
            if len(results) > 1:
                problems.append(f"testcase {case.name!r}: more than one result ({', '.join(tags)})")
            cases[qualified] = tags
            bare[case.name] = bare.get(case.name, 0) + 1
            if bare[case.name] == 1:
                cases[case.name] = tags
            else:
                cases.pop(case.name, None)
            counted["tests"] += 1
            counted["failures"] += sum(isinstance(r, Failure) for r in results)
            counted["errors"] += sum(isinstance(r, Error) for r in results)
            counted["skipped"] += sum(isinstance(r, Skipped) for r in results)
        for key, n in counted.items():
            d = declared(suite, key)
            if d is not None and d != n:
                problems.append(f"suite {suite.name!r} declares {key}={d} but holds {n}")
            totals[key] += n
    if not isinstance(xml, TestSuite):
        for key, n in totals.items():
            d = declared(xml, key)
            if d is not None and d != n:
                problems.append(f"<testsuites> declares {key}={d} but holds {n}")

    for key in totals:
        want = getattr(args, "expect_" + key)
        if want is not None and want != totals[key]:
            problems.append(f"expected {want} {key}, found {totals[key]}")

    def expect(names, tag, what):
        for name in names:
            if name not in cases:
                problems.append(f"no testcase named {name!r} (have: {', '.join(map(repr, cases))})")
            elif tag is not None and tag not in cases[name]:
                problems.append(f"testcase {name!r} is not {what} (results: {cases[name] or 'none'})")

    names = [s.name for s in suites]
    for name in args.expect_suite:
        if name not in names:
            problems.append(f"no testsuite named {name!r} (have: {', '.join(map(repr, names))})")
    if args.expect_suites is not None and args.expect_suites != len(suites):
        problems.append(f"expected {args.expect_suites} testsuites, found {len(suites)}")

    expect(args.expect_case, None, "present")
    expect(args.expect_failure_case, "Failure", "a failure")
    expect(args.expect_error_case, "Error", "an error")
    expect(args.expect_skipped_case, "Skipped", "skipped")
    return problems


def main(argv):
    args = parse_args(argv)
    problems = check(args)
    for p in problems:
        print(f"junit_check: {args.file}: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
