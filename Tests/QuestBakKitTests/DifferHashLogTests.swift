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

    /// The log's file is in the process's temporary folder (an embedding app's own, which
    /// `tmpfile()`'s `/var/tmp` is not) and has no name there while it is open.
    func testTheLogsFileIsInTheTemporaryFolderAndNamedNowhere() throws {
        let prefix = "questbak-hashes-\(getpid())-"
        let folder = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true).resolvingSymlinksInPath().path
        let log = try Differ.HashLog()
        try log.append(contentsOf: [1, 2, 3])
        let named = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix(prefix) }
        XCTAssertEqual(named, [])
        #if os(Linux)
            // The open descriptors' targets: the log's is its unlinked file in the folder.
            let targets = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap {
                try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)
            }
            let logs = targets.filter { $0.contains("/" + prefix) }
            XCTAssertEqual(logs.count, 1, "\(targets)")
            XCTAssertTrue(logs.first?.hasPrefix(folder + "/") == true, "\(logs) not in \(folder)")
            XCTAssertTrue(logs.first?.hasSuffix(" (deleted)") == true, "\(logs)")
        #endif
        withExtendedLifetime(log) {}
    }
}
