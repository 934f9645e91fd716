import Foundation
import QuestBakKit
import QuestBakTestSupport
import XCTest

/// questbak's age encryption (Archive/Age): round trips, interoperability with Debian's `age`
/// and `age-keygen` in both directions, and a typed error for every way a file or key is wrong.
final class AgeEncryptionTests: XCTestCase {
    var directory: TemporaryTestDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryTestDirectory("questbak-age")
        XCTAssertEqual(try Questbak.runTool(["age", "--version"]).status, 0, "the age package is needed: apt-get install age (make deps)")
    }

    /// Bytes no two chunks share, so a reordered chunk would show.
    func plaintext(_ count: Int, seed: UInt64 = 1) -> Data {
        var generator = seed
        return Data(
            (0..<count).map { _ in
                generator = generator &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: generator >> 33)
            })
    }

    /// Encrypts `data` written in pieces of `piece` bytes, into a file.
    func encrypt(_ data: Data, to recipients: [AgeRecipient], piece: Int = 10_000, name: String = "out.age") throws -> URL {
        var output = Data()
        let writer = try AgeEncryptingWriter(recipients: recipients) { output.append(contentsOf: $0) }
        var offset = 0
        while offset < data.count {
            try writer.write(data[offset..<min(offset + piece, data.count)])
            offset += piece
        }
        try writer.finish()
        let url = directory.path(name)
        try output.write(to: url)
        return url
    }

    func decrypt(_ url: URL, with identities: [AgeIdentity]) throws -> Data {
        let reader = try AgeDecryptingReader(contentsOf: url, identities: identities)
        var output = Data()
        while let chunk = try reader.nextChunk() {
            XCTAssertLessThanOrEqual(chunk.count, AgeFormat.chunkSize)
            output += chunk
        }
        return output
    }

    func assertAgeError(
        _ expression: @autoclosure () throws -> Any, _ check: (AgeError) -> Bool, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try expression(), file: file, line: line) { error in
            guard let error = error as? AgeError else { return XCTFail("not an AgeError: \(error)", file: file, line: line) }
            XCTAssertTrue(check(error), "unexpected error: \(error)", file: file, line: line)
            XCTAssertFalse(error.localizedDescription.isEmpty, file: file, line: line)
        }
    }

    // MARK: keys

    func testTheSpecsExampleIdentityGivesItsExampleRecipient() throws {
        // c2sp.org/age's X25519 examples.
        let identity = try XCTUnwrap(AgeX25519Identity("AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX"))
        XCTAssertEqual(identity.recipient.encoded, "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj")
        XCTAssertEqual(identity.encoded, "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX")
        XCTAssertNotNil(AgeX25519Identity("age-secret-key-1gfpyysjzgfpyysjzgfpyysjzgfpyysjzgfpyysjzgfpyysjzgfpq4egaex"))
        // Mixed case, one character changed, a recipient given as an identity: refused.
        XCTAssertNil(AgeX25519Identity("AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEx"))
        XCTAssertNil(AgeX25519Identity("AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEQ"))
        XCTAssertNil(AgeX25519Identity("age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj"))
        XCTAssertNil(AgeX25519Recipient("age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwq"))
        XCTAssertNil(AgeX25519Recipient("AGE1ZVKYG2LQZRAA2LNJVQEJ32NKUU0UES2S82HZRYE869XEEXVN73EQUNUJWJ"))
    }

    func testIdentitiesAndRecipientsAgreeWithAgeKeygen() throws {
        for _ in 0..<3 {
            let identity = AgeX25519Identity.generate()
            let file = directory.path("key-\(UUID().uuidString).txt")
            try identity.identityFileText(created: Date()).write(to: file, atomically: true, encoding: .utf8)
            let result = try Questbak.runTool(["age-keygen", "-y", file.path])
            XCTAssertEqual(result.status, 0, result.standardError)
            XCTAssertEqual(result.standardOutput, identity.recipient.encoded + "\n")
        }
        let keygen = directory.path("age-keygen.txt")
        XCTAssertEqual(try Questbak.runTool(["age-keygen", "-o", keygen.path]).status, 0)
        let identities = try AgeKeyFile.identities(at: keygen)
        XCTAssertEqual(identities.count, 1)
        let text = try String(contentsOf: keygen, encoding: .utf8)
        XCTAssertTrue(text.contains("# public key: \(identities[0].recipient.encoded)\n"), text)
    }

    func testKeyFilesAreReadAsTheAgeToolsWriteThemAndBadLinesAreNamed() throws {
        let first = AgeX25519Identity.generate()
        let second = AgeX25519Identity.generate()
        let identities = directory.path("identities.txt")
        try
            ("# created: 2026-01-01T00:00:00Z\r\n# public key: \(first.recipient.encoded)\r\n\(first.encoded)\r\n\n# another\n\(second.encoded)\n")
            .write(to: identities, atomically: true, encoding: .utf8)
        XCTAssertEqual(try AgeKeyFile.identities(at: identities).map(\.recipient), [first.recipient, second.recipient])

        let recipients = directory.path("recipients.txt")
        try "# the team\n\(first.recipient.encoded)\n\n\(second.recipient.encoded)".write(to: recipients, atomically: true, encoding: .utf8)
        XCTAssertEqual(try AgeKeyFile.recipients(at: recipients), [first.recipient, second.recipient])

        let passphrase = directory.path("passphrase.txt")
        try "correct horse battery staple\nsecond line ignored\n".write(to: passphrase, atomically: true, encoding: .utf8)
        XCTAssertEqual(try AgeKeyFile.passphrase(at: passphrase), Data("correct horse battery staple".utf8))
        try "  spaces kept \r\n".write(to: passphrase, atomically: true, encoding: .utf8)
        XCTAssertEqual(try AgeKeyFile.passphrase(at: passphrase), Data("  spaces kept ".utf8))

        let damaged = directory.path("damaged.txt")
        // The last character changed (to another one: a key that ends in Q made this test pass
        // an undamaged key one run in 32).
        let changed: Character = first.encoded.last == "Q" ? "P" : "Q"
        try "# comment\n\(first.encoded.dropLast())\(changed)\n".write(to: damaged, atomically: true, encoding: .utf8)
        assertAgeError(try AgeKeyFile.identities(at: damaged)) { error in
            guard case .invalidKey(let path, 2, let reason) = error else { return false }
            // The message names the line but never prints a secret key.
            return path == damaged.path && reason.contains("damaged") && !error.localizedDescription.contains(first.encoded.dropLast(4))
        }
        try "\(first.recipient.encoded)\n".write(to: damaged, atomically: true, encoding: .utf8)
        assertAgeError(try AgeKeyFile.identities(at: damaged)) { if case .invalidKey(_, 1, _) = $0 { true } else { false } }
        try "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBogus me@host\n".write(to: damaged, atomically: true, encoding: .utf8)
        assertAgeError(try AgeKeyFile.recipients(at: damaged)) { $0.localizedDescription.contains("SSH") }
        try "# only comments\n\n".write(to: damaged, atomically: true, encoding: .utf8)
        assertAgeError(try AgeKeyFile.identities(at: damaged)) { if case .noKeys = $0 { true } else { false } }
        assertAgeError(try AgeKeyFile.recipients(at: damaged)) { if case .noKeys = $0 { true } else { false } }
        try "\nsecret on the second line\n".write(to: damaged, atomically: true, encoding: .utf8)
        assertAgeError(try AgeKeyFile.passphrase(at: damaged)) { if case .noKeys = $0 { true } else { false } }
        assertAgeError(try AgeKeyFile.identities(at: directory.path("missing.txt"))) {
            if case .keyFileUnreadable(_, let reason) = $0 { reason.contains("No such file") } else { false }
        }
    }

    // MARK: round trips

    func testEverySizeAroundTheChunkBoundariesRoundTrips() throws {
        let identity = AgeX25519Identity.generate()
        let chunk = AgeFormat.chunkSize
        for size in [0, 1, 100, chunk - 1, chunk, chunk + 1, 2 * chunk, 3 * chunk + 7] {
            for piece in [1000, chunk, 3 * chunk] {
                let data = plaintext(size, seed: UInt64(size))
                let file = try encrypt(data, to: [.x25519(identity.recipient)], piece: piece)
                let expectedChunks = max(1, (size + chunk - 1) / chunk)
                let headerAndNonce = try Data(contentsOf: file).count - size - 16 * expectedChunks
                XCTAssertGreaterThan(headerAndNonce, 100, "size \(size): one tag per chunk, no empty final chunk")
                XCTAssertEqual(try decrypt(file, with: [.x25519(identity)]), data, "size \(size), pieces of \(piece)")
                let reader = try AgeDecryptingReader(contentsOf: file, identities: [.x25519(identity)])
                var buffer = [UInt8](repeating: 0, count: 777)
                var read = Data()
                while case let count = try buffer.withUnsafeMutableBytes({ try reader.read(into: $0) }), count > 0 {
                    read += buffer[0..<count]
                }
                XCTAssertEqual(read, data, "size \(size) through read(into:)")
            }
        }
    }

    func testAFileDescriptorSinkAndSourceStreamALargeFile() throws {
        let identity = AgeX25519Identity.generate()
        let url = directory.path("large.age")
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        let writer = try AgeEncryptingWriter(recipients: [.x25519(identity.recipient)], fileDescriptor: descriptor, file: url.path)
        let block = plaintext(1_000_003)
        var digest = Data()
        for _ in 0..<20 { try writer.write(block) }
        try writer.finish()
        close(descriptor)
        let input = open(url.path, O_RDONLY)
        defer { close(input) }
        let reader = try AgeDecryptingReader(fileDescriptor: input, file: url.path, identities: [.x25519(identity)])
        var total = 0
        while let chunk = try reader.nextChunk() {
            if total < block.count { digest += chunk.prefix(block.count - total) }
            total += chunk.count
        }
        XCTAssertEqual(total, 20 * block.count)
        XCTAssertEqual(digest, block)
    }

    // MARK: interoperability with age

    func testAgeEncryptsToAQuestbakRecipientAndQuestbakDecrypts() throws {
        let identity = AgeX25519Identity.generate()
        for size in [0, 5, AgeFormat.chunkSize, 2 * AgeFormat.chunkSize + 3] {
            let plain = directory.path("plain-\(size)")
            try plaintext(size, seed: 9).write(to: plain)
            let encrypted = directory.path("plain-\(size).age")
            let result = try Questbak.runTool(["age", "-r", identity.recipient.encoded, "-o", encrypted.path, plain.path])
            XCTAssertEqual(result.status, 0, result.standardError)
            XCTAssertEqual(try decrypt(encrypted, with: [.x25519(identity)]), try Data(contentsOf: plain), "size \(size)")
        }
    }

    func testQuestbakEncryptsAndAgeDecryptsWithAQuestbakOrAgeKeygenIdentity() throws {
        let questbakIdentity = AgeX25519Identity.generate()
        let questbakKey = directory.path("questbak-key.txt")
        try questbakIdentity.identityFileText(created: Date()).write(to: questbakKey, atomically: true, encoding: .utf8)
        let keygenKey = directory.path("keygen-key.txt")
        XCTAssertEqual(try Questbak.runTool(["age-keygen", "-o", keygenKey.path]).status, 0)
        let keygenIdentity = try XCTUnwrap(try AgeKeyFile.identities(at: keygenKey).first)

        for (key, recipient) in [(questbakKey, questbakIdentity.recipient), (keygenKey, keygenIdentity.recipient)] {
            for size in [0, 1, AgeFormat.chunkSize, 3 * AgeFormat.chunkSize - 1] {
                let data = plaintext(size, seed: 4)
                let file = try encrypt(data, to: [.x25519(recipient)])
                let result = try Questbak.runTool(["age", "-d", "-i", key.path, file.path])
                XCTAssertEqual(result.status, 0, result.standardError)
                XCTAssertEqual(result.outputData, data, "size \(size), key \(key.lastPathComponent)")
            }
        }
        // age's file from age-keygen's key, opened by questbak with that key file.
        let plain = directory.path("plain")
        try plaintext(70_000).write(to: plain)
        let encrypted = directory.path("by-age.age")
        XCTAssertEqual(
            try Questbak.runTool(["age", "-R", recipientsFile([keygenIdentity.recipient]).path, "-o", encrypted.path, plain.path]).status, 0
        )
        XCTAssertEqual(try decrypt(encrypted, with: try AgeKeyFile.identities(at: keygenKey).map { .x25519($0) }), plaintext(70_000))
    }

    func recipientsFile(_ recipients: [AgeX25519Recipient]) throws -> URL {
        let url = directory.path("recipients-\(UUID().uuidString).txt")
        try ("# recipients\n" + recipients.map { $0.encoded + "\n" }.joined()).write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    func testMultipleRecipientsEachOpenTheFileInBothDirections() throws {
        let identities = (0..<3).map { _ in AgeX25519Identity.generate() }
        let data = plaintext(150_000)
        let file = try encrypt(data, to: identities.map { .x25519($0.recipient) })
        for identity in identities {
            let key = directory.path("key-\(UUID().uuidString).txt")
            try identity.identityFileText(created: Date()).write(to: key, atomically: true, encoding: .utf8)
            let result = try Questbak.runTool(["age", "-d", "-i", key.path, file.path])
            XCTAssertEqual(result.status, 0, result.standardError)
            XCTAssertEqual(result.outputData, data)
        }
        let plain = directory.path("plain")
        try data.write(to: plain)
        let byAge = directory.path("by-age.age")
        var arguments = ["age", "-o", byAge.path]
        for identity in identities { arguments += ["-r", identity.recipient.encoded] }
        XCTAssertEqual(try Questbak.runTool(arguments + [plain.path]).status, 0)
        for identity in identities { XCTAssertEqual(try decrypt(byAge, with: [.x25519(identity)]), data) }
        // An identity file whose second key is the one that matches.
        let stranger = AgeX25519Identity.generate()
        XCTAssertEqual(try decrypt(byAge, with: [.x25519(stranger), .x25519(identities[2])]), data)
    }

    func runAgeOnATerminal(_ arguments: [String], passphrase: String) throws -> CommandResult {
        try AgeOnATerminal.run(arguments, passphrase: passphrase, in: directory.url)
    }

    func testAPassphraseFileOpensInBothDirections() throws {
        let passphrase = "correct horse battery staple"
        let data = plaintext(100_000)
        // questbak encrypts (a small work factor, to keep the test fast), age decrypts.
        let file = try encrypt(data, to: [.passphrase(Data(passphrase.utf8), workFactor: 12)])
        let out = directory.path("from-questbak")
        let result = try runAgeOnATerminal(["age", "-d", "-o", out.path, file.path], passphrase: passphrase)
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(try Data(contentsOf: out), data)
        // age encrypts (its own work factor, 18), questbak decrypts.
        let plain = directory.path("plain")
        try data.write(to: plain)
        let byAge = directory.path("by-age.age")
        let encrypting = try runAgeOnATerminal(["age", "-p", "-o", byAge.path, plain.path], passphrase: passphrase)
        XCTAssertEqual(encrypting.status, 0, encrypting.standardError)
        XCTAssertTrue(try String(decoding: Data(contentsOf: byAge).prefix(60), as: UTF8.self).contains("-> scrypt "))
        XCTAssertEqual(try decrypt(byAge, with: [.passphrase(Data(passphrase.utf8))]), data)
        assertAgeError(try self.decrypt(byAge, with: [.passphrase(Data("Correct horse battery staple".utf8))])) {
            $0 == .wrongPassphrase(file: byAge.path)
        }
        assertAgeError(try self.decrypt(byAge, with: [.passphrase(Data(passphrase.utf8), maximumWorkFactor: 16)])) {
            $0 == .workFactorTooLarge(file: byAge.path, found: 18, limit: 16)
        }
    }

    // MARK: errors

    func testTheWrongKeyOrKindOfKeyIsRefusedWithItsOwnError() throws {
        let identity = AgeX25519Identity.generate()
        let stranger = AgeX25519Identity.generate()
        let data = plaintext(1000)
        let toKey = try encrypt(data, to: [.x25519(identity.recipient)], name: "to-key.age")
        let toPassphrase = try encrypt(data, to: [.passphrase(Data("secret".utf8), workFactor: 10)], name: "to-passphrase.age")

        assertAgeError(try self.decrypt(toKey, with: [.x25519(stranger)])) {
            $0 == .noMatchingIdentity(file: toKey.path, identities: 1, stanzas: 1)
        }
        assertAgeError(try self.decrypt(toKey, with: [.passphrase(Data("secret".utf8))])) { $0 == .identityRequired(file: toKey.path) }
        assertAgeError(try self.decrypt(toPassphrase, with: [.x25519(identity)])) { $0 == .passphraseRequired(file: toPassphrase.path) }
        assertAgeError(try self.decrypt(toPassphrase, with: [.passphrase(Data("Secret".utf8))])) {
            $0 == .wrongPassphrase(file: toPassphrase.path)
        }
        assertAgeError(try self.decrypt(toPassphrase, with: [.passphrase(Data("secret".utf8), maximumWorkFactor: 9)])) {
            $0 == .workFactorTooLarge(file: toPassphrase.path, found: 10, limit: 9)
        }
        assertAgeError(try self.decrypt(toPassphrase, with: [.passphrase(Data())])) { $0 == .wrongPassphrase(file: toPassphrase.path) }
        XCTAssertEqual(try decrypt(toPassphrase, with: [.passphrase(Data("secret".utf8))]), data)

        // A plain file, and an armored age file.
        let plain = directory.path("plain.qbak")
        try data.write(to: plain)
        assertAgeError(try self.decrypt(plain, with: [.x25519(identity)])) { $0 == .notEncrypted(file: plain.path) }
        XCTAssertFalse(AgeFormat.isEncrypted(prefix: data))
        XCTAssertTrue(AgeFormat.isEncrypted(prefix: try Data(contentsOf: toKey)))
        let armored = directory.path("armored.age")
        XCTAssertEqual(try Questbak.runTool(["age", "-a", "-r", identity.recipient.encoded, "-o", armored.path, plain.path]).status, 0)
        assertAgeError(try self.decrypt(armored, with: [.x25519(identity)])) { $0 == .armored(file: armored.path) }

        // Recipients that cannot be combined.
        assertAgeError(try AgeEncryptingWriter(recipients: []) { _ in }) { if case .invalidRecipients = $0 { true } else { false } }
        assertAgeError(try AgeEncryptingWriter(recipients: [.x25519(identity.recipient), .passphrase(Data("x".utf8))]) { _ in }) {
            if case .invalidRecipients = $0 { true } else { false }
        }
        assertAgeError(try AgeEncryptingWriter(recipients: [.passphrase(Data())]) { _ in }) {
            if case .invalidRecipients = $0 { true } else { false }
        }
    }

    func testATruncatedFileIsAnErrorAtEveryLength() throws {
        let identity = AgeX25519Identity.generate()
        let data = plaintext(2 * AgeFormat.chunkSize + 500)
        let bytes = try Data(contentsOf: try encrypt(data, to: [.x25519(identity.recipient)]))
        let headerEnd = try XCTUnwrap(bytes.range(of: Data("\n--- ".utf8))).upperBound + 44
        let sealed = AgeFormat.chunkSize + 16
        let payload = headerEnd + 16
        let cuts = [
            0, 10, 30, headerEnd - 20, headerEnd, headerEnd + 8, payload, payload + 100, payload + sealed, payload + sealed + 1,
            payload + 2 * sealed, bytes.count - 1,
        ]
        for cut in cuts {
            let file = directory.path("cut-\(cut).age")
            try bytes.prefix(cut).write(to: file)
            var released = Data()
            XCTAssertThrowsError(
                try {
                    let reader = try AgeDecryptingReader(contentsOf: file, identities: [.x25519(identity)])
                    while let chunk = try reader.nextChunk() { released += chunk }
                }(), "cut at \(cut)"
            ) { error in
                guard let error = error as? AgeError else { return XCTFail("\(error)") }
                switch error {
                case .truncated, .damagedChunk: break
                case .notEncrypted where cut == 0: break
                default: XCTFail("cut at \(cut): \(error)")
                }
            }
            // Only whole, authenticated chunks were released, and never the last one.
            XCTAssertTrue(
                data.starts(with: released) && released.count % AgeFormat.chunkSize == 0 && released.count < data.count, "cut at \(cut)")
        }
        // Cut at a chunk boundary, the message says so plainly.
        let boundary = directory.path("boundary.age")
        try bytes.prefix(payload + sealed).write(to: boundary)
        assertAgeError(try self.decrypt(boundary, with: [.x25519(identity)])) {
            $0.localizedDescription.contains("cut short") && { if case .truncated = $0 { true } else { false } }($0)
        }
    }

    func testEveryChangedBitInTheHeaderOrNonceAndAcrossThePayloadIsATypedError() throws {
        let identities = [AgeX25519Identity.generate(), AgeX25519Identity.generate()]
        let data = plaintext(AgeFormat.chunkSize + 4000)
        let bytes = try Data(contentsOf: try encrypt(data, to: identities.map { .x25519($0.recipient) }))
        let payload = try XCTUnwrap(bytes.range(of: Data("\n--- ".utf8))).upperBound + 44 + 16
        let file = directory.path("mutant.age")
        var positions = Array(0..<payload)
        positions += stride(from: payload, to: bytes.count, by: 251)
        positions.append(bytes.count - 1)
        for index in positions {
            for mask: UInt8 in [0x01, 0x80] {
                var mutant = bytes
                mutant[index] ^= mask
                try mutant.write(to: file)
                XCTAssertThrowsError(try decrypt(file, with: [.x25519(identities[1])]), "byte \(index) ^ \(mask)") { error in
                    XCTAssertTrue(error is AgeError, "byte \(index) ^ \(mask): \(error)")
                }
            }
        }
    }

    func testATamperedHeaderOrChunkIsRefused() throws {
        let identity = AgeX25519Identity.generate()
        let data = plaintext(3 * AgeFormat.chunkSize)
        let bytes = try Data(contentsOf: try encrypt(data, to: [.x25519(identity.recipient)]))
        let macStart = try XCTUnwrap(bytes.range(of: Data("\n--- ".utf8))).upperBound
        let headerEnd = macStart + 44
        func tampered(_ index: Int, _ name: String) throws -> URL {
            var copy = bytes
            // Swap one base64 letter for another, so the header stays well formed.
            copy[index] = copy[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            let url = directory.path(name)
            try copy.write(to: url)
            return url
        }
        // The MAC itself, and the stanza's share: the MAC no longer matches, or the key no longer opens.
        let mac = try tampered(macStart + 5, "mac.age")
        assertAgeError(try self.decrypt(mac, with: [.x25519(identity)])) { $0 == .headerAuthenticationFailed(file: mac.path) }
        let share = try tampered(35, "share.age")
        assertAgeError(try self.decrypt(share, with: [.x25519(identity)])) {
            if case .noMatchingIdentity = $0 { true } else if case .malformedHeader = $0 { true } else { false }
        }
        // A stanza added by someone else does not carry the MAC over.
        var extra = bytes
        let other = try Data(
            contentsOf: try encrypt(data.prefix(10), to: [.x25519(AgeX25519Identity.generate().recipient)], name: "other.age"))
        let otherStanza = other[other.range(of: Data("-> ".utf8))!.lowerBound..<other.range(of: Data("\n--- ".utf8))!.lowerBound + 1]
        extra.insert(contentsOf: otherStanza, at: bytes.range(of: Data("-> ".utf8))!.lowerBound)
        let added = directory.path("added.age")
        try extra.write(to: added)
        assertAgeError(try self.decrypt(added, with: [.x25519(identity)])) { $0 == .headerAuthenticationFailed(file: added.path) }
        // A malformed header: a stanza line with two spaces.
        var malformed = bytes
        malformed.insert(UInt8(ascii: " "), at: bytes.range(of: Data("-> X25519".utf8))!.upperBound)
        let spaced = directory.path("spaced.age")
        try malformed.write(to: spaced)
        assertAgeError(try self.decrypt(spaced, with: [.x25519(identity)])) { if case .malformedHeader = $0 { true } else { false } }

        // One byte of the second chunk: the first chunk is released, then the error names chunk 1.
        var chunk = bytes
        chunk[headerEnd + 16 + AgeFormat.chunkSize + 16 + 100] ^= 1
        let flipped = directory.path("chunk.age")
        try chunk.write(to: flipped)
        let reader = try AgeDecryptingReader(contentsOf: flipped, identities: [.x25519(identity)])
        XCTAssertEqual(try reader.nextChunk(), data.prefix(AgeFormat.chunkSize))
        assertAgeError(try reader.nextChunk() as Any) { $0 == .damagedChunk(file: flipped.path, chunk: 1) }
        // Two chunks swapped.
        var swapped = bytes
        let first = headerEnd + 16
        let sealed = AgeFormat.chunkSize + 16
        swapped.replaceSubrange(
            first..<first + 2 * sealed, with: bytes[first + sealed..<first + 2 * sealed] + bytes[first..<first + sealed])
        let reordered = directory.path("reordered.age")
        try swapped.write(to: reordered)
        assertAgeError(try self.decrypt(reordered, with: [.x25519(identity)])) { $0 == .damagedChunk(file: reordered.path, chunk: 0) }
        // Bytes appended after the final chunk.
        let appended = directory.path("appended.age")
        try (bytes + Data("x".utf8)).write(to: appended)
        assertAgeError(try self.decrypt(appended, with: [.x25519(identity)])) {
            if case .damagedChunk = $0 { true } else if case .trailingData = $0 { true } else { false }
        }
        // age agrees that every one of these is damaged.
        let key = directory.path("key.txt")
        try identity.identityFileText(created: Date()).write(to: key, atomically: true, encoding: .utf8)
        for url in [mac, share, added, spaced, flipped, reordered, appended] {
            XCTAssertNotEqual(
                try Questbak.runTool(["age", "-d", "-i", key.path, "-o", "/dev/null", url.path]).status, 0, url.lastPathComponent)
        }
    }
}
