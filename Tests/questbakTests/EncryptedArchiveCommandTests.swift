import Foundation
import QuestBakKit
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

/// Encryption through the commands (#27 §1): export encrypts to recipients or a passphrase as
/// it writes, every reader decrypts as it reads, and age, tar, zstd and jq agree.
final class EncryptedArchiveRoundTripTests: XCTestCase {
    var directory: TemporaryTestDirectory!
    var store: URL!

    override func setUpWithError() throws {
        directory = try TemporaryTestDirectory()
        store = try directory.copyFixture("v2-typical")
    }

    /// A new identity file and its recipient.
    func keygen(_ name: String) throws -> (file: URL, recipient: String) {
        let file = directory.path(name)
        XCTAssertEqual(try Questbak.run(["keygen", "-o", file.path]).status, 0)
        let recipient = try XCTUnwrap(
            try String(contentsOf: file, encoding: .utf8).split(separator: "\n").first { $0.hasPrefix("# public key: ") }?
                .dropFirst("# public key: ".count))
        return (file, String(recipient))
    }

    func passphraseFile(_ text: String, name: String = "passphrase.txt") throws -> URL {
        let file = directory.path(name)
        try Data((text + "\n").utf8).write(to: file)
        return file
    }

    /// `input` age-encrypted to `passphrase` at scrypt work factor `workFactor`, as export's
    /// encryption writes it (the same writer), into `output`.
    func encrypt(_ input: URL, to output: URL, passphrase: String, workFactor: Int) throws {
        var encrypted = Data()
        let writer = try AgeEncryptingWriter(recipients: [.passphrase(Data(passphrase.utf8), workFactor: workFactor)]) {
            encrypted.append(contentsOf: $0)
        }
        try writer.write(try Data(contentsOf: input))
        try writer.finish()
        try encrypted.write(to: output)
    }

    /// age decrypts `archive`, and tar, zstd and jq read what comes out: the manifest first,
    /// of this format, and every entity member.
    func assertAgeTarZstdAndJqOpen(_ plain: URL, file: StaticString = #filePath, line: UInt = #line) throws {
        let listing = try Questbak.runTool(["tar", "--zstd", "-tf", plain.path])
        XCTAssertEqual(listing.status, 0, listing.standardError, file: file, line: line)
        let members = listing.standardOutput.split(separator: "\n")
        XCTAssertEqual(members.first, "manifest.json", file: file, line: line)
        XCTAssertTrue(members.contains { $0.hasPrefix("entities/") }, listing.standardOutput, file: file, line: line)
        let manifest = try Questbak.runTool(["tar", "--zstd", "-xOf", plain.path, "manifest.json"])
        let format = try Questbak.runTool(["jq", "-r", ".format"], input: manifest.outputData)
        XCTAssertEqual(format.standardOutput, "questbak-archive\n", format.standardError, file: file, line: line)
        let entity = try XCTUnwrap(members.first { $0.hasPrefix("entities/") }.map(String.init))
        let records = try Questbak.runTool(["tar", "--zstd", "-xOf", plain.path, entity])
        let parsed = try Questbak.runTool(["jq", "-c", "."], input: records.outputData)
        XCTAssertEqual(parsed.status, 0, parsed.standardError, file: file, line: line)
    }

