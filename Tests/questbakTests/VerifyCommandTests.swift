import Foundation
import QuestBakTestSupport
import XCTest

/// `questbak verify ARCHIVE`: an archive restores exactly, or verify says what a restore would
/// change, or that the archive is damaged; it writes nothing outside its scratch folder.
final class VerifyCommandTests: XCTestCase {
    func export(_ fixture: String, in directory: TemporaryTestDirectory) throws -> URL {
        let archive = directory.path("\(fixture.replacingOccurrences(of: "/", with: "-")).qbak")
        let result = try Questbak.run(["export", try directory.copyFixture(fixture).path, "-o", archive.path, "-q"])
        XCTAssertEqual(result.status, 0, result.standardError)
        return archive
    }

    func testAnArchiveThatRestoresExactlyPasses() throws {
        for fixture in ["AnyApp/kitchen-sink", "v2-typical", "v1-wal"] {
            let directory = try TemporaryTestDirectory()
            let archive = try export(fixture, in: directory)
            let before = try DirectoryState(of: directory.url)
            let result = try Questbak.run(["verify", archive.path])
            XCTAssertEqual(result.status, 0, "\(fixture): \(result.standardOutput)\(result.standardError)")
            XCTAssertTrue(result.standardOutput.contains("restores exactly"), result.standardOutput)
            XCTAssertFalse(result.standardOutput.contains("differs"), result.standardOutput)
            XCTAssertEqual(try DirectoryState(of: directory.url), before, "verify writes nothing beside the archive")
        }
    }

    func testAnArchiveARestoreWouldChangeFailsSayingWhat() throws {
        let directory = try TemporaryTestDirectory()
        let archive = try export("v1-anomalies", in: directory)
        let result = try Questbak.run(["verify", archive.path, "--json"])
        XCTAssertEqual(result.status, 2, result.standardError)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
        XCTAssertEqual(document["restoresExactly"] as? Bool, false)
        XCTAssertEqual((document["counts"] as? [String: Int])?["repair.dedup"], 3)
    }

    func testATruncatedOrTamperedArchiveFails() throws {
        let directory = try TemporaryTestDirectory()
        let archive = try export("AnyApp/kitchen-sink", in: directory)
        let bytes = try Data(contentsOf: archive)
        let truncated = directory.path("truncated.qbak")
        try bytes.prefix(bytes.count / 2).write(to: truncated)
        XCTAssertEqual(try Questbak.run(["verify", truncated.path]).status, 65)
        // One record changed inside an uncompressed archive, its checksum left as it was.
        let plain = directory.path("plain.qbak")
        XCTAssertEqual(
            try Questbak.run(["export", try directory.copyFixture("v2-typical").path, "-o", plain.path, "--compression", "none", "-q"])
                .status,
            0)
        var text = try Data(contentsOf: plain)
        let needle = Data("Morning".utf8)
        let range = try XCTUnwrap(text.range(of: needle))
        text.replaceSubrange(range, with: Data("Mourning".utf8).prefix(needle.count))
        let tampered = directory.path("tampered.qbak")
        try text.write(to: tampered)
        let result = try Questbak.run(["verify", tampered.path])
        XCTAssertEqual(result.status, 65, result.standardError)
        XCTAssertTrue(result.standardError.contains("SHA-256") || result.standardError.contains("sha256"), result.standardError)
    }
}
