import Foundation
import QuestBakTestSupport
import XCTest

@testable import CoreDataStore

/// `FileBytes.copy`, the one copy of a whole store (a snapshot, a backup before a replace): the
/// bytes exactly, at every size around its block, the permissions it is asked for or the
/// source's, and each failure on the side it happened, with nothing left behind.
final class FileBytesTests: XCTestCase {
    func testCopiesEveryByteAtSizesAroundItsBlock() throws {
        let directory = try TemporaryTestDirectory()
        let block = ExternalStorage.chunkSize
        var generator = SystemRandomNumberGenerator()
        for size in [0, 1, 4095, 4096, block - 1, block, block + 1, 2 * block + 7] {
            let bytes = Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let source = directory.path("source-\(size)")
            let copy = directory.path("copy-\(size)")
            try bytes.write(to: source)
            try FileBytes.copy(source.path, to: copy.path)
            XCTAssertEqual(try Data(contentsOf: copy), bytes, "\(size) bytes")
        }
    }

    func testKeepsTheSourcesPermissionsUnlessToldOtherwise() throws {
        let directory = try TemporaryTestDirectory()
        let source = directory.path("source")
        try Data("store".utf8).write(to: source)
        // 0o666: a umask of 022, which a file's creation applies, would make it 0o644.
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: source.path)
        try FileBytes.copy(source.path, to: directory.path("kept").path)
        try FileBytes.copy(source.path, to: directory.path("private").path, permissions: 0o600)
        let mode = { (name: String) in
            (try FileManager.default.attributesOfItem(atPath: directory.path(name).path)[.posixPermissions] as? NSNumber)?.intValue
        }
        XCTAssertEqual(try mode("kept"), 0o666)
        XCTAssertEqual(try mode("private"), 0o600)
    }

    func testAFailureNamesItsSideAndLeavesNothingBehind() throws {
        let directory = try TemporaryTestDirectory()
        let source = directory.path("source")
        try Data("store".utf8).write(to: source)
        let existing = directory.path("existing")
        try Data("keep me".utf8).write(to: existing)

        XCTAssertThrowsError(try FileBytes.copy(source.path, to: existing.path)) {
            XCTAssertEqual($0 as? FileBytes.CopyFailure, .writing(errno: EEXIST))
        }
        XCTAssertEqual(try Data(contentsOf: existing), Data("keep me".utf8), "a file in the way is not touched")

        XCTAssertThrowsError(try FileBytes.copy(directory.path("missing").path, to: directory.path("a").path)) {
            XCTAssertEqual($0 as? FileBytes.CopyFailure, .reading(errno: ENOENT))
        }
        // A folder opens for reading and fails at the first read, after the copy was created.
        try FileManager.default.createDirectory(at: directory.path("folder"), withIntermediateDirectories: false)
        XCTAssertThrowsError(try FileBytes.copy(directory.path("folder").path, to: directory.path("b").path)) {
            XCTAssertEqual($0 as? FileBytes.CopyFailure, .reading(errno: EISDIR))
        }
        XCTAssertThrowsError(try FileBytes.copy(source.path, to: directory.path("no-such-folder/c").path)) {
            XCTAssertEqual($0 as? FileBytes.CopyFailure, .writing(errno: ENOENT))
        }
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted(), ["existing", "folder", "source"],
            "no copy is left where one failed")
        XCTAssertEqual(FileBytes.CopyFailure.writing(errno: ENOSPC).reason, "No space left on device")
    }

    /// The copy is made in the kernel (`copy_file_range`) where it can be, and by reads and writes
    /// where it cannot: a file of /proc, whose size says 0, is copied by the loop, every byte.
    func testAFileTheKernelCannotCopyIsCopiedByTheLoop() throws {
        #if os(Linux)
            let directory = try TemporaryTestDirectory()
            let copy = directory.path("version")
            try FileBytes.copy("/proc/version", to: copy.path)
            let expected = try Data(contentsOf: URL(fileURLWithPath: "/proc/version"))
            XCTAssertFalse(expected.isEmpty)
            XCTAssertEqual(try Data(contentsOf: copy), expected)
        #endif
    }
}
