import Foundation
import QuestBakTestSupport
import XCTest

/// An age-encrypted archive given to a command that reads archives, without a key: refused with
/// 65 and a sentence that says what it is, nothing written (not "neither a store nor a tar").
final class EncryptedArchiveCommandTests: XCTestCase {
    func testAnEncryptedArchiveWithoutAKeyIsNamedAsSuch() throws {
        let directory = try TemporaryTestDirectory()
        let archive = directory.path("backup.qbak")
        XCTAssertEqual(try Questbak.run(["export", try directory.copyFixture("v2-typical").path, "-o", archive.path, "-q"]).status, 0)
        let key = directory.path("key.txt")
        XCTAssertEqual(try Questbak.run(["keygen", "-o", key.path]).status, 0)
        let recipient = try XCTUnwrap(
            try String(contentsOf: key, encoding: .utf8).split(separator: "\n").first { $0.hasPrefix("# public key: ") }?
                .dropFirst("# public key: ".count))
        let encrypted = directory.path("backup.qbak.age")
        let age = try Questbak.runTool(["age", "-r", String(recipient), "-o", encrypted.path, archive.path])
        XCTAssertEqual(age.status, 0, age.standardError)
        let before = try DirectoryState(of: directory.url)
        for command in [
            ["import", encrypted.path, "--validate"], ["import", encrypted.path, "--into", directory.path("r/default.store").path],
            ["verify", encrypted.path], ["inspect", encrypted.path], ["diff", encrypted.path, archive.path],
            ["import", encrypted.path, "--merge", "--into", directory.path("v2-typical/default.store").path],
        ] {
            let result = try Questbak.run(command)
            XCTAssertEqual(result.status, 65, "\(command): \(result.standardError)")
            XCTAssertTrue(result.standardError.contains("an age-encrypted archive"), "\(command): \(result.standardError)")
        }
        XCTAssertEqual(try DirectoryState(of: directory.url), before, "nothing was written")
        XCTAssertEqual(
            try Questbak.runTool(["age", "-d", "-i", key.path, "-o", directory.path("plain.qbak").path, encrypted.path]).status, 0)
        XCTAssertEqual(try Data(contentsOf: directory.path("plain.qbak")), try Data(contentsOf: archive))
    }
}
