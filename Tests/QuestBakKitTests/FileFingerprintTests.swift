import Foundation
import QuestBakTestSupport
import XCTest

@testable import CoreDataStore

/// `FileFingerprint` reads each file's `lstat` (size, modification time to the nanosecond,
/// device and inode) instead of `FileManager.attributesOfItem`'s size and `Double` modification
/// date. Every kind of change is made to a file, and both fingerprints are taken before and after:
/// wherever the old one saw a change the new one must too, and the new one must also see a file
/// replaced by another of the same size and time, which the old one missed.
final class FileFingerprintTests: XCTestCase {
    /// The fingerprint as it was before (StoreSnapshot.swift up to c8da439).
    private func attributesFingerprint(_ urls: [URL]) -> [String] {
        urls.map { url in
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return "absent" }
            let size = (attributes[.size] as? NSNumber)?.int64Value ?? -1
            let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            return "\(size)@\(modified)"
        }
    }

    private func setModificationTime(_ url: URL, seconds: Int, nanoseconds: Int) {
        var times = [
            timespec(tv_sec: seconds, tv_nsec: nanoseconds), timespec(tv_sec: seconds, tv_nsec: nanoseconds),
        ]
        XCTAssertEqual(utimensat(AT_FDCWD, url.path, &times, 0), 0)
    }

    func testEveryChangeTheAttributesSawIsSeenAndAReplacementBesides() throws {
        let directory = try TemporaryTestDirectory()
        let store = directory.path("default.store")
        let wal = directory.path("default.store-wal")
        let files = [store, wal]
        func reset() throws {
            try? FileManager.default.removeItem(at: store)
            try? FileManager.default.removeItem(at: wal)
            try Data("0123456789".utf8).write(to: store)
            setModificationTime(store, seconds: 1_700_000_000, nanoseconds: 500_000_000)
        }
        // Each change, and whether the old fingerprint saw it (the new one must see them all).
        let changes: [(name: String, oldSees: Bool, change: () throws -> Void)] = [
            ("nothing", false, {}),
            ("bytes appended", true, { try Data("0123456789ab".utf8).write(to: store) }),
            ("same size, later time", true, { self.setModificationTime(store, seconds: 1_700_000_001, nanoseconds: 500_000_000) }),
            ("same size, a microsecond later", true, { self.setModificationTime(store, seconds: 1_700_000_000, nanoseconds: 500_001_000) }),
            // Below a `Double`'s resolution of seconds since 1970 (about 240 ns today).
            ("same size, a nanosecond later", false, { self.setModificationTime(store, seconds: 1_700_000_000, nanoseconds: 500_000_001) }),
            ("a WAL appears", true, { try Data("wal".utf8).write(to: wal) }),
            ("the store removed", true, { try FileManager.default.removeItem(at: store) }),
            (
                "replaced by another file of the same size and time", false,
                {
                    let other = directory.path("other")
                    try Data("9876543210".utf8).write(to: other)
                    self.setModificationTime(other, seconds: 1_700_000_000, nanoseconds: 500_000_000)
                    XCTAssertEqual(rename(other.path, store.path), 0)
                }
            ),
        ]
        for (name, oldSees, change) in changes {
            try reset()
            let before = try FileFingerprint.of(files)
            let oldBefore = attributesFingerprint(files)
            try change()
            let changed = try FileFingerprint.of(files) != before
            let oldChanged = attributesFingerprint(files) != oldBefore
            XCTAssertEqual(oldChanged, oldSees, "the old fingerprint, \(name)")
            XCTAssertEqual(changed, name != "nothing", name)
            if oldChanged { XCTAssertTrue(changed, "\(name): the old fingerprint saw it, the new one must") }
        }
    }

    func testAFingerprintIsOfTheLinkNotWhatItPointsAt() throws {
        // As `attributesOfItem` (lstat): the same files are compared as before.
        let directory = try TemporaryTestDirectory()
        let target = directory.path("target")
        let link = directory.path("link")
        try Data("abc".utf8).write(to: target)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let before = try FileFingerprint.of([link])
        XCTAssertEqual(FileFingerprint.entry(atPath: link.path)?.size, Int64(target.path.utf8.count))
        try Data("abcdef".utf8).write(to: target)
        XCTAssertEqual(try FileFingerprint.of([link]), before)
        XCTAssertNil(FileFingerprint.entry(atPath: directory.path("missing").path))
    }
}
