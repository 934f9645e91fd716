import Foundation
import QuestBakTestSupport
import XCTest

@testable import CoreDataStore

/// `DirectoryNames.starting(with:in:)` lists what `FileManager.contentsOfDirectory` lists, less
/// the names no prefix starts; `TemporaryDirectory.removeStale` finds a dead process's folder
/// among many other entries and leaves a living one's.
final class DirectoryNamesTests: XCTestCase {
    func testTheNamesAreThoseOfContentsOfDirectoryThatStartWithAPrefix() throws {
        let directory = try TemporaryTestDirectory()
        let names = [
            "questbak-export-12.abc", "questbak-snapshot-1.x", "questbak-exporter", "questbak-", "questbak", "other", ".hidden",
            "questbak-export", "Questbak-export-1.a", "questbak-export-é.ü", "q",
        ]
        for name in names { try Data().write(to: directory.path(name)) }
        try FileManager.default.createDirectory(at: directory.path("questbak-export-9.dir"), withIntermediateDirectories: false)
        for prefixes in [["questbak-export-"], ["questbak-export-", "questbak-snapshot-"], ["questbak"], [""], [], ["none"]] {
            let listed = try XCTUnwrap(DirectoryNames.starting(with: prefixes, in: directory.url.path))
            let expected = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { name in
                prefixes.contains { name.hasPrefix($0) }
            }
            XCTAssertEqual(listed.sorted(), expected.sorted(), "\(prefixes)")
        }
        XCTAssertNil(DirectoryNames.starting(with: ["q"], in: directory.path("missing").path))
    }

    func testRemoveStaleRemovesADeadProcesssFolderAmongManyOthers() throws {
        let directory = try TemporaryTestDirectory()
        for index in 0..<500 { try Data().write(to: directory.path("unrelated-\(index)")) }
        // A pid no process has (beyond Linux's pid_max), and this process's own.
        let dead = directory.path("questbak-export-2147483646.AbCdEf")
        let living = directory.path("questbak-export-\(getpid()).XyZ123")
        for folder in [dead, living] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            try Data("staged".utf8).write(to: folder.appendingPathComponent("Recipe.jsonl"))
        }
        let removed = TemporaryDirectory.removeStale(prefixes: ["questbak-export"], in: directory.url)
        XCTAssertEqual(removed, [dead.path])
        XCTAssertFalse(FileManager.default.fileExists(atPath: dead.path))
        XCTAssertTrue(FileManager.default.fileExists(atPath: living.path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).count, 501)
    }
}
