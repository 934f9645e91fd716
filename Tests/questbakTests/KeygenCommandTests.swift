import Foundation
import QuestBakTestSupport
import XCTest

/// `questbak keygen -o FILE`: an identity file as age-keygen writes it, readable only by its
/// owner, never written over, and one that Debian's age uses as it is.
final class KeygenCommandTests: XCTestCase {
    func testKeygenWritesAnIdentityThatAgeUses() throws {
        let directory = try TemporaryTestDirectory()
        let key = directory.path("key.txt")
        let result = try Questbak.run(["keygen", "-o", key.path])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(result.standardOutput, "", "the secret key never goes to standard output")

        let attributes = try FileManager.default.attributesOfItem(atPath: key.path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let lines = try String(contentsOf: key, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.count, 4, "three lines and the final line feed")
        XCTAssertTrue(lines[0].hasPrefix("# created: 20"), String(lines[0]))
        XCTAssertTrue(lines[1].hasPrefix("# public key: age1"), String(lines[1]))
        XCTAssertTrue(lines[2].hasPrefix("AGE-SECRET-KEY-1") && lines[2].count == 74, String(lines[2]))
        let recipient = String(lines[1].dropFirst("# public key: ".count))
        XCTAssertEqual(result.standardError, "Public key: \(recipient)\n")

        // age derives the same recipient from the secret key, encrypts to it, and decrypts with the file.
        let derived = try Questbak.runTool(["age-keygen", "-y", key.path])
        XCTAssertEqual(derived.standardOutput, recipient + "\n", derived.standardError)
        let plain = directory.path("plain")
        try Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: plain)
        let encrypted = directory.path("plain.age")
        XCTAssertEqual(try Questbak.runTool(["age", "-r", recipient, "-o", encrypted.path, plain.path]).status, 0)
        let decrypted = try Questbak.runTool(["age", "-d", "-i", key.path, encrypted.path])
        XCTAssertEqual(decrypted.status, 0, decrypted.standardError)
        XCTAssertEqual(decrypted.outputData, try Data(contentsOf: plain))

        // A second key is a different key.
        let other = directory.path("other.txt")
        XCTAssertEqual(try Questbak.run(["keygen", "-o", other.path]).status, 0)
        XCTAssertNotEqual(try Data(contentsOf: other), try Data(contentsOf: key))
    }

    func testKeygenNeverOverwritesAndLeavesNothingWhenItCannotWrite() throws {
        let directory = try TemporaryTestDirectory()
        let key = directory.path("key.txt")
        XCTAssertEqual(try Questbak.run(["keygen", "-o", key.path]).status, 0)
        let before = try DirectoryState(of: directory.url)
        let again = try Questbak.run(["keygen", "-o", key.path])
        XCTAssertEqual(again.status, 73, again.standardError)
        XCTAssertTrue(again.standardError.contains("already exists"), again.standardError)
        XCTAssertEqual(try DirectoryState(of: directory.url), before, "the existing key is untouched, and no temporary file is left")

        let missingFolder = try Questbak.run(["keygen", "-o", directory.path("no/such/folder/key.txt").path])
        XCTAssertEqual(missingFolder.status, 73, missingFolder.standardError)
        let folder = try Questbak.run(["keygen", "-o", directory.url.path])
        XCTAssertEqual(folder.status, 73, folder.standardError)
        XCTAssertEqual(try Questbak.run(["keygen"]).status, 64, "-o is required")
        XCTAssertEqual(try DirectoryState(of: directory.url), before)
    }
}
