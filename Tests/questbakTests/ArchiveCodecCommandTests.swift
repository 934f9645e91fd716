import Foundation
import QuestBakTestSupport
import XCTest

/// The archive codecs through the command line, in whichever build runs the tests (`make test`
/// runs these in the default build and in the portable one, without libarchive and libzstd):
/// a round trip with the build's default compression, and a zstd archive read or refused by name.
final class ArchiveCodecCommandTests: XCTestCase {
    static let zstdMagic = Data([0x28, 0xB5, 0x2F, 0xFD])
    static let gzipMagic = Data([0x1F, 0x8B])
    static var hasZstd: Bool {
        #if SystemArchive
            return true
        #else
            return false
        #endif
    }

    func testExportImportVerifyRoundTripWithTheDefaultCompression() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v2-typical")
        let archive = directory.path("backup.qbak")
        let export = try Questbak.run(["export", store.path, "-o", archive.path, "--verify", "-q"])
        XCTAssertEqual(export.status, 0, export.standardError)
        let magic = try Data(contentsOf: archive).prefix(4)
        XCTAssertTrue(magic.starts(with: Self.hasZstd ? Self.zstdMagic : Self.gzipMagic), "\(Array(magic))")
        let restored = directory.path("restored/default.store")
        let restore = try Questbak.run(["import", archive.path, "--into", restored.path])
        XCTAssertEqual(restore.status, 0, restore.standardError)
        let verify = try Questbak.run(["verify", archive.path])
        XCTAssertEqual(verify.status, 0, verify.standardOutput + verify.standardError)
        let again = directory.path("again.qbak")
        XCTAssertEqual(try Questbak.run(["export", restored.path, "-o", again.path, "-q"]).status, 0)
        let diff = try Questbak.run(["diff", archive.path, again.path])
        XCTAssertEqual(diff.status, 0, diff.standardOutput + diff.standardError)
    }

    func testAGzipArchiveRoundTripsInEveryBuild() throws {
        let directory = try TemporaryTestDirectory()
        let archive = directory.path("backup.qbak")
        let export = try Questbak.run([
            "export", try directory.copyFixture("v1-typical").path, "-o", archive.path, "--compression", "gzip", "-q",
        ])
        XCTAssertEqual(export.status, 0, export.standardError)
        XCTAssertTrue(try Data(contentsOf: archive).starts(with: Self.gzipMagic))
        // gzip(1) reads the concatenated members as one stream, to the tar questbak reads.
        XCTAssertEqual(try Questbak.runTool(["gzip", "-t", archive.path]).status, 0)
        XCTAssertEqual(try Questbak.run(["verify", archive.path]).status, 0)
    }

    func testAZstdArchiveIsReadOrRefusedNamingTheCodec() throws {
        let directory = try TemporaryTestDirectory()
        let plain = directory.path("plain.qbak")
        let export = try Questbak.run([
            "export", try directory.copyFixture("v2-typical").path, "-o", plain.path, "--compression", "none", "-q",
        ])
        XCTAssertEqual(export.status, 0, export.standardError)
        let archive = directory.path("backup.qbak")
        XCTAssertEqual(try Questbak.runTool(["zstd", "-q", "--check", plain.path, "-o", archive.path]).status, 0)
        let inspect = try Questbak.run(["inspect", archive.path])
        let written = try Questbak.run([
            "export", try directory.copyFixture("v1-typical").path, "-o", directory.path("z.qbak").path, "--compression", "zstd", "-q",
        ])
        if Self.hasZstd {
            XCTAssertEqual(inspect.status, 0, inspect.standardError)
            XCTAssertEqual(written.status, 0, written.standardError)
        } else {
            XCTAssertEqual(inspect.status, 69, inspect.standardError)
            XCTAssertTrue(inspect.standardError.contains("compressed with zstd"), inspect.standardError)
            XCTAssertTrue(inspect.standardError.contains("built without the zstd codec"), inspect.standardError)
            XCTAssertEqual(written.status, 69, written.standardError)
            XCTAssertTrue(written.standardError.contains("z.qbak: cannot write a zstd archive"), written.standardError)
            XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("z.qbak").path), "no partial output")
        }
    }
}
