#!/usr/bin/env python3
"""Prints 'tests: N passed, N failed, N skipped' from the xunit file of `swift test --parallel`,
which, unlike a serial run, closes without XCTest's "Executed N tests" line. Exits 1 when the
file lists no test at all: a test run that ran nothing is no pass."""
import sys
import xml.etree.ElementTree as ElementTree

cases = ElementTree.parse(sys.argv[1]).getroot().iter("testcase")
passed = failed = skipped = 0
for case in cases:
    if case.find("failure") is not None or case.find("error") is not None:
        failed += 1
    elif case.find("skipped") is not None:
        skipped += 1
    else:
        passed += 1
print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
