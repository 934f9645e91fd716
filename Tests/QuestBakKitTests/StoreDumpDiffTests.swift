import Foundation
import XCTest

@testable import QuestBakKit

/// `StoreDump.diff(expected:found:)`: the line diff golden dumps are compared with.
final class StoreDumpDiffTests: XCTestCase {
    /// Lines "l1" … "l<count>", each followed by a newline, as a dump ends.
    func text(
        _ count: Int, replacing replacements: [Int: String] = [:], removing removed: Set<Int> = [], inserting inserted: [Int: String] = [:]
    ) -> String {
        var lines: [String] = []
        for number in 1...count where !removed.contains(number) {
            lines.append(replacements[number] ?? "l\(number)")
            if let extra = inserted[number] { lines.append(extra) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    func testEqualTextsHaveNoDiff() {
        XCTAssertEqual(StoreDump.diff(expected: text(8), found: text(8)), "")
    }

    func testAChangedLineIsRemovedThenAddedWithTwoLinesOfContext() {
        XCTAssertEqual(
            StoreDump.diff(expected: text(9), found: text(9, replacing: [5: "L5"])),
            """
              l3
              l4
            - l5
            + L5
              l6
              l7
            """)
    }

    func testAnAddedLine() {
        XCTAssertEqual(
            StoreDump.diff(expected: text(9), found: text(9, inserting: [4: "new"])),
            """
              l3
              l4
            + new
              l5
              l6
            """)
    }

    func testARemovedLine() {
        XCTAssertEqual(
            StoreDump.diff(expected: text(9), found: text(9, removing: [5])),
            """
              l3
              l4
            - l5
              l6
              l7
            """)
    }

    func testChangesAtTheEdgesHaveOnlyTheContextThereIs() {
        XCTAssertEqual(
            StoreDump.diff(expected: text(6), found: text(6, replacing: [1: "first"])),
            """
            - l1
            + first
              l2
              l3
            """)
        // The line after the last newline is empty in both, so it is context too.
        XCTAssertEqual(
            StoreDump.diff(expected: text(6), found: text(7)),
            """
              l5
              l6
            + l7
              \("")
            """)
    }

    func testDistantChangesAreSeparateHunksAndNearOnesShareOne() {
        XCTAssertEqual(
            StoreDump.diff(expected: text(20), found: text(20, replacing: [3: "A", 15: "B"])),
            """
              l1
              l2
            - l3
            + A
              l4
              l5
            …
              l13
              l14
            - l15
            + B
              l16
              l17
            """)
        // Three unchanged lines between two changes: one hunk, each line printed once.
        XCTAssertEqual(
            StoreDump.diff(expected: text(12), found: text(12, replacing: [4: "A", 8: "B"])),
            """
              l2
              l3
            - l4
            + A
              l5
              l6
              l7
            - l8
            + B
              l9
              l10
            """)
    }

    func testTheContextIsAParameter() {
        XCTAssertEqual(StoreDump.diff(expected: text(9), found: text(9, replacing: [5: "L5"]), context: 0), "- l5\n+ L5")
        XCTAssertEqual(StoreDump.diff(expected: text(9), found: text(9, replacing: [5: "L5"]), context: 1), "  l4\n- l5\n+ L5\n  l6")
    }

    func testLargeInputsFallBackToTheFirstDifference() {
        // 5,001 × 5,001 lines is past the 25,000,000-cell limit of the table.
        let expected = text(5_000)
        let started = Date()
        XCTAssertEqual(
            StoreDump.diff(expected: expected, found: text(5_000, replacing: [4_321: "changed"])),
            """
            first difference at line 4321:
            - l4321
            + changed
            """)
        // A found text that stops early: the missing side is empty.
        XCTAssertEqual(
            StoreDump.diff(expected: expected, found: text(4_999) + "\n"),
            """
            first difference at line 5000:
            - l5000
            + \("")
            """)
        // A hang guard, not a speed target: the quadratic table takes minutes; loose for a loaded CI.
        XCTAssertLessThan(Date().timeIntervalSince(started), 30, "the fallback must not build the quadratic table")
        // Below the limit the full diff is used: a hunk with context, not the first difference.
        XCTAssertEqual(
            StoreDump.diff(expected: text(1_000), found: text(1_000, replacing: [10: "x"])), "  l8\n  l9\n- l10\n+ x\n  l11\n  l12")
    }
}
