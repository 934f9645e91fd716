import XCTest

@testable import QuestBakKit

/// The log of cloudID hashes a census reads a second time (`Differ.HashLog`): every hash back, in
/// order, across the chunks it is read in, and again after more are appended.
final class DifferHashLogTests: XCTestCase {
    func testEveryHashComesBackInOrderAcrossChunksAndAfterMoreAreAppended() throws {
        let log = try Differ.HashLog()
        var expected: [UInt64] = []
        func read() throws -> [UInt64] {
            var hashes: [UInt64] = []
            try log.forEachHash { hashes.append($0) }
            return hashes
        }
        XCTAssertEqual(try read(), [])
        // Appended in uneven parts, past several chunks of 8,192.
        for part in [1, 4095, 8192, 9000, 0, 3] {
            let hashes = (0..<part).map { UInt64(expected.count + $0) &* 0x9E37_79B9_7F4A_7C15 }
            try log.append(contentsOf: hashes)
            expected += hashes
        }
        XCTAssertEqual(log.count, expected.count)
        XCTAssertEqual(try read(), expected)
        // Read twice, then appended to: the new hashes come after the old ones.
        XCTAssertEqual(try read(), expected)
        try log.append(contentsOf: [7, UInt64.max, 0])
        expected += [7, UInt64.max, 0]
        XCTAssertEqual(try read(), expected)
    }
}
