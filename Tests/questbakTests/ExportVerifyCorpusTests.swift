import Foundation
import QuestBakTestSupport
import XCTest

/// Issue #23: every store shape the fixtures and generators make (`StoreShapes.all`) exports with
/// `--verify`, which restores the archive into a scratch folder and compares, and the archive then
/// passes `verify`. The source's folder is left byte for byte as it was.
final class ExportVerifyCorpusTests: XCTestCase {
    func testEveryStoreShapeExportsWithVerifyAndRestores() throws {
        let shapes = StoreShapes.all
        // A corpus that found nothing to check proves nothing.
        XCTAssertGreaterThanOrEqual(shapes.count, 8, "the corpus lists \(shapes.map(\.name))")
        for shape in shapes {
            let directory = try TemporaryTestDirectory("questbak-corpus")
            let folder = directory.path("source")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = try shape.make(folder)
            let before = try DirectoryState(of: store.deletingLastPathComponent())
            let archive = directory.path("backup.qbak")
            let export = try Questbak.run(["export", store.path, "-o", archive.path, "--verify", "-q"])
            XCTAssertEqual(export.status, 0, "\(shape.name): export --verify: \(export.standardError)")
            XCTAssertEqual(try DirectoryState(of: store.deletingLastPathComponent()), before, "\(shape.name): the source changed")
            guard export.status == 0 else { continue }
            let verify = try Questbak.run(["verify", archive.path])
            XCTAssertEqual(
                verify.status, shape.needsRepairs ? 2 : 0, "\(shape.name): verify: \(verify.standardOutput)\(verify.standardError)")
            // And `diff` finds the backup the store it came from, record for record.
            let diff = try Questbak.run(["diff", store.path, archive.path])
            XCTAssertEqual(diff.status, 0, "\(shape.name): diff: \(diff.standardOutput)\(diff.standardError)")
        }
    }

    /// The proof restores the records as archived: a store with duplicates and an orphan (what
    /// `import --validate` repairs) is given back as it is, and the summary says it was proved.
    func testVerifyRestoresTheStoreAsItIsAnomaliesIncluded() throws {
        let directory = try TemporaryTestDirectory()
        let archive = directory.path("anomalies.qbak")
        let result = try Questbak.run(["export", try directory.copyFixture("v1-anomalies").path, "-o", archive.path, "--verify", "--json"])
        XCTAssertEqual(result.status, 0, result.standardError)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
        let verification = try XCTUnwrap(summary["verification"] as? [String: Int], "\(summary)")
        let entities = try XCTUnwrap(summary["entities"] as? [[String: Any]])
        XCTAssertEqual(verification["records"], entities.compactMap { $0["count"] as? Int }.reduce(0, +))
        XCTAssertEqual(verification["entities"], entities.count)
        let text = try Questbak.run([
            "export", try directory.copyFixture("v2-typical").path, "-o", directory.path("v2.qbak").path, "--verify",
        ])
        XCTAssertEqual(text.status, 0, text.standardError)
        XCTAssertTrue(text.standardOutput.contains("verified: restored in a scratch folder"), text.standardOutput)
        // Without --verify nothing is claimed.
        let plain = try Questbak.run(["export", try directory.copyFixture("v1-typical").path, "-o", directory.path("v1.qbak").path])
        XCTAssertFalse(plain.standardOutput.contains("verified"), plain.standardOutput)
    }

    /// A stream cannot be read back: `--verify` with `-o -` is a usage error, and nothing is written.
    func testVerifyToStandardOutputIsRefused() throws {
        let directory = try TemporaryTestDirectory()
        let result = try Questbak.run(["export", try directory.copyFixture("v2-typical").path, "-o", "-", "--verify"])
        XCTAssertEqual(result.status, 64, result.standardError)
        XCTAssertTrue(result.outputData.isEmpty)
        XCTAssertTrue(result.standardError.contains("--verify"), result.standardError)
    }

    /// A store whose restore would not be the store (here a second `Z_METADATA` row, which a
    /// TimeQuest restore does not carry): export --verify exits 65 naming the table, and leaves
    /// no archive and no temporary file beside it. The same store is exported without --verify.
    func testAnArchiveThatDoesNotRestoreTheStoreIsNotKept() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v2-typical")
        try Questbak.runTool(["sqlite3", store.path, "INSERT INTO Z_METADATA VALUES (2, 'SECOND', x'00')"])
        let output = directory.path("out")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let result = try Questbak.run(["export", store.path, "-o", output.appendingPathComponent("b.qbak").path, "--verify"])
        XCTAssertEqual(result.status, 65, result.standardError)
        XCTAssertTrue(result.standardError.contains("does not restore the store exactly"), result.standardError)
        XCTAssertTrue(result.standardError.contains("Z_METADATA"), result.standardError)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output.path), [], "nothing is left at or beside the output")
        // Without --verify the archive is written, and what it leaves out is said.
        let plain = try Questbak.run(["export", store.path, "-o", output.appendingPathComponent("c.qbak").path])
        XCTAssertEqual(plain.status, 0, plain.standardError)
        XCTAssertTrue(
            plain.standardError.contains("Z_METADATA holds 2 rows: a TimeQuest archive carries the store's one"), plain.standardError)
    }
}