    func testExportToRecipientsIsAnAgeFileThatAgeTarZstdAndJqOpenAndEveryReaderReadsWithAnIdentity() throws {
        let (key, recipient) = try keygen("key.txt")
        let (otherKey, otherRecipient) = try keygen("other.txt")
        let recipients = directory.path("recipients.txt")
        try Data("# the other one\n\(otherRecipient)\n".utf8).write(to: recipients)
        let encrypted = directory.path("backup.qbak.age")
        let export = try Questbak.run([
            "export", store.path, "-o", encrypted.path, "--recipient", recipient, "--recipients-file", recipients.path,
        ])
        XCTAssertEqual(export.status, 0, export.standardError)
        XCTAssertTrue(export.standardOutput.contains("encrypted: age, 2 recipients"), export.standardOutput)
        let bytes = try Data(contentsOf: encrypted)
        XCTAssertTrue(bytes.starts(with: Data("age-encryption.org/v1\n".utf8)))
        XCTAssertNil(bytes.range(of: Data("manifest.json".utf8)), "the manifest is inside the encryption")
        XCTAssertNil(bytes.range(of: Data([0x28, 0xB5, 0x2F, 0xFD])), "no zstd frame is visible")
        for identity in [key, otherKey] {
            let plain = directory.path("plain-\(identity.lastPathComponent).qbak")
            let age = try Questbak.runTool(["age", "-d", "-i", identity.path, "-o", plain.path, encrypted.path])
            XCTAssertEqual(age.status, 0, age.standardError)
            try assertAgeTarZstdAndJqOpen(plain)
        }

        // Every reader, with the identity: import restores exactly what was exported.
        let restored = directory.path("restored/default.store")
        let importing = try Questbak.run(["import", encrypted.path, "--identity", key.path, "--into", restored.path])
        XCTAssertEqual(importing.status, 0, importing.standardError)
        let same = try Questbak.run(["diff", store.path, restored.path])
        XCTAssertEqual(same.status, 0, same.standardOutput + same.standardError)
        let verify = try Questbak.run(["verify", encrypted.path, "--identity", otherKey.path])
        XCTAssertEqual(verify.status, 0, verify.standardOutput + verify.standardError)
        XCTAssertTrue(verify.standardOutput.contains("restores exactly"), verify.standardOutput)
        let inspect = try Questbak.run(["inspect", encrypted.path, "--identity", key.path])
        XCTAssertEqual(inspect.status, 0, inspect.standardError)
        XCTAssertTrue(inspect.standardOutput.contains("verified:"), inspect.standardOutput)
        let validate = try Questbak.run(["import", encrypted.path, "--identity", key.path, "--validate"])
        XCTAssertEqual(validate.status, 0, validate.standardOutput + validate.standardError)
        let dryRun = try Questbak.run([
            "import", encrypted.path, "--identity", key.path, "--into", directory.path("dry/default.store").path, "--dry-run",
        ])
        XCTAssertEqual(dryRun.status, 0, dryRun.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("dry/default.store").path))
        let plain = directory.path("plain.qbak")
        XCTAssertEqual(try Questbak.run(["export", store.path, "-o", plain.path, "-q"]).status, 0)
        let diff = try Questbak.run(["diff", encrypted.path, plain.path, "--identity", key.path])
        XCTAssertEqual(diff.status, 0, "an encrypted archive and a plain one of one store: " + diff.standardOutput + diff.standardError)
        let merge = try Questbak.run(["import", encrypted.path, "--identity", key.path, "--merge", "--into", restored.path])
        XCTAssertEqual(merge.status, 0, merge.standardOutput + merge.standardError)
        // Standard input is spooled as it comes (encrypted) and decrypted as it is read.
        let input = try Data(contentsOf: encrypted)
        let fromInput = try Questbak.run(
            ["import", "-", "--identity", key.path, "--into", directory.path("stdin/default.store").path], input: input)
        XCTAssertEqual(fromInput.status, 0, fromInput.standardError)
        XCTAssertEqual(try Questbak.run(["diff", store.path, directory.path("stdin/default.store").path]).status, 0)
        let inspectInput = try Questbak.run(["inspect", "-", "--identity", key.path], input: input)
        XCTAssertEqual(inspectInput.status, 0, inspectInput.standardError)
        XCTAssertTrue(inspectInput.standardOutput.contains("archive:             standard input"), inspectInput.standardOutput)
    }

    func testAnArchiveAgeEncryptedIsRestoredExactlyAndAPlainArchiveIsReadAsItIsWithAnIdentity() throws {
        let (key, recipient) = try keygen("key.txt")
        let plain = directory.path("plain.qbak")
        XCTAssertEqual(try Questbak.run(["export", store.path, "-o", plain.path, "-q"]).status, 0)
        let encrypted = directory.path("by-age.qbak.age")
        let age = try Questbak.runTool(["age", "-r", recipient, "-o", encrypted.path, plain.path])
        XCTAssertEqual(age.status, 0, age.standardError)
        let restored = directory.path("restored/default.store")
        let importing = try Questbak.run(["import", encrypted.path, "--identity", key.path, "--into", restored.path])
        XCTAssertEqual(importing.status, 0, importing.standardError)
        let again = directory.path("again.qbak")
        XCTAssertEqual(
            try Questbak.run(["export", restored.path, "-o", again.path, "-q", "--created-at", "2026-01-01T00:00:00Z"]).status, 0)
        let original = directory.path("original.qbak")
        XCTAssertEqual(
            try Questbak.run(["export", store.path, "-o", original.path, "-q", "--created-at", "2026-01-01T00:00:00Z"]).status, 0)
        XCTAssertEqual(
            try Questbak.run(["diff", original.path, again.path]).status, 0, "the restored store exports to the same records")
        // The keys are used only for an encrypted archive: a plain one is read as it is.
        let plainWithKey = try Questbak.run([
            "import", plain.path, "--identity", key.path, "--into", directory.path("p/default.store").path,
        ])
        XCTAssertEqual(plainWithKey.status, 0, plainWithKey.standardError)
        let verifyPlain = try Questbak.run(["verify", plain.path, "--passphrase-file", try passphraseFile("unused").path])
        XCTAssertEqual(verifyPlain.status, 0, verifyPlain.standardError)
    }

    func runAgeOnATerminal(_ arguments: [String], passphrase: String) throws -> CommandResult {
        try AgeOnATerminal.run(arguments, passphrase: passphrase, in: directory.url)
    }

    func testAPassphraseArchiveOpensInBothDirectionsAndExportVerifiesIt() throws {
        let passphrase = "correct horse battery staple"
        let file = try passphraseFile(passphrase)
        // questbak encrypts (and proves the archive restores, decrypting it as it reads), age decrypts.
        let encrypted = directory.path("backup.qbak.age")
        let export = try Questbak.run(["export", store.path, "-o", encrypted.path, "--passphrase-file", file.path, "--verify"])
        XCTAssertEqual(export.status, 0, export.standardError)
        XCTAssertTrue(export.standardOutput.contains("encrypted: age, passphrase"), export.standardOutput)
        XCTAssertTrue(export.standardOutput.contains("verified:"), export.standardOutput)
        let plain = directory.path("plain.qbak")
        let age = try runAgeOnATerminal(["age", "-d", "-o", plain.path, encrypted.path], passphrase: passphrase)
        XCTAssertEqual(age.status, 0, age.standardError)
        try assertAgeTarZstdAndJqOpen(plain)
        let restored = directory.path("restored/default.store")
        let importing = try Questbak.run(["import", encrypted.path, "--passphrase-file", file.path, "--into", restored.path])
        XCTAssertEqual(importing.status, 0, importing.standardError)
        XCTAssertEqual(try Questbak.run(["diff", store.path, restored.path]).status, 0)
        // age encrypts, questbak imports.
        let byAge = directory.path("by-age.qbak.age")
        let encrypting = try runAgeOnATerminal(["age", "-p", "-o", byAge.path, plain.path], passphrase: passphrase)
        XCTAssertEqual(encrypting.status, 0, encrypting.standardError)
        let fromAge = directory.path("from-age/default.store")
        let imported = try Questbak.run(["import", byAge.path, "--passphrase-file", file.path, "--into", fromAge.path])
        XCTAssertEqual(imported.status, 0, imported.standardError)
        XCTAssertEqual(try Questbak.run(["diff", store.path, fromAge.path]).status, 0)
    }

    func testExportVerifyWithRecipientsAddsNoStanzaAndLeavesNothingOnFailure() throws {
        let (key, recipient) = try keygen("key.txt")
        let encrypted = directory.path("backup.qbak.age")
        let export = try Questbak.run(["export", store.path, "-o", encrypted.path, "--recipient", recipient, "--verify"])
        XCTAssertEqual(export.status, 0, export.standardError)
        XCTAssertTrue(export.standardOutput.contains("verified: restored in a scratch folder"), export.standardOutput)
        let header = String(decoding: try Data(contentsOf: encrypted).prefix(400), as: UTF8.self)
        XCTAssertEqual(header.components(separatedBy: "\n-> X25519 ").count - 1, 1, "one stanza, the recipient's: \(header)")
        let plain = directory.path("plain.qbak")
        XCTAssertEqual(try Questbak.runTool(["age", "-d", "-i", key.path, "-o", plain.path, encrypted.path]).status, 0)
        try assertAgeTarZstdAndJqOpen(plain)
        // A failing export (a store that is not there, a recipients file that is not there)
        // leaves no file, temporary or final.
        let before = try DirectoryState(of: directory.url)
        let missingStore = try Questbak.run([
            "export", directory.path("nothing.store").path, "-o", directory.path("x.age").path, "--recipient", recipient,
        ])
        XCTAssertEqual(missingStore.status, 66, missingStore.standardError)
        let missingRecipients = try Questbak.run([
            "export", store.path, "-o", directory.path("y.age").path, "--recipients-file", directory.path("none.txt").path,
        ])
        XCTAssertEqual(missingRecipients.status, 66, missingRecipients.standardError)
        XCTAssertEqual(try DirectoryState(of: directory.url), before)
    }

    func testUsageErrorsForKeysThatCannotBeCombined() throws {
        let (key, recipient) = try keygen("key.txt")
        let file = try passphraseFile("a passphrase")
        for (command, words) in [
            (
                ["export", store.path, "-o", directory.path("a.age").path, "--recipient", recipient, "--passphrase-file", file.path],
                "only recipient"
            ),
            (["export", store.path, "-o", directory.path("a.age").path, "--recipient", "age1notakey"], "--recipient must be"),
            (["import", "x.age", "--validate", "--identity", key.path, "--passphrase-file", file.path], "not both"),
        ] {
            let result = try Questbak.run(command)
            XCTAssertEqual(result.status, 64, "\(command): \(result.standardError)")
            XCTAssertTrue(result.standardError.contains(words), "\(command): \(result.standardError)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("a.age").path))
    }

    /// Each way an encrypted archive can fail to open: 65, a sentence, nothing written, for
    /// import (into a store), verify and inspect alike.
    func testEveryDecryptionErrorIs65WithASentenceAndWritesNothing() throws {
        let (key, recipient) = try keygen("key.txt")
        let (stranger, _) = try keygen("stranger.txt")
        let passphrase = try passphraseFile("a passphrase")
        // A store whose archive is more than one 64 KiB chunk, so it can be cut between chunks.
        let store = directory.path("big/default.store")
        try FileManager.default.createDirectory(at: store.deletingLastPathComponent(), withIntermediateDirectories: true)
        let generator = Questbak.executable.deletingLastPathComponent().appendingPathComponent("questbak-fixtures")
        XCTAssertEqual(try Questbak.runProcess(generator.path, ["--bulk", "2000", store.path]), 0)
        let toKey = directory.path("to-key.age")
        XCTAssertEqual(try Questbak.run(["export", store.path, "-o", toKey.path, "--recipient", recipient, "-q"]).status, 0)
        // The passphrase archive at a small scrypt work factor: the wrong passphrase is tried by
        // three commands, and each derivation at age's 18 is 3 s of a debug build's CPU. What
        // each command says does not depend on the factor; export's own passphrase archive, at
        // 18, is the round trip's (testAPassphraseArchiveOpensInBothDirectionsAndExportVerifiesIt).
        let plain = directory.path("plain.qbak")
        XCTAssertEqual(try Questbak.run(["export", store.path, "-o", plain.path, "-q"]).status, 0)
        let toPassphrase = directory.path("to-passphrase.age")
        try encrypt(plain, to: toPassphrase, passphrase: "a passphrase", workFactor: 10)
        XCTAssertTrue(try String(decoding: Data(contentsOf: toPassphrase).prefix(80), as: UTF8.self).contains("-> scrypt "))
        let bytes = try Data(contentsOf: toKey)
        let truncated = directory.path("truncated.age")
        try bytes.prefix(bytes.count - 100).write(to: truncated)
        let cutAtAChunk = directory.path("cut-at-a-chunk.age")
        let headerEnd = try XCTUnwrap(bytes.range(of: Data("\n--- ".utf8))).upperBound + 43 + 1 + 16
        XCTAssertGreaterThan(bytes.count, headerEnd + 65_536 + 16 + 100, "more than one chunk")
        try bytes.prefix(headerEnd + 65_536 + 16).write(to: cutAtAChunk)
        var headerBytes = bytes
        let macStart = try XCTUnwrap(bytes.range(of: Data("\n--- ".utf8))).upperBound
        headerBytes[macStart + 5] = headerBytes[macStart + 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let tamperedHeader = directory.path("tampered-header.age")
        try headerBytes.write(to: tamperedHeader)
        var chunkBytes = bytes
        chunkBytes[chunkBytes.count - 30] ^= 0x01
        let tamperedChunk = directory.path("tampered-chunk.age")
        try chunkBytes.write(to: tamperedChunk)

        let cases: [(archive: URL, keys: [String], words: String)] = [
            (toKey, ["--identity", stranger.path], "none of the 1 identity given opens it"),
            (truncated, ["--identity", key.path], "cut short"),
            (cutAtAChunk, ["--identity", key.path], "cut short"),
            (tamperedHeader, ["--identity", key.path], "header"),
            (tamperedChunk, ["--identity", key.path], "fails authentication"),
            (toKey, [], "an age-encrypted archive"),
            (toPassphrase, ["--identity", key.path], "encrypted with a passphrase"),
            (toKey, ["--passphrase-file", passphrase.path], "opens with an identity file, not a passphrase"),
            (toPassphrase, ["--passphrase-file", try passphraseFile("the wrong one", name: "wrong.txt").path], "wrong passphrase"),
        ]
        let before = try DirectoryState(of: directory.url)
        for (archive, keys, words) in cases {
            for command in [
                ["import", archive.path, "--into", directory.path("restored/default.store").path], ["verify", archive.path],
                ["inspect", archive.path],
            ] {
                let result = try Questbak.run(command + keys)
                XCTAssertEqual(result.status, 65, "\(command + keys): \(result.standardError)")
                XCTAssertTrue(result.standardError.contains(words), "\(command + keys): \(result.standardError)")
                XCTAssertFalse(result.standardError.contains("tar archive"), "\(command + keys): \(result.standardError)")
            }
        }
        XCTAssertEqual(try DirectoryState(of: directory.url), before)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("restored").path))
    }

    /// No archive byte reaches the disk in the clear during an encrypted export, its staging
    /// included: every byte the export writes below a recorded folder (its temporary folder there
    /// too) is searched for the archive's JSON, which only an archive member holds. Without
    /// encryption the same search finds it, so the search can fail.
    func testAnEncryptedExportWritesNoArchiveByteInTheClear() throws {
        let (_, recipient) = try keygen("key.txt")
        let needle = Array(#""displayName":"#.utf8)
        func written(_ encrypted: Bool) throws -> [UInt8] {
            let recorded = directory.path("recorded-\(encrypted)")
            try FileManager.default.createDirectory(at: recorded.appendingPathComponent("tmp"), withIntermediateDirectories: true)
            let (recording, result) = try CrashRecorder.record(
                ["export", store.path, "-o", recorded.appendingPathComponent("backup.qbak").path, "--compression", "none"]
                    + (encrypted ? ["--recipient", recipient] : []),
                directory: recorded, log: directory.path("log-\(encrypted)"),
                environment: ["TMPDIR": recorded.appendingPathComponent("tmp").path])
            XCTAssertEqual(result.status, 0, result.standardError)
            return recording.data
        }
        func contains(_ bytes: [UInt8]) -> Bool {
            bytes.indices.dropLast(needle.count).contains { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
        }
        XCTAssertTrue(contains(try written(false)), "a plain export writes its members in the clear")
        XCTAssertFalse(contains(try written(true)), "an encrypted export wrote archive bytes in the clear")
    }
}
