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
        }
    }
}
