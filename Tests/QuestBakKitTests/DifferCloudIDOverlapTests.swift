import XCTest

@testable import QuestBakKit

/// Whether two censuses of cloudIDs may share a value (`Differ.CloudIDCensus.mayShareAValue`),
/// decided from their logs of hashes in rounds: a hash both have is found in whichever round
/// holds it, and none is claimed where none is.
final class DifferCloudIDOverlapTests: XCTestCase {
    private func census(_ hashes: [UInt64], wellFormed: Int? = nil) throws -> Differ.CloudIDCensus {
        var census = Differ.CloudIDCensus()
        census.wellFormed = wellFormed ?? hashes.count
        if !hashes.isEmpty {
            census.hashes = try Differ.HashLog()
            try census.hashes!.append(contentsOf: hashes)
        }
        return census
    }

    func testAHashBothLogsHoldIsFoundInWhicheverRoundHoldsIt() throws {
        let mine = (0..<1000).map { UInt64($0) &* 0x9E37_79B9_7F4A_7C15 }
        let theirs = (1000..<3500).map { UInt64($0) &* 0x9E37_79B9_7F4A_7C15 }
        for hashesPerRound in [1, 7, 64, 1000, 1 << 17] {
            let label = "\(hashesPerRound) a round"
            XCTAssertFalse(try census(mine).mayShareAValue(with: census(theirs), hashesPerRound: hashesPerRound), label)
            XCTAssertFalse(try census(theirs).mayShareAValue(with: census(mine), hashesPerRound: hashesPerRound), label)
            // One hash in common, anywhere in either log, in every residue the rounds make.
            for (shared, place) in [(mine[0], 0), (mine[999], 2499), (mine[500], 1234), (mine[1], 0)] {
                var others = theirs
                others[place] = shared
                XCTAssertTrue(try census(mine).mayShareAValue(with: census(others), hashesPerRound: hashesPerRound), label)
                XCTAssertTrue(try census(others).mayShareAValue(with: census(mine), hashesPerRound: hashesPerRound), label)
            }
        }
        // The extreme hashes, and a log of one.
        XCTAssertTrue(try census([.max]).mayShareAValue(with: census([0, 5, .max]), hashesPerRound: 1))
        XCTAssertFalse(try census([.max - 1]).mayShareAValue(with: census([0, 5, .max]), hashesPerRound: 1))
    }

    func testASideWithoutAWellFormedValueSharesNoneAndALogMissingMay() throws {
        XCTAssertFalse(try census([]).mayShareAValue(with: census([1, 2])))
        XCTAssertFalse(try census([1, 2]).mayShareAValue(with: census([])))
        // Values counted but no log of their hashes: nothing says they differ.
        XCTAssertTrue(try census([], wellFormed: 3).mayShareAValue(with: census([1, 2])))
    }
}
