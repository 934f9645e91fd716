import Foundation
import QuestBakKit
import QuestBakTestSupport
import XCTest

/// The pipes that connect age encryption to the descriptor-based archive code, as export and
/// the readers will use them: an exported archive encrypted on its way out opens with age, tar,
/// zstd and jq, and an archive age encrypted reads through `ArchiveReader` as it streams.
final class AgePipeTests: XCTestCase {
    func testAnArchiveExportedThroughTheEncryptingPipeOpensWithAgeTarAndJq() throws {
        let directory = try TemporaryTestDirectory()
        let identity = AgeX25519Identity.generate()
        let key = directory.path("key.txt")
        try identity.identityFileText(created: Date()).write(to: key, atomically: true, encoding: .utf8)
        let encrypted = directory.path("backup.qbak.age")
        let output = open(encrypted.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        XCTAssertGreaterThanOrEqual(output, 0)
        let pipe = try AgeEncryptingPipe(
            writer: AgeEncryptingWriter(recipients: [.x25519(identity.recipient)], fileDescriptor: output, file: encrypted.path))
        _ = try Exporter.export(
            storeAt: try directory.copyFixture("v2-typical"), to: .fileDescriptor(pipe.fileDescriptor),
            options: Exporter.Options.timeQuest(createdAt: 1_700_000_000))
        try pipe.finish()
        close(output)
        XCTAssertTrue(AgeFormat.isEncrypted(prefix: try Data(contentsOf: encrypted)))

        let plain = directory.path("backup.qbak")
        let decrypted = try Questbak.runTool(["age", "-d", "-i", key.path, "-o", plain.path, encrypted.path])
        XCTAssertEqual(decrypted.status, 0, decrypted.standardError)
        let listing = try Questbak.runTool(["tar", "--zstd", "-tf", plain.path])
        XCTAssertEqual(listing.status, 0, listing.standardError)
        XCTAssertTrue(listing.standardOutput.hasPrefix("manifest.json\n"), listing.standardOutput)
        let manifest = try Questbak.runTool(["tar", "--zstd", "-xOf", plain.path, "manifest.json"])
        let jq = try Questbak.runTool(["jq", "-r", ".formatVersion"], input: manifest.outputData)
        XCTAssertEqual(jq.status, 0, jq.standardError)
        XCTAssertFalse(jq.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
        let verification = try ArchiveReader(path: plain.path).read()
        XCTAssertGreaterThan(verification.verifiedMembers, 1)
    }

    func testAnArchiveAgeEncryptedReadsThroughTheDecryptingPipe() throws {
        let directory = try TemporaryTestDirectory()
        let identity = AgeX25519Identity.generate()
        let plain = directory.path("backup.qbak")
        _ = try Exporter.export(
            storeAt: try directory.copyFixture("AnyApp/kitchen-sink"), to: .file(plain, overwrite: false),
            options: Exporter.Options.timeQuest(createdAt: 1_700_000_000))
        let encrypted = directory.path("backup.qbak.age")
        let result = try Questbak.runTool(["age", "-r", identity.recipient.encoded, "-o", encrypted.path, plain.path])
        XCTAssertEqual(result.status, 0, result.standardError)

        let expected = try ArchiveReader(path: plain.path).read()
        let pipe = try AgeDecryptingPipe(reader: AgeDecryptingReader(contentsOf: encrypted, identities: [.x25519(identity)]))
        let verification = try ArchiveReader(fileDescriptor: pipe.fileDescriptor, displayPath: encrypted.path).read()
        try pipe.finish()
        XCTAssertEqual(verification.manifest, expected.manifest)
        XCTAssertEqual(verification.verifiedMembers, expected.verifiedMembers)

        // Cut short: whatever the archive reader makes of it, the pipe names the real cause.
        let bytes = try Data(contentsOf: encrypted)
        let truncated = directory.path("truncated.age")
        try bytes.prefix(bytes.count - 10).write(to: truncated)
        let broken = try AgeDecryptingPipe(reader: AgeDecryptingReader(contentsOf: truncated, identities: [.x25519(identity)]))
        _ = try? ArchiveReader(fileDescriptor: broken.fileDescriptor, displayPath: truncated.path).read()
        XCTAssertThrowsError(try broken.finish()) { error in
            XCTAssertEqual(error as? AgeError, .damagedChunk(file: truncated.path, chunk: UInt64((bytes.count - 200) / (64 * 1024 + 16))))
        }
    }

    func testAConsumerThatStopsEarlyEndsThePipeWithoutWaitingForTheRest() throws {
        let directory = try TemporaryTestDirectory()
        let identity = AgeX25519Identity.generate()
        let plain = directory.path("plain")
        try Data(repeating: 7, count: 4_000_000).write(to: plain)
        let encrypted = directory.path("plain.age")
        XCTAssertEqual(try Questbak.runTool(["age", "-r", identity.recipient.encoded, "-o", encrypted.path, plain.path]).status, 0)
        let pipe = try AgeDecryptingPipe(reader: AgeDecryptingReader(contentsOf: encrypted, identities: [.x25519(identity)]))
        var first = [UInt8](repeating: 0, count: 10)
        XCTAssertEqual(read(pipe.fileDescriptor, &first, 10), 10)
        XCTAssertEqual(first, [UInt8](repeating: 7, count: 10))
        XCTAssertNoThrow(try pipe.finish())

        // An abandoned encrypting pipe seals no final chunk: the output is refused as cut short.
        let output = directory.path("abandoned.age")
        let descriptor = open(output.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        let abandoned = try AgeEncryptingPipe(
            writer: AgeEncryptingWriter(recipients: [.x25519(identity.recipient)], fileDescriptor: descriptor, file: output.path))
        XCTAssertEqual(write(abandoned.fileDescriptor, first, 10), 10)
        abandoned.abandon()
        close(descriptor)
        XCTAssertThrowsError(try AgeDecryptingReader(contentsOf: output, identities: [.x25519(identity)]).nextChunk()) { error in
            guard case .truncated = error as? AgeError else { return XCTFail("\(error)") }
        }
    }
}
