import Foundation
import QuestBakTestSupport
import XCTest

/// What the merge tests share: the real sqlite3, a store folder's files, export and merge.
protocol MergeTesting {}

extension MergeTesting {
    /// One SQL statement's output through the real sqlite3 (one line per row, `|` between columns).
    func sql(_ store: URL, _ statement: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let result = try Questbak.runTool(["sqlite3", store.path, statement])
        XCTAssertEqual(result.status, 0, result.standardError, file: file, line: line)
        return result.standardOutput.trimmingCharacters(in: .newlines)
    }

    /// Every file beside the store, by name, with its bytes (a folder's own entry has none).
    func files(_ store: URL) -> [String: Data] {
        var found: [String: Data] = [:]
        let folder = store.deletingLastPathComponent()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] {
            found[name] = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path)
        }
        return found
    }

    func export(_ store: URL, to archive: URL, file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try Questbak.run(["export", store.path, "-o", archive.path, "-q"])
        XCTAssertEqual(result.status, 0, result.standardError, file: file, line: line)
    }

    /// `import --merge --json`, which must succeed; its report document.
    func merge(
        _ archive: URL, into store: URL, _ extra: [String] = [], file: StaticString = #filePath, line: UInt = #line
    ) throws -> [String: Any] {
        let result = try Questbak.run(["import", archive.path, "--merge", "--into", store.path, "--json"] + extra)
        XCTAssertEqual(result.status, 0, result.standardError, file: file, line: line)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any], result.standardOutput)
    }

    /// The report's entries of one rule.
    func entries(_ document: [String: Any], rule: String) -> [[String: Any]] {
        ((document["entries"] as? [[String: Any]]) ?? []).filter { $0["rule"] as? String == rule }
    }
}
